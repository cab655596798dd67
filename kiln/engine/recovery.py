"""Taking over the work of engines that died: nothing stays IN_PROGRESS forever.

Every engine registers in the ``service`` table and heartbeats every
``[kiln_engine] heartbeat_interval`` seconds. At start, and then every
``periodic_interval`` seconds (or sooner, when ``engine_dead_after`` is shorter), it sweeps
for stacks whose lock is held by an engine silent for ``engine_dead_after`` seconds (or by
no registered engine at all), and for IN_PROGRESS stacks nobody holds (an engine that
stopped cleanly hands its unfinished stacks over this way). It steals the lock
atomically (two sweeping engines cannot both win) and resumes the stack's action.

Resource actions are resumed through the runner (:func:`kiln.engine.runner.run_action`
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
  update to the stored template runs again; what is already done is a no-op, a FAILED
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
import contextlib
import logging
import socket
from collections.abc import Awaitable, Callable
from typing import Any, NoReturn

from kiln.db import locks as db_locks
from kiln.db import recovery as db_recovery
from kiln.db import resources as db_resources
from kiln.db import snapshots as db_snapshots
from kiln.db import stacks as db_stacks
from kiln.db.models import utcnow
from kiln.engine import create as create_action
from kiln.engine import delete as delete_action
from kiln.engine import lifecycle
from kiln.engine import snapshots as snapshot_action
from kiln.engine import update as update_action
from kiln.engine.actions import (
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
from kiln.engine.base import ServiceBase
from kiln.engine.claims import Claim
from kiln.engine.context import RequestContext
from kiln.engine.interface import JSON
from kiln.engine.runner import ActionFailed, Persisted, failure_reason, is_nested, run_action
from kiln.engine.scheduler import Deadline, Outcome
from kiln.engine.stack import LiveStack, Slot

LOG = logging.getLogger(__name__)

Progress = dict[str, tuple[str | None, Any]]


def worker_went_down(action: str) -> str:
    return f"Worker went down during resource {action}"


def engine_went_down(action: str) -> str:
    return f"Engine went down during stack {action}"


async def tokens(engine: Any, stack_id: str) -> Progress:
    """``name -> (progress_action, token)`` of the stack's current rows."""
    rows = await engine.db.run(db_resources.list_resources, stack_id)
    return {r.name: (r.progress_action, r.progress) for r in sorted(rows, key=lambda r: r.id)
            if r.replaced_by is None}


def _persisted(progress: Progress, slot: Slot) -> Persisted | None:
    kind, token = progress.get(slot.name, (None, None))
    return Persisted(token) if kind is not None and kind == slot.state.action else None


async def find_children(engine: Any, stack: LiveStack) -> None:
    """Give a nested-stack resource caught inside its handle (no physical id) the child
    stack its handle had already made, so deleting the resource deletes the child."""
    lost = {s.name: s for s in stack.slots.values()
            if is_nested(s) and s.physical_id is None and s.state.status == IN_PROGRESS}
    if not lost:
        return
    for child in await engine.db.run(db_stacks.list_child_stacks, stack.info.id):
        slot = lost.get(child.parent_resource_name or "")
        if slot is not None:
            slot.state.resource_id = child.id
            await engine.recorder.progress(slot, None)


async def _fail_resource(engine: Any, stack: LiveStack, slot: Slot, action: str) -> NoReturn:
    reason = worker_went_down(action)
    await engine.recorder.resource(stack, slot, action, FAILED, reason)
    raise ActionFailed(reason)


async def _resume_one(engine: Any, stack: LiveStack, slot: Slot, persisted: Persisted,
                      deadline: Deadline) -> None:
    """Continue a resource action (not a create) from its token, through the runner."""
    action = slot.state.action
    if action == DELETE:
        await delete_action.delete_resource(engine, stack, slot, deadline, persisted)
        return
    check = getattr(slot.plugin, f"check_{action.lower()}_complete")

    async def no_handle() -> Any:
        raise AssertionError("a resumed action does not call its handle again")

    await run_action(engine.recorder, engine.poller, stack, slot, action, no_handle, check,
                     abort_reason=deadline.reason, resume_from=persisted)


async def settle(engine: Any, stack: LiveStack, deadline: Deadline) -> Outcome:
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

    for item in stack.stale:
        if item.status == IN_PROGRESS:
            reason = worker_went_down(item.action)
            await engine.db.write(db_resources.update_resource, item.id, {
                "status": FAILED, "status_reason": reason, "engine_id": None,
                "progress": None, "progress_action": None})
            item.status, item.status_reason = FAILED, reason
    results = await asyncio.gather(*(one(s) for s in busy), return_exceptions=True)
    for slot, result in zip(busy, results, strict=True):
        if isinstance(result, asyncio.CancelledError):
            raise result
        if isinstance(result, BaseException):
            reason = failure_reason(slot.name, result)
            return Outcome(ok=False, reason=f"Resource {slot.state.action} failed: {reason}",
                           failed={slot.name: reason})
    return Outcome(ok=True)


