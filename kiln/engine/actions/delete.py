"""Deleting resources in reverse dependency order; stack delete.

``deletion_policy: Retain`` still shows DELETE_IN_PROGRESS/COMPLETE (as Heat does) but
leaves the physical resource alone, as it leaves one adopted with ``external_id``;
``Snapshot`` has the plugin keep a snapshot first
(``handle_snapshot_delete``, a volume's backup, a server's image), and deletes it like
``Delete`` for plugins that have nothing to snapshot.
"""

from __future__ import annotations

from typing import Any

from kiln.db.records import NewEvent
from kiln.engine.model.live_stack import LiveStack, Slot
from kiln.engine.model.states import COMPLETE, DELETE, FAILED, INIT, stack_completed
from kiln.engine.runtime import hooks
from kiln.engine.runtime.engine import Engine
from kiln.engine.runtime.runner import Persisted, is_nested, run_action
from kiln.engine.runtime.scheduler import Deadline, Outcome, traverse
from kiln.errors import KilnError


def needs_delete(slot: Slot) -> bool:
    """A resource never created, or already deleted, has nothing to delete."""
    state = slot.state
    if state.action == INIT:
        return False
    return not (state.action == DELETE and state.status == COMPLETE)


async def delete_resource(engine: Engine, stack: LiveStack, slot: Slot,
                          deadline: Deadline | None = None,
                          resume_from: Persisted | None = None) -> None:
    """``resume_from``: recovery continues a delete a dead engine had started."""
    plugin = slot.plugin
    # a resource adopted with external_id is not Heat's to delete (the HOT spec's
    # rule, and what Heat 27 does on the cloud): it is left as Retain leaves one
    retain = (slot.definition.deletion_policy == "Retain"
              or slot.definition.external_id is not None)
    snapshot = (slot.definition.deletion_policy == "Snapshot"
                and plugin.supports("snapshot_delete"))
    before = (slot.state.action, slot.state.status)

    async def handle() -> Any:
        if retain:
            return None
        if snapshot:
            return await plugin.handle_snapshot_delete(before)
        return await plugin.handle_delete()

    async def check(token: Any) -> bool:
        if retain:
            return True
        return await plugin.check_delete_complete(token)

    if resume_from is None:
        await hooks.pause(engine, stack, slot, "pre", DELETE)
    await run_action(engine.recorder, engine.poller, stack, slot, DELETE, handle, check,
                     abort_reason=deadline.reason if deadline else lambda: None,
                     resume_from=resume_from)
    await hooks.pause(engine, stack, slot, "post", DELETE)


async def delete_with_row(engine: Engine, stack: LiveStack, slot: Slot,
                          deadline: Deadline | None = None) -> None:
    """Delete the resource if it still exists, then its row."""
    if needs_delete(slot):
        await delete_resource(engine, stack, slot, deadline)
    if slot.db_id:
        await engine.store.resources.remove(slot.db_id)


async def delete_resources(engine: Engine, stack: LiveStack, *, action: str = DELETE,
                           remove_rows: bool = False,
                           deadline: Deadline | None = None) -> Outcome:
    """Delete every slot of ``stack``, dependants first."""
    graph = engine.graph(stack).reversed()

    async def visit(name: str) -> None:
        slot = stack.slots[name]
        if remove_rows:
            await delete_with_row(engine, stack, slot, deadline)
        elif needs_delete(slot):
            await delete_resource(engine, stack, slot, deadline)

    return await traverse(graph, visit, action=action, limit=engine.limit,
                          unlimited=lambda n: is_nested(stack.slots[n]),
                          deadline=deadline, cancel=None)


async def run_delete(engine: Engine, stack: LiveStack) -> None:
    """The stack row is already DELETE_IN_PROGRESS (and locked) when this starts."""
    deadline = Deadline(engine.timeout_seconds(stack))
    outcome = await delete_resources(engine, stack, deadline=deadline)
    if not outcome.ok:
        await engine.recorder.stack(stack, DELETE, FAILED, outcome.reason)
        return
    if stack.nested is not None and stack.nested.keystone_stack_users():
        try:
            await stack.nested.remove_stack_users(stack.info)
        except KilnError as exc:
            await engine.recorder.stack(stack, DELETE, FAILED,
                                        f"Error deleting stack users: {exc}")
            return
    info = stack.info
    info.action, info.status = DELETE, COMPLETE
    info.status_reason = stack_completed(DELETE)
    event = NewEvent(stack_id=info.id, resource_name=info.name,
                     resource_type="OS::Heat::Stack", resource_action=DELETE,
                     resource_status=COMPLETE, resource_status_reason=info.status_reason,
                     physical_resource_id=info.id)
    await engine.store.stacks.mark_deleted(info.id, event)
    engine.recorder.notify_stored(stack)
    engine.template_cache.discard(info.raw_template_id)
    engine.template_cache.discard(info.prev_raw_template_id)
