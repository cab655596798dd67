"""Forwarding a request to the engine that holds its stack.

Only the process running a stack's action can cancel it, signal its plugins or stop it
for a delete (its asyncio task, its cancel event). When several processes share the
database (kiln.rpc), a request reaching another process is sent on to that engine with
``invoke`` and its reply (or error) returned as if run here. Each method that needs it
decides in one line, before doing anything itself::

    if fwd := await self.forwarding.forward_to_holder("delete_stack", ctx, stack_identity):
        return fwd.reply

:meth:`ForwardingOps.forward_to_engine` likewise sends a method an API process must
not run itself to any engine.

Not forwarded: in ``kiln serve`` (no dispatch: the first test costs nothing else), a
call already forwarded once (no ping-pong while a lock moves), a stack nobody holds or
this engine holds, and a holder that is not a live engine (an API process admitting an
action holds the lock only for that moment; a dead engine's stack is the sweep's).
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from kiln.engine.model.context import RequestContext
from kiln.engine.service.interface import Identity
from kiln.engine.service.recovery import ENGINE_BINARY, service_body
from kiln.engine.service.shared import ServiceCore

T = TypeVar("T")

#: set while running a call another process forwarded here
_FORWARDED: contextvars.ContextVar[bool] = contextvars.ContextVar("kiln_forwarded",
                                                                  default=False)


async def forwarded_call(call: Awaitable[T]) -> T:
    """Run ``call`` (an EngineService call delivered by the broker) as forwarded."""
    token = _FORWARDED.set(True)
    try:
        return await call
    finally:
        _FORWARDED.reset(token)


@dataclass(frozen=True)
class Forwarded:
    """The reply of a forwarded call (a dataclass, so ``None`` replies stay truthy)."""

    reply: Any


class ForwardingOps:
    """Runs a call where it belongs when engines share a database: on the engine
    holding the stack, or on any engine (see the module)."""

    def __init__(self, core: ServiceCore) -> None:
        self.core = core

    async def forward_to_holder(self, method: str, ctx: RequestContext,
                                stack_identity: Identity | str,
                                **kwargs: Any) -> Forwarded | None:
        """Run ``method`` on the live engine holding the stack's (or its root stack's)
        lock, when that is another engine; None: run it here."""
        dispatch = self.core.dispatch
        if dispatch is None or _FORWARDED.get():
            return None
        rec = await self.core.find(ctx, stack_identity)
        holder = rec.engine_id
        if holder is None and rec.root_stack_id and rec.root_stack_id != rec.id:
            root = await self.core.store.stacks.get(rec.root_stack_id)
            holder = root.engine_id if root is not None else None
        me = self.core.engine.engine_id
        if holder is None or holder == me or not await self._live_engine(holder):
            return None
        identity = (stack_identity if isinstance(stack_identity, str)
                    else _plain(stack_identity))
        reply = await dispatch.invoke(method, ctx, {"stack_identity": identity, **kwargs},
                                      server=holder)
        return Forwarded(reply)

    async def forward_to_engine(self, method: str, ctx: RequestContext,
                                **kwargs: Any) -> Forwarded | None:
        """In an API process that runs no action: run ``method`` on any one engine (a
        call to the topic). For the actions an engine cannot resume from what admission
        stores (an adoption's resource data, an abandon's retained resources, a restore's
        snapshot data); None elsewhere: run it here."""
        dispatch = self.core.dispatch
        if dispatch is None or dispatch.runs_actions or _FORWARDED.get():
            return None
        return Forwarded(await dispatch.invoke(method, ctx, kwargs))

    async def _live_engine(self, engine_id: str) -> bool:
        """An engine whose heartbeat is fresh, or, late with it, that answers a ping (it
        may only be starved of CPU: it still runs the stack, as the engines' sweep also
        finds before taking it over)."""
        for row in await self.core.store.engines.services():
            if row.engine_id == engine_id:
                if row.binary != ENGINE_BINARY:
                    return False
                if service_body(row)["status"] == "up":
                    return True
                dispatch = self.core.dispatch
                return dispatch is not None and bool(await dispatch.alive(engine_id))
        return False


def _plain(identity: Mapping[str, Any]) -> dict[str, Any]:
    return {str(k): v for k, v in identity.items()}
