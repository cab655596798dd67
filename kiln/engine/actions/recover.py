"""Taking over the work of engines that died: nothing stays IN_PROGRESS forever.

Every engine registers in the ``service`` table and heartbeats every
``[kiln_engine] heartbeat_interval`` seconds. At start, and then every
``periodic_interval`` seconds (or sooner, when ``engine_dead_after`` is shorter), it sweeps
for stacks whose lock is held by an engine silent for ``engine_dead_after`` seconds (or by
no registered engine at all), and for IN_PROGRESS stacks nobody holds (an engine that
stopped cleanly hands its unfinished stacks over this way). It steals the lock
atomically (two sweeping engines cannot both win) and resumes the stack's action.

Resource actions are resumed through the runner (:func:`kiln.engine.runtime.runner.run_action`
with the persisted token), the one way a resource action runs, so a resumed action is
handed over again, not failed, when this engine stops in turn. A resource caught inside
its handle call (no token: nobody knows whether the work happened) is FAILED with Heat's
"Worker went down during resource <ACTION>". Per stack action:

- CREATE: the create's own walk, where a done resource is skipped, one with a token
  continues, and one never started is created; a resource without a token fails the
  create (rolled back unless disabled) so the user can retry or delete.
- DELETE and a create's ROLLBACK (no previous template): deletes continue from their
  tokens, the others are (re)issued, and the action finishes as it would have.
- UPDATE, RESTORE and an update's ROLLBACK (``prev_raw_template_id`` names the template
  rolled back from): resources are settled (tokens continued, the rest FAILED) and the
  update to the stored template runs again (with ``converge`` when the update was
  admitted with it, as the stack row stores); what is already done is a no-op, a FAILED
  resource is replaced. An update that then fails still rolls back.
- SUSPEND, RESUME, CHECK, SNAPSHOT: settled, then run again over the whole stack (the
  snapshot row IN_PROGRESS is the one completed).
- anything else (ADOPT): resources IN_PROGRESS and the stack are FAILED with Heat's
  "Engine went down during stack <ACTION>", ready for a delete.

A nested-stack resource caught inside its handle has no physical id, but its child stack
may exist: recovery finds it by parent and resource name, so a rollback or a delete
removes it too.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable
from typing import Any, NoReturn

from kiln.engine.actions import create as create_action
from kiln.engine.actions import delete as delete_action
from kiln.engine.actions import lifecycle
from kiln.engine.actions import snapshot as snapshot_action
from kiln.engine.actions import update as update_action
from kiln.engine.model.live_stack import LiveStack, Slot
from kiln.engine.model.states import (
    CHECK,
    COMPLETE,
    CREATE,
    DELETE,
    FAILED,
    IN_PROGRESS,
    INIT,
    RESTORE,
    RESUME,
    ROLLBACK,
    SNAPSHOT,
    SUSPEND,
    UPDATE,
    stack_completed,
)
from kiln.engine.runtime import acting
from kiln.engine.runtime.engine import Engine
from kiln.engine.runtime.runner import (
    ActionFailed,
    Persisted,
    failure_reason,
    is_nested,
    plugin_check,
    run_action,
)
from kiln.engine.runtime.scheduler import Deadline, Outcome

LOG = logging.getLogger(__name__)

Progress = dict[str, tuple[str | None, Any]]


def worker_went_down(action: str) -> str:
    return f"Worker went down during resource {action}"


def engine_went_down(action: str) -> str:
    return f"Engine went down during stack {action}"


async def tokens(engine: Engine, stack_id: str) -> Progress:
    """``name -> (progress_action, token)`` of the stack's current rows."""
    rows = await engine.store.resources.of_stack(stack_id)
    return {r.name: (r.progress_action, r.progress) for r in sorted(rows, key=lambda r: r.id)
            if r.replaced_by is None}


def _persisted(progress: Progress, slot: Slot) -> Persisted | None:
    kind, token = progress.get(slot.name, (None, None))
    return Persisted(token) if kind is not None and kind == slot.state.action else None


async def find_children(engine: Engine, stack: LiveStack) -> None:
    """Give a nested-stack resource caught inside its handle (no physical id) the child
    stack its handle had already made, so deleting the resource deletes the child."""
    lost = {s.name: s for s in stack.slots.values()
            if is_nested(s) and s.physical_id is None and s.state.status == IN_PROGRESS}
    if not lost:
        return
    for child in await engine.store.stacks.children(stack.info.id):
        slot = lost.get(child.parent_resource_name or "")
        if slot is not None:
            slot.state.resource_id = child.id
            await engine.recorder.progress(slot, None)


