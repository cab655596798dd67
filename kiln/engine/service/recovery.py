"""Engine housekeeping run by the service: registration, heartbeat and the sweep that
takes over dead engines' stacks (resumed by :mod:`kiln.engine.actions.recover`), and the
service listing.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import socket
from collections.abc import Awaitable, Callable

from kiln.db.records import ServiceRecord, StackRecord
from kiln.engine.actions.recover import engine_went_down, fail_stack, resume
from kiln.engine.model.context import RequestContext
from kiln.engine.model.live_stack import LiveStack
from kiln.engine.model.settings import EngineConf
from kiln.engine.model.states import (
    IN_PROGRESS,
)
from kiln.engine.runtime import acting
from kiln.engine.runtime.claims import Claim
from kiln.engine.runtime.engine import Engine
from kiln.engine.service.drift_work import DriftWork
from kiln.engine.service.shapes import ServiceReply
from kiln.engine.service.shared import ServiceCore
from kiln.engine.store import DATABASE_ERRORS, utcnow

LOG = logging.getLogger(__name__)


#: the service-table rows of the processes that run stack actions (as Heat lists its
#: engines) and of API processes that only admit them (kiln.rpc deployments)
ENGINE_BINARY, ENGINE_TOPIC = "heat-engine", "engine"
API_BINARY, API_TOPIC = "kiln-api", "kiln-api"
#: stacks one sweep takes at most, so that work left by a dead engine (or queued while
#: the broker was down) spreads over the engines sweeping, instead of all going to the
#: first one; the rest waits for the next sweep (of this engine or another)
SWEEP_LIMIT = 8


class Recovery:
    """Registration, heartbeat and the periodic sweep of one engine.

    ``sweeps=False`` (an API process of a kiln.rpc deployment): registered and beating,
    so that a lock it holds while admitting an action is never taken over as a dead
    engine's, but it never takes work."""

    def __init__(self, engine: Engine, conf: EngineConf, *, sweeps: bool = True,
                 holder_alive: Callable[[str], Awaitable[bool | None]] | None = None) -> None:
        self.engine = engine
        self.conf = conf
        self.sweeps = sweeps
        #: asks an engine whose heartbeat is late whether it still answers (over the
        #: broker; None without one, where the heartbeat alone decides)
        self.holder_alive = holder_alive
        #: since when the late engines could not be asked (loop time), if they cannot
        self._cannot_ask_since: float | None = None
        opts = conf.kiln_engine
        self.heartbeat_interval = max(float(opts.heartbeat_interval), 0.05)
        self.dead_after = float(opts.engine_dead_after)
        self.sweep_interval = max(min(float(conf.periodic_interval), self.dead_after / 2),
                                  0.05)
        self._task: asyncio.Task[None] | None = None
        #: stacks this engine took over, for diagnostics and tests
        self.recovered: list[str] = []
        #: the drift detections this process runs (claimed, renewed with each beat)
        self.drift = DriftWork(engine, lease=self.dead_after)

    async def start(self) -> None:
        binary, topic = (ENGINE_BINARY, ENGINE_TOPIC) if self.sweeps else (API_BINARY,
                                                                          API_TOPIC)
        hostname = socket.gethostname()
        await self.engine.store.engines.register(
            self.engine.engine_id, host=self.conf.host, hostname=hostname,
            report_interval=int(self.heartbeat_interval), binary=binary,
            topic=topic)
        # as Heat's engine does at start: a row of this host silent for three periodic
        # intervals is a process that died, replaced by this one
        forgotten = await self.engine.store.engines.forget_aborted(
            self.engine.engine_id, host=self.conf.host, hostname=hostname, binary=binary,
            older_than=3 * float(self.conf.periodic_interval))
        if forgotten:
            LOG.info("services of this host that stopped reporting removed from the "
                     "list: %s", ", ".join(forgotten))
        if self.sweeps:
            await self.sweep()
        self._task = asyncio.ensure_future(self._loop())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self.drift.stop()

    async def unregister(self) -> None:
        # a row left behind reads as a dead engine once its heartbeat is old
        with contextlib.suppress(*DATABASE_ERRORS):
            await self.engine.store.engines.unregister(self.engine.engine_id)

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        next_sweep = loop.time() + self.sweep_interval
        while True:
            await asyncio.sleep(min(self.heartbeat_interval,
                                    max(next_sweep - loop.time(), 0.0)))
            try:
                await self.engine.store.engines.heartbeat(self.engine.engine_id)
                await self.drift.renew()
                # the schedule moves on in a process that never sweeps too (an API
                # process): a sweep time left in the past would make the wait above 0
                # and the heartbeat a busy loop of UPDATEs
                if loop.time() >= next_sweep:
                    next_sweep = loop.time() + self.sweep_interval
                    if self.sweeps and len(await self.sweep()) >= SWEEP_LIMIT:
                        # a backlog (work queued while the broker was down, a dead
                        # engine's stacks): the next share is taken at the next beat,
                        # not a whole sweep interval later
                        next_sweep = loop.time()
            except asyncio.CancelledError:
                raise
            except Exception:  # the database may be briefly unavailable: try again later
                LOG.exception("engine housekeeping failed")

    async def sweep(self) -> list[str]:
        """Take over what dead engines left; returns the ids of the stacks taken."""
        engine = self.engine
        me = engine.engine_id
        found = await engine.store.locks.orphaned(self.dead_after, me)
        answering = await self._answering({rec.engine_id for rec in found
                                           if rec.engine_id not in (None, me)})
        taken: list[str] = []
        for rec in found:
            if rec.engine_id in answering:
                LOG.warning("not taking over stack %s (%s): its engine %s is late with "
                            "its heartbeat but still answers", rec.name, rec.id,
                            rec.engine_id, extra={"stack_id": rec.id,
                                                  "engine_id": engine.engine_id})
                continue
            if len(taken) >= SWEEP_LIMIT:
                break
            if await self._try(rec):
                taken.append(rec.id)
        self.recovered.extend(taken)
        # drift detections an API process queued (woken while the broker was down) or
        # whose engine stopped
        await self.drift.take()
        return taken

    async def _answering(self, holders: set[str | None]) -> set[str]:
        """Of the engines holding stacks whose heartbeats are late, those that still
        answer a ping (each asked once, all at once). While this process cannot ask
        (start-up, a broker outage) they are all left alone, for ``engine_dead_after``
        at most: after that the heartbeat alone decides, as without a broker."""
        ask = self.holder_alive
        names = sorted(h for h in holders if h is not None)
        if ask is None or not names:
            return set()
        answers = await asyncio.gather(*(ask(name) for name in names))
        now = asyncio.get_running_loop().time()
        if None not in answers:
            self._cannot_ask_since = None
        elif self._cannot_ask_since is None:
            self._cannot_ask_since = now
        if (self._cannot_ask_since is not None
                and now - self._cannot_ask_since >= self.dead_after):
            return {name for name, up in zip(names, answers, strict=True) if up}
        return {name for name, up in zip(names, answers, strict=True) if up is not False}

    async def take(self, stack_id: str) -> bool:
        """Take one queued stack now (an API process's ``wake``): IN_PROGRESS and held by
        nobody, taken with the sweep's compare-and-set, so of several engines woken (or
        sweeping) exactly one runs it. False when it is not queued (any more). The
        stack's queued drift detections are taken too (the same wake hands them over)."""
        rec = await self.engine.store.stacks.get(stack_id)
        took = False
        if rec is not None and rec.status == IN_PROGRESS and rec.engine_id is None:
            took = await self._try(rec, woken=True)
        await self.drift.take(stack_id)
        return took

    async def _try(self, rec: StackRecord, *, woken: bool = False) -> bool:
        engine = self.engine
        claim = engine.claims.try_take(rec.id, rec.action)
        if claim is None:  # a request or an action of this process has it
            return False
        try:
            await self._take_over(rec, claim, woken=woken)
        finally:
            if claim.task is None:
                await engine.claims.give_back(claim)
        return claim.task is not None

    async def _take_over(self, rec: StackRecord, claim: Claim, *,
                         woken: bool = False) -> None:
        """Resume one orphaned stack under ``claim``; the caller gives the claim (and the
        row lock) back unless an action was launched."""
        engine = self.engine
        if not await engine.store.locks.take_orphan(rec, engine.engine_id):
            return
        if rec.status != IN_PROGRESS:
            return
        if woken:
            LOG.info("running stack %s (%s, %s_%s) an API process admitted", rec.name,
                     rec.id, rec.action, rec.status,
                     extra={"stack_id": rec.id, "engine_id": engine.engine_id})
        else:
            LOG.warning("taking over stack %s (%s, %s_%s) %s", rec.name, rec.id,
                        rec.action, rec.status,
                        f"from engine {rec.engine_id}" if rec.engine_id else
                        "that no engine holds (its engine stopped before finishing it, or "
                        "an API process admitted it)",
                        extra={"stack_id": rec.id, "engine_id": engine.engine_id})
        try:
            stack = await engine.load(rec.id)
        except Exception:
            LOG.exception("cannot load stack %s for recovery", rec.id)
            await engine.store.stacks.fail_unloadable(rec.id, engine_went_down(rec.action))
            return
        claim.launch(_work(engine, stack), stack)
        info = stack.info
        if honour_cancel(engine, rec.id, info.action, info.status_reason):
            LOG.info("stack %s (%s): cancelling its %s, as requested while it was queued",
                     rec.name, rec.id, info.action, extra={"stack_id": rec.id})


