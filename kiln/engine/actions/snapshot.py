"""Stack snapshots and restore.

A snapshot runs the SNAPSHOT action over the stack (each plugin's ``handle_snapshot``,
which may leave what a restore needs in its data) and stores the stack's abandon
document (:func:`kiln.engine.actions.adopt.stack_data`) as the snapshot's ``data``. The snapshot
row is returned at once as ``CREATE IN_PROGRESS``; it becomes ``COMPLETE`` ("Stack
SNAPSHOT completed successfully") or ``FAILED`` with the stack. Restore is an update
(action RESTORE) to the snapshot's template, environment and files; afterwards each
plugin that implements restore gets its snapshot data through ``handle_restore``.
Shapes, messages and events follow the live Heat 27.
"""

from __future__ import annotations

from typing import Any

from kiln.engine.actions import update as update_action
from kiln.engine.actions.adopt import stack_data
from kiln.engine.model.live_stack import LiveStack
from kiln.engine.model.states import (
    COMPLETE,
    FAILED,
    RESTORE,
    SNAPSHOT,
    stack_completed,
)
from kiln.engine.runtime.engine import Engine
from kiln.engine.runtime.runner import ActionFailed, run_action
from kiln.engine.runtime.scheduler import Deadline, traverse


async def run_snapshot(engine: Engine, stack: LiveStack, snapshot_id: str) -> None:
    """The stack row is already SNAPSHOT_IN_PROGRESS and locked."""
    deadline = Deadline(engine.timeout_seconds(stack))

    async def visit(name: str) -> None:
        slot = stack.slots[name]
        plugin = slot.plugin
        await run_action(engine.recorder, engine.poller, stack, slot, SNAPSHOT,
                         plugin.handle_snapshot, plugin.check_snapshot_complete,
                         abort_reason=deadline.reason)

    outcome = await traverse(engine.graph(stack), visit, action=SNAPSHOT,
                             limit=engine.limit, deadline=deadline)
    status, reason = ((COMPLETE, stack_completed(SNAPSHOT)) if outcome.ok
                      else (FAILED, outcome.reason))
    # the snapshot row settles before the stack does: a client that sees the stack's
    # SNAPSHOT_COMPLETE may restore that snapshot at once. Its document shows the stack
    # as the snapshot leaves it (SNAPSHOT_COMPLETE, as Heat's), not as it is this moment
    data = {**stack_data(stack), "status": status}
    await engine.store.snapshots.settle(snapshot_id, status, reason, data)
    await engine.recorder.stack(stack, SNAPSHOT, status, reason)


async def restore_resources(engine: Engine, stack: LiveStack, data: Any) -> None:
    """Hand each plugin that restores its snapshot data (after the template update)."""
    saved = (data or {}).get("resources") or {}
    deadline = Deadline(engine.timeout_seconds(stack))

    async def visit(name: str) -> None:
        slot = stack.slots[name]
        plugin = slot.plugin
        if name not in saved or not plugin.supports(RESTORE):
            return
        await run_action(engine.recorder, engine.poller, stack, slot, RESTORE,
                         lambda: plugin.handle_restore(saved[name]),
                         plugin.check_restore_complete, abort_reason=deadline.reason)

    outcome = await traverse(engine.graph(stack), visit, action=RESTORE,
                             limit=engine.limit, deadline=deadline)
    if not outcome.ok:
        raise ActionFailed(outcome.reason)


async def run_restore(engine: Engine, current: LiveStack, new: LiveStack,
                      data: Any) -> None:
    await update_action.run_update(engine, current, new, action=RESTORE,
                                   allow_rollback=False)
    if new.info.status != COMPLETE:
        return
    restored = await engine.load(new.info.id)
    try:
        await restore_resources(engine, restored, data)
    except ActionFailed as exc:
        await engine.recorder.stack(restored, RESTORE, FAILED, exc.reason)
