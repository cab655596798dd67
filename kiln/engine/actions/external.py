"""Resources taken over from an ``external_id`` instead of created.

A resource whose definition names ``external_id`` is not created: the engine adopts the
physical resource of that id (action ADOPT, the plugin's ``handle_adopt``) and then checks
it (action CHECK), so a created stack shows it ``CHECK_COMPLETE`` with the external id as
its physical id, as Heat 27 does. An update never acts on such a resource, and Heat
refuses to add, change or remove the id of an existing resource: the update fails with
``NotSupported`` and the resource keeps its state. A resource an IMPORT change set
adopted into a CFN template's stack is the exception: its ``ExternalId`` is Kiln's mark,
which a user's CFN template never carries (Heat ignores the key there), so an update
without it updates the resource as any other, as CloudFormation does after an import.
"""

from __future__ import annotations

from typing import Any

from kiln.engine.actions.lifecycle import check_one
from kiln.engine.model.live_stack import LiveStack, Slot
from kiln.engine.model.states import ADOPT, UPDATE
from kiln.engine.runtime.engine import Engine
from kiln.engine.runtime.runner import ActionFailed, run_action
from kiln.engine.runtime.scheduler import Deadline
from kiln.template.definitions import ResourceDefinition


def external_id(stack: LiveStack, definition: ResourceDefinition) -> str | None:
    """The definition's external id, resolved (None or empty: not external)."""
    if definition.external_id is None:
        return None
    value: Any = stack.runtime.resolve(definition.external_id)
    return str(value) if value else None


async def adopt(engine: Engine, stack: LiveStack, slot: Slot, resource_id: str,
                deadline: Deadline) -> None:
    """Take over ``resource_id`` in place of a create, then check it."""
    plugin = slot.plugin

    async def handle() -> Any:
        return await plugin.handle_adopt({"resource_id": resource_id})

    await run_action(engine.recorder, engine.poller, stack, slot, ADOPT, handle,
                     plugin.check_adopt_complete, abort_reason=deadline.reason)
    await check_one(engine, stack, slot, deadline)


def skips_update(stack: LiveStack, slot: Slot, definition: ResourceDefinition) -> bool:
    """Whether an update leaves this existing resource alone because it is external;
    raises Heat's failure when the update would change whether (or which) it is."""
    before = external_id(stack, slot.definition)
    after = external_id(stack, definition)
    if after is None and before is not None and stack.template.version.family != "hot":
        # imported into a CFN template's stack (ExternalId is Kiln's mark there, never
        # the user's): from then on the stack's own resource, as in CloudFormation
        return False
    if before != after:
        raise ActionFailed(
            f"NotSupported: resources.{slot.name}: Update to property external_id of "
            f"{slot.name} ({slot.type_name}) is not supported.", UPDATE)
    return after is not None
