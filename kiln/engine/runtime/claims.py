"""Who may start an action on a stack: one claim per stack, taken without awaiting.

Two requests for the same stack meet here. A claim is taken in one synchronous step (no
``await`` between "is the stack free?" and "it is mine"), so of two actions arriving at
the same instant exactly one gets it and the other is refused with Heat's
ActionInProgress (409). A delete (or abandon) pre-empts instead, as Heat's convergence
engine lets it: it waits for a claimant still setting up to launch, cancels the running
action, and then takes the claim, so an acknowledged delete is never lost to an action
that started beside it.

The claim only orders requests inside one process. Across processes sharing a database
the stack row's lock (``engine_id``, :mod:`kiln.engine.store.locks`) decides: it is taken after the
claim and released before it, so a process holding the claim holds the row too. There
is no call between processes, so a delete cannot cancel another process's running
action: it is refused with 409, never acknowledged and then dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kiln.engine.store import DATABASE_ERRORS
from kiln.errors import ActionInProgress, EntityNotFound

if TYPE_CHECKING:
    from kiln.engine.model.live_stack import LiveStack
    from kiln.engine.runtime.engine import Engine


@dataclass(eq=False)
class Claim:
    """One request's (then one task's) hold on a stack."""

    stack_id: str
    #: the action named in the 409 others get while this claim is held
    action: str
    engine: Engine
    task: asyncio.Task[None] | None = None
    #: the action has written its final state and only tidies up (events purge, lock
    #: release): a request arriving now waits for it instead of being refused, since
    #: the stack it was shown is already settled
    finishing: bool = False
    #: set once the claim is launched or given back (a pre-empting delete waits for it)
    settled: asyncio.Event = field(default_factory=asyncio.Event)

    def launch(self, work: Callable[[], Awaitable[None]],
               stack: LiveStack | None = None) -> asyncio.Task[None]:
        """Hand the claim to the task running ``work``; it gives the claim (and the row
        lock) back when it ends."""
        task = self.engine.launch(self.stack_id, work, stack)
        self.task = task
        self.settled.set()
        return task


#: how long a request waits for another process to release a settled stack's row
#: (SETTLING_POLLS x SETTLING_DELAY seconds) before it is refused with 409
SETTLING_POLLS = 40
SETTLING_DELAY = 0.05


def in_progress(name: str, action: str) -> ActionInProgress:
    return ActionInProgress(f"Stack {name} already has an action ({action}) in progress.")


class Claims:
    """The claims of one engine, by stack id."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.held: dict[str, Claim] = {}

    def __contains__(self, stack_id: object) -> bool:
        return stack_id in self.held

    def get(self, stack_id: str) -> Claim | None:
        return self.held.get(stack_id)

    def finishing(self, stack_id: str, task: asyncio.Task[None]) -> None:
        """``task``'s action is over: what is left is tidying up (see
        :attr:`Claim.finishing`)."""
        claim = self.held.get(stack_id)
        if claim is not None and claim.task is task:
            claim.finishing = True

    def try_take(self, stack_id: str, action: str) -> Claim | None:
        """The claim if the stack is free in this process, else None (synchronous)."""
        if stack_id in self.held:
            return None
        claim = self.held[stack_id] = Claim(stack_id, action, self.engine)
        return claim

    async def give_back(self, claim: Claim) -> None:
        """Release the row lock, then the claim (in that order: the next claimant's row
        lock must not be the one this release clears)."""
        engine = self.engine
        try:
            # a lock left behind is cleared by the sweep once this engine stops beating
            with contextlib.suppress(*DATABASE_ERRORS):
                await asyncio.shield(engine.store.locks.unlock_stack(claim.stack_id,
                                                                     engine.engine_id))
        finally:
            if self.held.get(claim.stack_id) is claim:
                del self.held[claim.stack_id]
            claim.settled.set()

    async def _clear_for(self, stack_id: str, name: str, preempt: bool) -> Claim:
        """Wait (pre-empting) or refuse until the stack is free, then take it."""
        while True:
            held = self.held.get(stack_id)
            if held is None:
                claim = self.try_take(stack_id, "")
                assert claim is not None
                return claim
            if held.task is not None and held.finishing:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await asyncio.shield(held.task)
                continue
            if not preempt:
                if held.task is not None and await self._final_state_written(held):
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await asyncio.shield(held.task)
                    continue
                raise in_progress(name, held.action)
            if held.task is None:
                await held.settled.wait()  # still setting up: let it launch, then cancel
                continue
            task = held.task
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
            if self.held.get(stack_id) is held:  # cancelled before its first step
                await self.give_back(held)

    async def _final_state_written(self, held: Claim) -> bool:
        """Whether the holder's action has already stored its final state: the action's
        coroutine may still await (events, outputs, nested tidying) after that write, and
        a client that was shown the settled stack must not be refused for it. Every
        action stores its IN_PROGRESS state before it is launched, so a launched holder
        under a settled row wrote that state itself, whatever its action name (an
        update's rollback ends ROLLBACK_COMPLETE under the update's claim). Read only on
        the refusal path, so a free stack costs nothing."""
        rec = await self.engine.store.stacks.get(held.stack_id)
        return rec is not None and rec.status != "IN_PROGRESS"

    async def refuse_while_held(self, stack_id: str, name: str) -> None:
        """For a request that changes a stack without taking it (marking a resource
        unhealthy): ActionInProgress while an action holds the stack, unless that
        action's final state is stored, which is waited for instead (as :meth:`claim`
        does)."""
        while (held := self.held.get(stack_id)) is not None:
            if held.task is None or not (held.finishing
                                         or await self._final_state_written(held)):
                raise in_progress(name, held.action)
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.shield(held.task)

    @contextlib.asynccontextmanager
    async def claim(self, stack_id: str, name: str, action: str, *,
                    preempt: bool = False, take_from_dead: bool = False,
                    ) -> AsyncIterator[Claim]:
        """Hold the stack for the body, which ends by launching the action
        (:meth:`Claim.launch`); a body that raises or never launches gives it back.

        ``preempt`` (delete, abandon): cancel this process's running action instead of
        being refused. ``take_from_dead`` (a parent's delete reaching its child): a row
        lock held by an engine that is not alive is taken over at once rather than left
        for the recovery sweep (the parent's resumed delete or rollback must not fail
        on its own member). Raises ActionInProgress when another action holds the stack here
        or another process holds its row, EntityNotFound when it was deleted meanwhile."""
        claim = await self._clear_for(stack_id, name, preempt)
        claim.action = action
        try:
            await self._lock_row(claim, name, take_from_dead)
            yield claim
        finally:
            if claim.task is None:
                await self.give_back(claim)

    @contextlib.asynccontextmanager
    async def claim_new(self, stack_id: str, action: str) -> AsyncIterator[Claim]:
        """Hold a stack about to be stored: its row is written already locked by this
        engine, and a delete that finds the row before the action is launched waits for
        it instead of slipping in between."""
        claim = self.try_take(stack_id, action)
        if claim is None:  # a fresh uuid: only a caller's bug gets here
            raise RuntimeError(f"stack {stack_id} is already claimed")
        try:
            yield claim
        finally:
            if claim.task is None:
                await self.give_back(claim)

    async def _lock_row(self, claim: Claim, name: str, take_from_dead: bool) -> None:
        engine = self.engine
        locks = engine.store.locks
        if await locks.lock_stack(claim.stack_id, engine.engine_id):
            return
        if take_from_dead and await locks.take_from_dead(
                claim.stack_id, engine.engine_id,
                float(engine.conf.kiln_engine.engine_dead_after)):
            return
        rec = await engine.store.stacks.get(claim.stack_id)
        for _ in range(SETTLING_POLLS):
            if rec is None or rec.status == "IN_PROGRESS":
                break
            # another process's action has stored its final state and only tidies up
            # (purges events, releases the row): a client shown the settled stack is
            # not refused for that moment (as _final_state_written within a process)
            await asyncio.sleep(SETTLING_DELAY)  # polls the row, bounded
            if await locks.lock_stack(claim.stack_id, engine.engine_id):
                return
            rec = await engine.store.stacks.get(claim.stack_id)
        if rec is None:
            raise EntityNotFound(f"The Stack ({name}) could not be found.")
        raise in_progress(name, rec.action)