async def _fail_resource(engine: Engine, stack: LiveStack, slot: Slot, action: str) -> NoReturn:
    reason = worker_went_down(action)
    await engine.recorder.resource(stack, slot, action, FAILED, reason)
    raise ActionFailed(reason)


async def _resume_one(engine: Engine, stack: LiveStack, slot: Slot, persisted: Persisted,
                      deadline: Deadline) -> None:
    """Continue a resource action (not a create) from its token, through the runner."""
    action = slot.state.action
    if action == DELETE:
        await delete_action.delete_resource(engine, stack, slot, deadline, persisted)
        return
    check = plugin_check(slot.plugin, action)

    async def no_handle() -> Any:
        raise AssertionError("a resumed action does not call its handle again")

    await run_action(engine.recorder, engine.poller, stack, slot, action, no_handle, check,
                     abort_reason=deadline.reason, resume_from=persisted)


async def settle(engine: Engine, stack: LiveStack, deadline: Deadline) -> Outcome:
    """Bring every resource the dead engine left IN_PROGRESS to COMPLETE or FAILED: one
    with a token continues, one without is FAILED (a delete is left to be issued
    again). Replaced rows left IN_PROGRESS are
    FAILED (the action that resumes deletes or restores them)."""
    await find_children(engine, stack)
    progress = await tokens(engine, stack.info.id)
    busy = [s for s in stack.slots.values() if s.state.status == IN_PROGRESS]

    async def one(slot: Slot) -> None:
        persisted = _persisted(progress, slot)
        if persisted is None and slot.state.action == DELETE:
            return  # deleting is idempotent: the action's walk issues it again
        if persisted is None:
            await _fail_resource(engine, stack, slot, slot.state.action)
        await _resume_one(engine, stack, slot, persisted, deadline)

    for index, item in enumerate(stack.stale):
        if item.status == IN_PROGRESS:
            reason = worker_went_down(item.action)
            await engine.store.resources.mark_abandoned(item.id, reason)
            # records are frozen: the stale list gets the row as it now is
            stack.stale[index] = dataclasses.replace(item, status=FAILED,
                                                     status_reason=reason)
    results = await asyncio.gather(*(one(s) for s in busy), return_exceptions=True)
    for slot, result in zip(busy, results, strict=True):
        if isinstance(result, asyncio.CancelledError):
            raise result
        if isinstance(result, BaseException):
            reason = failure_reason(slot.name, result)
            return Outcome(ok=False, reason=f"Resource {slot.state.action} failed: {reason}",
                           failed={slot.name: reason})
    return Outcome(ok=True)


async def resume_create(engine: Engine, stack: LiveStack) -> None:
    await find_children(engine, stack)
    progress = await tokens(engine, stack.info.id)

    async def step(engine: Engine, stack: LiveStack, slot: Slot, deadline: Deadline) -> None:
        state = slot.state
        if state.action == CREATE and state.status == COMPLETE:
            return
        if state.action == INIT:
            await create_action.create_resource(engine, stack, slot, deadline)
            return
        if state.action == CREATE and state.status == IN_PROGRESS:
            persisted = _persisted(progress, slot)
            if persisted is None:
                await _fail_resource(engine, stack, slot, CREATE)
            await create_action.create_resource(engine, stack, slot, deadline, persisted)
            return
        raise ActionFailed(state.status_reason or f"{state.action} {state.status}")

    await create_action.run_create(engine, stack, step=step)


async def resume_delete(engine: Engine, stack: LiveStack) -> None:
    outcome = await settle(engine, stack, Deadline(engine.timeout_seconds(stack)))
    if not outcome.ok:
        await engine.recorder.stack(stack, DELETE, FAILED, outcome.reason)
        return
    await delete_action.run_delete(engine, stack)
    info = stack.info
    # as a delete the engine launched itself (a delete an API process admitted, or one
    # taken over): a top-level stack deleted for good takes its trust with it
    if info.owner_id is None and (info.action, info.status) == (DELETE, COMPLETE):
        await acting.forget(engine, info.id, None)


