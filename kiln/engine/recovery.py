"""Taking over the work of engines that died: nothing stays IN_PROGRESS forever.

Every engine registers in the ``service`` table and heartbeats every
``[kiln_engine] heartbeat_interval`` seconds. At start, and then every
``periodic_interval`` seconds (or sooner, when ``engine_dead_after`` is shorter), it sweeps
for stacks whose lock is held by an engine silent for ``engine_dead_after`` seconds (or by
no registered engine at all), and for IN_PROGRESS stacks nobody holds (an engine that
stopped cleanly hands its unfinished stacks over this way). It steals the lock
atomically (two sweeping engines cannot both win) and then, per the stack's action:

- CREATE: resources already CREATE_COMPLETE stay; a resource whose progress token was
  persisted continues with ``check_create_complete(token)``; resources never started are
  created as their dependencies complete; a resource caught inside its handle call (no
  token: nobody knows whether the work happened) is marked FAILED with "Worker went down
  during resource CREATE", which fails the stack (rolled back unless disabled) so the user
  can retry or delete.
- DELETE and a create's ROLLBACK: deletes continue from their tokens, the others are
  (re)issued — deleting is idempotent — and the action finishes as it would have.
- any other action (update, suspend, ...): resources IN_PROGRESS and the stack are set
  FAILED with Heat's "Engine went down during stack <ACTION>", ready for a retry, a
  rollback or a delete.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Awaitable, Callable
from typing import Any

from kiln.db import locks as db_locks
from kiln.db import recovery as db_recovery
from kiln.db import resources as db_resources
from kiln.db.models import utcnow
from kiln.engine import create as create_action
from kiln.engine import delete as delete_action
from kiln.engine import outputs
from kiln.engine.actions import (
    COMPLETE,
    CREATE,
    DELETE,
    FAILED,
    IN_PROGRESS,
    INIT,
    ROLLBACK,
    stack_completed,
)
from kiln.engine.base import ServiceBase
from kiln.engine.context import RequestContext
from kiln.engine.interface import JSON
from kiln.engine.runner import ActionFailed, failure_reason
from kiln.engine.scheduler import Deadline, Outcome, traverse
from kiln.engine.stack import LiveStack, Slot

LOG = logging.getLogger(__name__)


def worker_went_down(action: str) -> str:
    return f"Worker went down during resource {action}"


def engine_went_down(action: str) -> str:
    return f"Engine went down during stack {action}"


async def tokens(engine: Any, stack_id: str) -> dict[str, tuple[str | None, Any]]:
    """``name -> (progress_action, token)`` of the stack's current rows."""
    rows = await engine.db.run(db_resources.list_resources, stack_id)
    return {r.name: (r.progress_action, r.progress) for r in sorted(rows, key=lambda r: r.id)
            if r.replaced_by is None}


async def continue_action(engine: Any, stack: LiveStack, slot: Slot, action: str,
                          token: Any, check: Callable[[Any], Awaitable[bool]]) -> None:
    """The second half of the runner's two-step contract, from a persisted token."""
    recorder = engine.recorder
    delay = engine.poller.initial
    try:
        while not await check(token):
            hint = slot.plugin.poll_delay(token)
            await asyncio.sleep(delay if hint is None else max(hint, 0.0))
            delay = min(delay * 2, engine.poller.maximum)
    except asyncio.CancelledError:
        await asyncio.shield(recorder.resource(stack, slot, action, FAILED,
                                               f"{action} aborted"))
        raise
    except Exception as exc:
        reason = failure_reason(slot.name, exc)
        await recorder.resource(stack, slot, action, FAILED, reason)
        raise ActionFailed(reason) from exc
    await recorder.resource(stack, slot, action, COMPLETE)


async def _fail_resource(engine: Any, stack: LiveStack, slot: Slot, action: str) -> None:
    reason = worker_went_down(action)
    await engine.recorder.resource(stack, slot, action, FAILED, reason)
    raise ActionFailed(reason)


