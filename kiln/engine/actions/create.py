"""Stack create (and the rollback that follows a failed create)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from kiln.db.records import StackValues
from kiln.engine.actions import delete as delete_action
from kiln.engine.actions import external
from kiln.engine.model import outputs
from kiln.engine.model.live_stack import LiveStack, Slot
from kiln.engine.model.states import (
    COMPLETE,
    CREATE,
    FAILED,
    IN_PROGRESS,
    ROLLBACK,
    stack_completed,
    stack_started,
)
from kiln.engine.runtime import hooks
from kiln.engine.runtime.engine import Engine
from kiln.engine.runtime.runner import Persisted, is_nested, run_action
from kiln.engine.runtime.scheduler import Deadline, traverse
from kiln.resources.base import Properties


def stored_properties(props: Any) -> dict[str, Any]:
    """What is persisted: the values in force, without the unset (None) ones (nested
    ones too), so that re-validating them later gives exactly these values again."""
    stored: dict[str, Any] = props.stored()
    return stored


def prepare(stack: LiveStack, slot: Slot, resolved: Properties | None = None) -> None:
    """Resolve and validate the slot's properties and metadata for a create.
    ``resolved``: the definition's properties as the caller already resolved them at
    this point of the walk (an update's plan made them to compare with the old ones)."""
    plugin = slot.plugin
    if slot.props_final:
        props = plugin.properties
    else:
        props = resolved if resolved is not None else plugin.make_properties(
            slot.name, stack.runtime.resolve(slot.definition.properties))
        plugin.properties = props
        plugin.validate()
    slot.state.properties_data = stored_properties(props)
    if slot.definition.metadata is not None:
        meta = stack.runtime.resolve(slot.definition.metadata)
        if isinstance(meta, dict):
            slot.state.metadata = meta


async def create_resource(engine: Engine, stack: LiveStack, slot: Slot,
                          deadline: Deadline, resume_from: Persisted | None = None, *,
                          resolved: Properties | None = None) -> None:
    """``resume_from``: recovery continues a create a dead engine had started;
    ``resolved``: see :func:`prepare`."""
    plugin = slot.plugin
    adopted = external.external_id(stack, slot.definition)
    if adopted is not None:
        await external.adopt(engine, stack, slot, adopted, deadline)
        return

    async def handle() -> Any:
        prepare(stack, slot, resolved)
        return await plugin.handle_create()

    if resume_from is None:
        await hooks.pause(engine, stack, slot, "pre", CREATE)
    await run_action(engine.recorder, engine.poller, stack, slot, CREATE, handle,
                     plugin.check_create_complete, abort_reason=deadline.reason,
                     resume_from=resume_from)
    await hooks.pause(engine, stack, slot, "post", CREATE)


#: one resource's part of a create walk: (slot, the action's deadline)
ResourceStep = Callable[[Engine, LiveStack, Slot, Deadline], Awaitable[None]]


async def run_create(engine: Engine, stack: LiveStack, *,
                     step: ResourceStep | None = None) -> None:
    """The stack row is already CREATE_IN_PROGRESS (and locked) when this starts.

    Recovery resumes a create through here with its own ``step`` (skip what is done,
    continue what has a token), so the end of a create (outputs, stack state, the
    rollback) is the same however the walk went."""
    one = step or create_resource
    if stack.info.raw_template_id:
        # reads of the stack find the template parsed, instead of parsing the stored copy
        engine.template_cache.put(stack.info.raw_template_id, stack.template)
    graph = engine.graph(stack)
    deadline = Deadline(engine.timeout_seconds(stack))

    async def visit(name: str) -> None:
        await one(engine, stack, stack.slots[name], deadline)

    outcome = await traverse(graph, visit, action=CREATE, limit=engine.limit,
                             unlimited=lambda n: is_nested(stack.slots[n]),
                             deadline=deadline, cancel=engine.cancels.get(stack.info.id))
    values: StackValues = {"outputs": outputs.resolve_all(stack)}
    if outcome.ok:
        await engine.recorder.stack(stack, CREATE, COMPLETE, stack_completed(CREATE),
                                    extra=values)
        return
    failed = engine.recorder.stack(stack, CREATE, FAILED, outcome.reason, extra=values)
    if not stack.info.disable_rollback and not outcome.cancelled:
        await rollback_create(engine, stack, after=failed)
    else:
        await failed


async def rollback_create(engine: Engine, stack: LiveStack,
                          after: asyncio.Future[None] | None = None) -> None:
    """Heat's create rollback: delete everything the failed create made. ``after``: the
    failure's transition, queued in this same turn, so the failure and
    ROLLBACK_IN_PROGRESS are one write (no reader sees a CREATE_FAILED about to roll
    back)."""
    started = engine.recorder.stack(stack, ROLLBACK, IN_PROGRESS, stack_started(ROLLBACK))
    if after is not None:
        await after
    await started
    outcome = await delete_action.delete_resources(engine, stack, remove_rows=True)
    if outcome.ok:
        await engine.recorder.stack(stack, ROLLBACK, COMPLETE, stack_completed(ROLLBACK),
                                    extra={"outputs": None})
    else:
        await engine.recorder.stack(stack, ROLLBACK, FAILED, outcome.reason)