async def resume_create(engine: Any, stack: LiveStack) -> None:
    await find_children(engine, stack)
    progress = await tokens(engine, stack.info.id)

    async def step(engine: Any, stack: LiveStack, slot: Slot, deadline: Deadline) -> None:
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


async def resume_delete(engine: Any, stack: LiveStack) -> None:
    outcome = await settle(engine, stack, Deadline(engine.timeout_seconds(stack)))
    if not outcome.ok:
        await engine.recorder.stack(stack, DELETE, FAILED, outcome.reason)
        return
    await delete_action.run_delete(engine, stack)


async def resume_create_rollback(engine: Any, stack: LiveStack) -> None:
    outcome = await settle(engine, stack, Deadline(engine.timeout_seconds(stack)))
    if outcome.ok:
        outcome = await delete_action.delete_resources(engine, stack, action=ROLLBACK,
                                                       remove_rows=True)
    if outcome.ok:
        await engine.recorder.stack(stack, ROLLBACK, COMPLETE, stack_completed(ROLLBACK),
                                    extra={"outputs": None})
    else:
        await engine.recorder.stack(stack, ROLLBACK, FAILED, outcome.reason)


async def resume_update(engine: Any, stack: LiveStack) -> None:
    """An update, restore or an update's rollback: the update to the stored template
    (``raw_template_id``) runs again from where the resources are."""
    action = stack.info.action
    await settle(engine, stack, Deadline(engine.timeout_seconds(stack)))
    current = await engine.load(stack.info.id)   # the settled rows, as an update reads them
    new = await update_action.bound_to(engine, current, current.info.raw_template_id)
    engine.live[stack.info.id] = new
    # a child stack's update never rolls back by itself: its parent's rollback decides
    rollback = action == UPDATE and stack.info.owner_id is None
    await update_action.run_update(engine, current, new, action=action,
                                   allow_rollback=rollback)


async def resume_snapshot(engine: Any, stack: LiveStack) -> None:
    """The snapshot runs again; the newest snapshot row still IN_PROGRESS is the one it
    completes (older ones, left by earlier crashes, are FAILED)."""
    await settle(engine, stack, Deadline(engine.timeout_seconds(stack)))
    rows = await engine.db.run(db_snapshots.list_snapshots, stack.info.id)
    pending = [r for r in rows if r.status == IN_PROGRESS]
    pending.sort(key=lambda r: r.created_at)
    for old in pending[:-1]:
        await engine.db.write(db_snapshots.update_snapshot, old.id, {
            "status": FAILED, "status_reason": engine_went_down(SNAPSHOT)})
    if pending:
        await snapshot_action.run_snapshot(engine, stack, pending[-1].id)
    else:
        await engine.recorder.stack(stack, SNAPSHOT, COMPLETE, stack_completed(SNAPSHOT))


async def resume_simple(engine: Any, stack: LiveStack) -> None:
    await settle(engine, stack, Deadline(engine.timeout_seconds(stack)))
    await lifecycle.run_simple(engine, stack, stack.info.action)


async def fail_stack(engine: Any, stack: LiveStack) -> None:
    """Heat's reset: everything IN_PROGRESS becomes FAILED with the same reason."""
    reason = engine_went_down(stack.info.action)
    pending = [engine.recorder.resource(stack, slot, slot.state.action, FAILED, reason)
               for slot in stack.slots.values() if slot.state.status == IN_PROGRESS]
    for item in stack.stale:
        if item.status == IN_PROGRESS:
            await engine.db.write(db_resources.update_resource, item.id,
                                  {"status": FAILED, "status_reason": reason,
                                   "engine_id": None, "progress": None,
                                   "progress_action": None})
    await asyncio.gather(*pending)
    await engine.recorder.stack(stack, stack.info.action, FAILED, reason)
    await engine.db.write(db_recovery.fail_stuck_snapshots, stack.info.id, reason)


RESUMERS: dict[str, Callable[[Any, LiveStack], Awaitable[None]]] = {
    CREATE: resume_create, DELETE: resume_delete, UPDATE: resume_update,
    RESTORE: resume_update, SNAPSHOT: resume_snapshot, SUSPEND: resume_simple,
    RESUME: resume_simple, CHECK: resume_simple,
}


async def resume(engine: Any, stack: LiveStack) -> None:
    action = stack.info.action
    if action == ROLLBACK:
        if stack.info.prev_raw_template_id is None:
            await resume_create_rollback(engine, stack)
        else:
            await resume_update(engine, stack)
        return
    await RESUMERS.get(action, fail_stack)(engine, stack)


