"""Requests that must meet a stack's running action, when no engine is running it.

In a deployment of several processes (kiln.rpc), a stack nobody holds is either at rest
or queued: admitted by an API process (IN_PROGRESS, no holder) and about to be taken by
an engine, which then loads it from the database. A request reaching a process that
does not run the stack (a signal, a cancel) is forwarded to the engine holding it
(:mod:`kiln.engine.service.forwarding`); with no holder it runs here, and it must not
meet an engine taking the stack half-way: a signal applied to a copy loaded before the
engine's load, and persisted after it, would be missing from the copy the engine runs
(a wait condition would wait for it until its timeout).

So the request holds the stack while it runs here (:meth:`UnheldOps.at_stack`): this
process's claim, marked as finishing so other requests of the process wait for it
rather than being refused, and the root stack row's lock, so no engine takes the stack
meanwhile (its take is the compare-and-set of :mod:`kiln.engine.service.recovery`).
What the request changed is persisted before the lock is given back; an engine taking
the stack afterwards loads it. A stack that became held by a live engine in between is
forwarded to that engine instead, so either the holder or the request's process applies
it, exactly once. A queued stack is woken again once the lock is given back (the wake an
engine got meanwhile found it held).

A cancel of a queued update is recorded on the stack (as its reason,
:func:`kiln.engine.service.recovery.cancel_reason`) for the engine that takes it, which
cancels the action as soon as it resumes it, as if the cancel had reached it running.

Not held: in ``kiln serve`` (no dispatch) nothing changes. A signal whose plugin handles
it in the background (a scaling policy resizing its group) is checked and scheduled under
the hold, and handled after it, as Heat handles such signals outside the stack's lock.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from kiln.engine.model.context import RequestContext
from kiln.engine.model.states import IN_PROGRESS
from kiln.engine.runtime.claims import SETTLING_DELAY, SETTLING_POLLS, Claim
from kiln.engine.service.forwarding import ForwardingOps
from kiln.engine.service.interface import Identity
from kiln.engine.service.shared import ServiceCore

LOG = logging.getLogger(__name__)


@dataclass
class _Hold:
    claim: Claim
    gate: asyncio.Future[None]


class UnheldOps:
    """Serves a call on a stack nobody runs while holding it (see the module); asks
    ``forwarding`` first whether another engine holds it."""

    def __init__(self, core: ServiceCore, forwarding: ForwardingOps) -> None:
        self.core = core
        self.forwarding = forwarding

    async def at_stack(
        self,
        method: str,
        ctx: RequestContext,
        stack_identity: Identity,
        here: Callable[[bool], Awaitable[Any]],
        **kwargs: Any,
    ) -> Any:
        """``method``'s reply from the live engine holding the stack, or ``here(held)``
        run in this process: ``held`` True when this request holds the stack nobody
        runs (see the module), False when this process runs its action or dispatches
        nothing (``kiln serve``)."""
        engine = self.core.engine
        name = ""
        forward = self.forwarding.forward_to_holder
        for _ in range(SETTLING_POLLS):
            if fwd := await forward(method, ctx, stack_identity, **kwargs):
                return fwd.reply
            if self.core.dispatch is None:
                return await here(False)
            rec = await self.core.find(ctx, stack_identity)
            name = rec.name
            root = rec.root_stack_id or rec.id
            held = engine.claims.get(root)
            if held is not None:
                if held.task is None:  # a request or a take of this process sets up
                    await held.settled.wait()
                    continue
                if engine.handoff is None and not held.finishing and not held.task.done():
                    return await here(False)  # this process runs the stack's action
                # handing the stack off, tidying up, or another request's hold
                await asyncio.wait({held.task})
                continue
            hold = await self._hold(root)
            if hold is None:
                # another process holds the row: an API process admitting an action,
                # or an engine that took the stack since it was read (forwarded to it
                # next time round); the row is polled, bounded
                await asyncio.sleep(SETTLING_DELAY)
                continue
            try:
                return await here(True)
            finally:
                await self._let_go(hold, root)
        # held all along by a process that neither answers as an engine nor lets go (an
        # engine that died, until engine_dead_after lets it be taken over): served
        # here, as before there was a hold
        LOG.warning(
            "stack %s stays held by a process that is not a live engine: %s "
            "served without holding it",
            name,
            method,
        )
        return await here(False)

    async def _hold(self, stack_id: str) -> _Hold | None:
        engine = self.core.engine
        claim = engine.claims.try_take(stack_id, "")
        if claim is None:
            return None
        # others in this process wait for the hold as for an action tidying up
        gate: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        claim.task = asyncio.ensure_future(_until(gate))
        claim.finishing = True
        hold = _Hold(claim, gate)
        locks = engine.store.locks
        try:
            held = await locks.lock_stack(stack_id, engine.engine_id) or await locks.take_from_dead(
                stack_id, engine.engine_id, float(engine.conf.kiln_engine.engine_dead_after)
            )
        except BaseException:
            await self._release(hold)
            raise
        if not held:
            await self._release(hold)
            return None
        return hold

    async def _release(self, hold: _Hold) -> None:
        try:
            await self.core.engine.claims.give_back(hold.claim)
        finally:
            if not hold.gate.done():
                hold.gate.set_result(None)

    async def _let_go(self, hold: _Hold, stack_id: str) -> None:
        """Give the row back; a queued stack is woken again (an engine woken meanwhile
        found it held)."""
        await self._release(hold)
        rec = await self.core.store.stacks.get(stack_id)
        dispatch = self.core.dispatch
        if (
            dispatch is not None
            and rec is not None
            and rec.status == IN_PROGRESS
            and rec.engine_id is None
        ):
            await dispatch.wake(stack_id)


async def _until(gate: asyncio.Future[None]) -> None:
    await gate