async def resume_create(engine: Any, stack: LiveStack) -> None:
    progress = await tokens(engine, stack.info.id)
    deadline = Deadline(engine.timeout_seconds(stack))

    async def visit(name: str) -> None:
        slot = stack.slots[name]
        state = slot.state
        if state.action == CREATE and state.status == COMPLETE:
            return
        if state.action == INIT:
            await create_action.create_resource(engine, stack, slot, deadline)
            return
        if state.action == CREATE and state.status == IN_PROGRESS:
            kind, token = progress.get(name, (None, None))
            if kind == CREATE:
                await continue_action(engine, stack, slot, CREATE, token,
                                      slot.plugin.check_create_complete)
                return
            await _fail_resource(engine, stack, slot, CREATE)
        raise ActionFailed(state.status_reason or f"{state.action} {state.status}")

    outcome = await traverse(engine.graph(stack), visit, action=CREATE, limit=engine.limit,
                             unlimited=lambda n: create_action.is_nested(stack.slots[n]),
                             deadline=deadline, cancel=engine.cancels.get(stack.info.id))
    values = {"outputs": outputs.resolve_all(stack)}
    if outcome.ok:
        await engine.recorder.stack(stack, CREATE, COMPLETE, stack_completed(CREATE),
                                    extra=values)
        return
    await engine.recorder.stack(stack, CREATE, FAILED, outcome.reason, extra=values)
    if not stack.info.disable_rollback:
        await create_action.rollback_create(engine, stack)


async def _continue_deletes(engine: Any, stack: LiveStack) -> Outcome:
    """Deletes that were waiting on a token go on; others restart in the normal walk."""
    progress = await tokens(engine, stack.info.id)
    started = [slot for slot in stack.slots.values()
               if slot.state.action == DELETE and slot.state.status == IN_PROGRESS
               and progress.get(slot.name, (None, None))[0] == DELETE]

    async def one(slot: Slot) -> None:
        token = progress[slot.name][1]
        if slot.definition.deletion_policy == "Retain":
            await engine.recorder.resource(stack, slot, DELETE, COMPLETE)
            return
        await continue_action(engine, stack, slot, DELETE, token,
                              slot.plugin.check_delete_complete)

    results = await asyncio.gather(*(one(s) for s in started), return_exceptions=True)
    for slot, result in zip(started, results, strict=True):
        if isinstance(result, BaseException):
            reason = failure_reason(slot.name, result)
            return Outcome(ok=False, reason=f"Resource DELETE failed: {reason}",
                           failed={slot.name: reason})
    return Outcome(ok=True)


async def resume_delete(engine: Any, stack: LiveStack) -> None:
    outcome = await _continue_deletes(engine, stack)
    if not outcome.ok:
        await engine.recorder.stack(stack, DELETE, FAILED, outcome.reason)
        return
    await delete_action.run_delete(engine, stack)


async def resume_rollback(engine: Any, stack: LiveStack) -> None:
    outcome = await _continue_deletes(engine, stack)
    if outcome.ok:
        outcome = await delete_action.delete_resources(engine, stack, action=ROLLBACK,
                                                       remove_rows=True)
    if outcome.ok:
        await engine.recorder.stack(stack, ROLLBACK, COMPLETE, stack_completed(ROLLBACK),
                                    extra={"outputs": None})
    else:
        await engine.recorder.stack(stack, ROLLBACK, FAILED, outcome.reason)


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


async def resume(engine: Any, stack: LiveStack) -> None:
    action = stack.info.action
    if action == CREATE:
        await resume_create(engine, stack)
    elif action == DELETE:
        await resume_delete(engine, stack)
    elif action == ROLLBACK and stack.info.prev_raw_template_id is None:
        await resume_rollback(engine, stack)
    else:
        await fail_stack(engine, stack)


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
            if engine.running(rec.id):
                continue
            if not await engine.db.run(db_recovery.take_stack, rec, me):
                continue
            if rec.status != IN_PROGRESS:
                await engine.db.run(db_locks.release_stack_lock, rec.id, me)
                continue
            LOG.warning("taking over stack %s (%s_%s) from engine %s", rec.id, rec.action,
                        rec.status, rec.engine_id)
            try:
                stack = await engine.load(rec.id)
            except Exception:
                LOG.exception("cannot load stack %s for recovery", rec.id)
                await engine.db.write(db_recovery.fail_stored_stack, rec.id,
                                      engine_went_down(rec.action))
                await engine.db.run(db_locks.release_stack_lock, rec.id, me)
                continue
            engine.launch(rec.id, _work(engine, stack), stack)
            taken.append(rec.id)
        self.recovered.extend(taken)
        return taken


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