class Recovery:
    """Registration, heartbeat and the periodic sweep of one engine."""

    def __init__(self, engine: Any, conf: Any) -> None:
        self.engine = engine
        self.conf = conf
        opts = conf.kiln_engine
        self.heartbeat_interval = max(float(opts.heartbeat_interval), 0.05)
        self.dead_after = float(opts.engine_dead_after)
        self.sweep_interval = max(min(float(conf.periodic_interval), self.dead_after / 2),
                                  0.05)
        self._task: asyncio.Task[None] | None = None
        #: stacks this engine took over, for diagnostics and tests
        self.recovered: list[str] = []

    async def start(self) -> None:
        await self.engine.db.run(
            db_locks.register_engine, self.engine.engine_id, host=self.conf.host,
            hostname=socket.gethostname(), report_interval=int(self.heartbeat_interval))
        await self.sweep()
        self._task = asyncio.ensure_future(self._loop())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def unregister(self) -> None:
        with contextlib.suppress(Exception):
            await self.engine.db.run(db_locks.unregister_engine, self.engine.engine_id)

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        next_sweep = loop.time() + self.sweep_interval
        while True:
            await asyncio.sleep(min(self.heartbeat_interval,
                                    max(next_sweep - loop.time(), 0.0)))
            try:
                await self.engine.db.run(db_locks.heartbeat, self.engine.engine_id)
                if loop.time() >= next_sweep:
                    next_sweep = loop.time() + self.sweep_interval
                    await self.sweep()
            except asyncio.CancelledError:
                raise
            except Exception:  # the database may be briefly unavailable: try again later
                LOG.exception("engine housekeeping failed")

    async def sweep(self) -> list[str]:
        """Take over what dead engines left; returns the ids of the stacks taken."""
        engine = self.engine
        me = engine.engine_id
        found = await engine.db.run(db_recovery.orphaned_stacks, self.dead_after, me)
        taken: list[str] = []
        for rec in found:
            claim = engine.claims.try_take(rec.id, rec.action)
            if claim is None:  # a request or an action of this process has it
                continue
            try:
                await self._take_over(rec, claim)
            finally:
                if claim.task is None:
                    await engine.claims.give_back(claim)
            if claim.task is not None:
                taken.append(rec.id)
        self.recovered.extend(taken)
        return taken

    async def _take_over(self, rec: Any, claim: Claim) -> None:
        """Resume one orphaned stack under ``claim``; the caller gives the claim (and the
        row lock) back unless an action was launched."""
        engine = self.engine
        if not await engine.db.run(db_recovery.take_stack, rec, engine.engine_id):
            return
        if rec.status != IN_PROGRESS:
            return
        LOG.warning("taking over stack %s (%s_%s) from engine %s", rec.id, rec.action,
                    rec.status, rec.engine_id)
        try:
            stack = await engine.load(rec.id)
        except Exception:
            LOG.exception("cannot load stack %s for recovery", rec.id)
            await engine.db.write(db_recovery.fail_stored_stack, rec.id,
                                  engine_went_down(rec.action))
            return
        claim.launch(_work(engine, stack), stack)


def _work(engine: Any, stack: LiveStack) -> Callable[[], Awaitable[None]]:
    async def run() -> None:
        try:
            await resume(engine, stack)
        except Exception:
            LOG.exception("recovery of stack %s failed", stack.info.id)
            try:
                await fail_stack(engine, stack)
            except Exception:
                LOG.exception("cannot fail stack %s", stack.info.id)
                await engine.db.write(db_recovery.fail_stored_stack, stack.info.id,
                                      engine_went_down(stack.info.action))
    return run


def service_body(rec: Any) -> JSON:
    """Heat's service listing entry; ``status`` is up while heartbeats are recent."""
    last = rec.updated_at or rec.created_at
    up = (utcnow() - last).total_seconds() <= 2 * max(rec.report_interval, 1)
    return {"id": rec.id, "binary": rec.binary, "engine_id": rec.engine_id,
            "host": rec.host, "hostname": rec.hostname, "topic": rec.topic,
            "report_interval": rec.report_interval,
            "created_at": _plain(rec.created_at), "updated_at": _plain(rec.updated_at),
            "deleted_at": _plain(rec.deleted_at), "status": "up" if up else "down"}


def _plain(value: Any) -> str | None:
    """Heat lists service times as naive ISO strings with microseconds (no ``Z``)."""
    return None if value is None else value.isoformat()


class RecoveryOps(ServiceBase):
    """Starts and stops the engine's :class:`Recovery` with the service."""

    recovery: Recovery | None = None

    async def start(self) -> None:
        await super().start()
        self.recovery = Recovery(self.engine, self.conf)
        await self.recovery.start()

    async def stop(self) -> None:
        recovery, self.recovery = self.recovery, None
        if recovery is not None:
            await recovery.stop()
            if self._engine is not None:
                await self._engine.stop()
            await recovery.unregister()
        await super().stop()

    async def list_services(self, ctx: RequestContext) -> list[JSON]:
        rows = await self.db.run(db_locks.list_services)
        return [service_body(r) for r in rows]