def _work(engine: Engine, stack: LiveStack) -> Callable[[], Awaitable[None]]:
    async def run() -> None:
        try:
            # nobody's request is behind a recovery: it acts through the stack's trust
            await acting.without_request(engine, stack)
            await resume(engine, stack)
        except Exception:
            LOG.exception("recovery of stack %s failed", stack.info.id)
            try:
                await fail_stack(engine, stack)
            except Exception:
                LOG.exception("cannot fail stack %s", stack.info.id)
                await engine.store.stacks.fail_unloadable(
                    stack.info.id, engine_went_down(stack.info.action))
    return run


#: the stack's reason while a cancel of its queued action waits for an engine:
#: rollback (a cancel_update) or not (cancel_without_rollback)
CANCEL_REQUESTED = {True: "Stack {action} cancel requested",
                    False: "Stack {action} cancel requested without rollback"}


def cancel_reason(action: str, rollback: bool) -> str:
    return CANCEL_REQUESTED[rollback].format(action=action)


def honour_cancel(engine: Engine, stack_id: str, action: str, reason: str) -> bool:
    """For the engine that took a queued stack and launched its action: cancel it at
    once if a cancel was recorded while it was queued; whether one was."""
    for rollback in (True, False):
        if reason == cancel_reason(action, rollback):
            cancel = engine.cancels.get(stack_id)
            if cancel is None:
                return False
            engine.cancel_rollback[stack_id] = rollback
            cancel.set()
            return True
    return False