async def resume_create_rollback(engine: Engine, stack: LiveStack) -> None:
    outcome = await settle(engine, stack, Deadline(engine.timeout_seconds(stack)))
    if outcome.ok:
        outcome = await delete_action.delete_resources(engine, stack, action=ROLLBACK,
                                                       remove_rows=True)
    if outcome.ok:
        await engine.recorder.stack(stack, ROLLBACK, COMPLETE, stack_completed(ROLLBACK),
                                    extra={"outputs": None})
    else:
        await engine.recorder.stack(stack, ROLLBACK, FAILED, outcome.reason)


async def resume_update(engine: Engine, stack: LiveStack) -> None:
    """An update, restore or an update's rollback: the update to the stored template
    (``raw_template_id``) runs again from where the resources are."""
    action = stack.info.action
    updating = {s.name for s in stack.slots.values()
                if (s.state.action, s.state.status) == (UPDATE, IN_PROGRESS)}
    await settle(engine, stack, Deadline(engine.timeout_seconds(stack)))
    current = await engine.load(stack.info.id)   # the settled rows, as an update reads them
    # an update in place finished from its token is not sent to the plugin again
    settled = frozenset(name for name in updating if (slot := current.slots.get(name))
                        and (slot.state.action, slot.state.status) == (UPDATE, COMPLETE))
    new = await update_action.bound_to(engine, current, current.info.raw_template_id)
    # Heat's converge flag, stored with the update when it was admitted
    rec = await engine.store.stacks.get(stack.info.id)
    new.converge = action == UPDATE and rec is not None and rec.converge
    engine.live[stack.info.id] = new
    # a child stack's update never rolls back by itself: its parent's rollback decides
    rollback = action == UPDATE and stack.info.owner_id is None
    await update_action.run_update(engine, current, new, action=action,
                                   allow_rollback=rollback, settled=settled)


async def resume_snapshot(engine: Engine, stack: LiveStack) -> None:
    """The snapshot runs again; the newest snapshot row still IN_PROGRESS is the one it
    completes (older ones, left by earlier crashes, are FAILED)."""
    await settle(engine, stack, Deadline(engine.timeout_seconds(stack)))
    rows = await engine.store.snapshots.of_stack(stack.info.id)
    pending = [r for r in rows if r.status == IN_PROGRESS]
    pending.sort(key=lambda r: r.created_at)
    for old in pending[:-1]:
        await engine.store.snapshots.fail(old.id, engine_went_down(SNAPSHOT))
    if pending:
        await snapshot_action.run_snapshot(engine, stack, pending[-1].id)
    else:
        await engine.recorder.stack(stack, SNAPSHOT, COMPLETE, stack_completed(SNAPSHOT))


async def resume_simple(engine: Engine, stack: LiveStack) -> None:
    await settle(engine, stack, Deadline(engine.timeout_seconds(stack)))
    await lifecycle.run_simple(engine, stack, stack.info.action)


async def fail_stack(engine: Engine, stack: LiveStack) -> None:
    """Heat's reset: everything IN_PROGRESS becomes FAILED with the same reason."""
    reason = engine_went_down(stack.info.action)
    pending = [engine.recorder.resource(stack, slot, slot.state.action, FAILED, reason)
               for slot in stack.slots.values() if slot.state.status == IN_PROGRESS]
    for item in stack.stale:
        if item.status == IN_PROGRESS:
            await engine.store.resources.mark_abandoned(item.id, reason)
    await asyncio.gather(*pending)
    await engine.recorder.stack(stack, stack.info.action, FAILED, reason)
    await engine.store.snapshots.fail_stuck(stack.info.id, reason)


RESUMERS: dict[str, Callable[[Any, LiveStack], Awaitable[None]]] = {
    CREATE: resume_create, DELETE: resume_delete, UPDATE: resume_update,
    RESTORE: resume_update, SNAPSHOT: resume_snapshot, SUSPEND: resume_simple,
    RESUME: resume_simple, CHECK: resume_simple,
}


async def resume(engine: Engine, stack: LiveStack) -> None:
    action = stack.info.action
    if action == ROLLBACK:
        if stack.info.prev_raw_template_id is None:
            await resume_create_rollback(engine, stack)
        else:
            await resume_update(engine, stack)
        return
    await RESUMERS.get(action, fail_stack)(engine, stack)
