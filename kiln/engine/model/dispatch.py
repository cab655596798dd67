"""How one process reaches the engines of the others: the seam between the engine and
the message bus (implemented by :mod:`kiln.rpc` over oslo.messaging, wired by
kiln.server; None in ``kiln serve``'s all-in-one process, which dispatches nothing).

The database stays the record of all work: a stack left IN_PROGRESS with no holder is
queued, and any engine's recovery sweep runs it. The bus only makes that faster
(:meth:`Dispatch.wake`) and reaches the one engine that holds a stack's running action
(:meth:`Dispatch.invoke`), which only that process can cancel or signal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from kiln.engine.model.context import RequestContext


class Dispatch(Protocol):
    #: whether this process runs stack actions itself (an engine, ``kiln serve``); an API
    #: process admits them and hands them to the engines
    runs_actions: bool

    async def wake(self, stack_id: str) -> bool:
        """Ask one engine to take the queued stack now (a cast: nothing waits for the
        work). False when the broker cannot be reached: the stack stays queued in the
        database for the engines' sweep."""
        ...

    async def alive(self, server: str) -> bool | None:
        """Whether engine ``server`` answers a ping within ``engine_life_check_timeout``:
        an engine whose heartbeat is late may only be starved of CPU, and its stacks are
        not taken over while it answers (as Heat pings a lock's holder before stealing
        the lock). None when this process cannot ask yet (its reply queue is not made:
        it is starting, or the broker is away)."""
        ...

    async def invoke(self, method: str, ctx: RequestContext, kwargs: Mapping[str, Any], *,
                     server: str | None = None) -> Any:
        """Run the EngineService ``method`` on engine ``server`` (None: any engine) and
        return its reply; an error it raised (a :class:`kiln.errors.KilnError`) is
        raised here as the same class."""
        ...