def service_body(rec: ServiceRecord) -> ServiceReply:
    """Heat's service listing entry; ``status`` is up while heartbeats are recent."""
    last = rec.updated_at or rec.created_at
    up = (utcnow() - last).total_seconds() <= 2 * max(rec.report_interval, 1)
    return {"id": rec.id, "binary": rec.binary, "engine_id": rec.engine_id,
            "host": rec.host, "hostname": rec.hostname, "topic": rec.topic,
            "report_interval": rec.report_interval,
            "created_at": _plain(rec.created_at), "updated_at": _plain(rec.updated_at),
            "deleted_at": _plain(rec.deleted_at), "status": "up" if up else "down"}


def _plain(value: dt.datetime | None) -> str | None:
    """Heat lists service times as naive ISO strings with microseconds (no ``Z``)."""
    return None if value is None else value.isoformat()


class RecoveryOps:
    """This engine's liveness: its :class:`Recovery` (heartbeat, take-overs), started
    after and stopped before the core, and the services list."""

    def __init__(self, core: ServiceCore) -> None:
        self.core = core
        self.recovery: Recovery | None = None

    async def start(self) -> None:
        """After :meth:`ServiceCore.start`: the Engine exists."""
        dispatch = self.core.dispatch
        sweeps = dispatch is None or dispatch.runs_actions
        self.recovery = Recovery(self.core.engine, self.core.conf, sweeps=sweeps,
                                 holder_alive=None if dispatch is None else dispatch.alive)
        await self.recovery.start()

    async def stop(self) -> None:
        """Before :meth:`ServiceCore.stop`: the engine stops before it unregisters."""
        recovery, self.recovery = self.recovery, None
        if recovery is not None:
            await recovery.stop()
            engine = self.core.started_engine
            if engine is not None:
                await engine.stop()
            await recovery.unregister()

    async def list_services(self, ctx: RequestContext) -> list[ServiceReply]:
        rows = await self.core.store.engines.services()
        return [service_body(r) for r in rows]
