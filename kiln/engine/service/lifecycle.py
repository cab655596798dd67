"""EngineService: suspend, resume, check and mark-unhealthy calls (the walks are in
:mod:`kiln.engine.actions.lifecycle`).
"""

from __future__ import annotations

from kiln.engine.actions.lifecycle import run_simple
from kiln.engine.model.context import RequestContext
from kiln.engine.model.states import (
    CHECK,
    COMPLETE,
    DELETE,
    FAILED,
    IN_PROGRESS,
    RESUME,
    SUSPEND,
    stack_started,
)
from kiln.engine.runtime import acting
from kiln.engine.service.interface import Identity
from kiln.engine.service.shared import ResourceNotFound, ServiceCore
from kiln.errors import InvalidInput


class Invalid(InvalidInput):
    """Heat's ``Invalid`` (400)."""


class LifecycleOps:
    """Suspend, resume, check and mark-unhealthy: a walk each, on a claimed stack."""

    def __init__(self, core: ServiceCore) -> None:
        self.core = core

    async def _start_simple(self, ctx: RequestContext, stack_identity: Identity,
                            action: str) -> None:
        engine = self.core.engine
        rec = await self.core.find(ctx, stack_identity)
        await acting.for_request(engine, rec.root_stack_id, rec.name, ctx)
        async with engine.claim(rec.id, rec.name, action) as claim:
            stack = await engine.load(rec.id)
            await engine.recorder.stack(stack, action, IN_PROGRESS, stack_started(action))
            claim.launch(lambda: run_simple(engine, stack, action))

    async def stack_suspend(self, ctx: RequestContext, stack_identity: Identity) -> None:
        await self._start_simple(ctx, stack_identity, SUSPEND)

    async def stack_resume(self, ctx: RequestContext, stack_identity: Identity) -> None:
        await self._start_simple(ctx, stack_identity, RESUME)

    async def stack_check(self, ctx: RequestContext, stack_identity: Identity) -> None:
        await self._start_simple(ctx, stack_identity, CHECK)

    async def resource_mark_unhealthy(self, ctx: RequestContext, stack_identity: Identity,
                                      resource_name: str, mark_unhealthy: bool,
                                      resource_status_reason: str | None = None) -> None:
        if not isinstance(mark_unhealthy, bool):
            raise Invalid("Invalid input: mark_unhealthy is not a boolean")
        engine = self.core.engine
        rec = await self.core.find(ctx, stack_identity)
        await engine.claims.refuse_while_held(rec.id, rec.name)
        stack = await engine.load(rec.id)
        slot = stack.slots.get(resource_name) or next(
            (s for s in stack.slots.values() if s.physical_id == resource_name), None)
        if slot is None:
            raise ResourceNotFound.in_stack(resource_name, rec.name)
        reason = resource_status_reason or "state changed by resource_mark_unhealthy api"
        state = slot.state
        if mark_unhealthy:
            if state.action != DELETE:
                await engine.recorder.resource(stack, slot, CHECK, FAILED, reason)
        elif (state.action, state.status) == (CHECK, FAILED):
            await engine.recorder.resource(stack, slot, CHECK, COMPLETE, reason)
