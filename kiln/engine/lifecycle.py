"""Suspend, resume, check and mark-unhealthy: whole-stack actions without a template change.

Suspend walks dependants first (as delete does), resume and check walk requirements
first. Resource states that Heat refuses (suspending a deleted resource, resuming one
that was never suspended) fail the resource with Heat's "State (...) invalid" reason.
"""

from __future__ import annotations

from kiln.engine.actions import (
    CHECK,
    COMPLETE,
    DELETE,
    FAILED,
    IN_PROGRESS,
    INIT,
    RESUME,
    SUSPEND,
    stack_completed,
    stack_started,
)
from kiln.engine.base import ResourceNotFound, ServiceBase
from kiln.engine.claims import in_progress
from kiln.engine.context import RequestContext
from kiln.engine.core import Engine
from kiln.engine.interface import Identity
from kiln.engine.runner import ActionFailed, is_nested, run_action
from kiln.engine.scheduler import Deadline, traverse
from kiln.engine.stack import LiveStack, Slot
from kiln.errors import InvalidInput
from kiln.resources.base import ResourceFailure


class Invalid(InvalidInput):
    """Heat's ``Invalid`` (400)."""


def _invalid(slot: Slot, action: str) -> ResourceFailure:
    state = slot.state
    return ResourceFailure(f"State ('{state.action}', '{state.status}') invalid for "
                           f"{action.lower()}")


async def act(engine: Engine, stack: LiveStack, slot: Slot, action: str,
              deadline: Deadline) -> None:
    plugin = slot.plugin
    state = slot.state
    handle_name, check_name = f"handle_{action.lower()}", f"check_{action.lower()}_complete"

    # refused before anything is recorded, as Heat does
    if action == SUSPEND and (state.action == DELETE or (
            state.action != SUSPEND and state.status != COMPLETE)):
        raise ActionFailed(_invalid(slot, action).status_reason(slot.name), action)
    if action == RESUME and (state.action, state.status) not in (
            (SUSPEND, COMPLETE), (RESUME, FAILED), (RESUME, COMPLETE)):
        raise ActionFailed(_invalid(slot, action).status_reason(slot.name), action)
    await run_action(engine.recorder, engine.poller, stack, slot, action,
                     getattr(plugin, handle_name), getattr(plugin, check_name),
                     abort_reason=deadline.reason)


async def check_one(engine: Engine, stack: LiveStack, slot: Slot, deadline: Deadline) -> None:
    plugin = slot.plugin
    initial = slot.state.action == INIT and slot.state.status == COMPLETE
    if not plugin.supports(CHECK):
        if initial:
            return  # better INIT_COMPLETE than implying it was checked and exists
        await engine.recorder.resource(stack, slot, CHECK, COMPLETE,
                                       f"CHECK not supported for {slot.definition.type}")
        return
    if initial:
        await engine.recorder.resource(stack, slot, CHECK, FAILED,
                                       f"Can not check {slot.name}, resource not created yet.")
        raise ResourceFailure(f"Resource {slot.name} not created yet.", exc_type="Exception")
    await run_action(engine.recorder, engine.poller, stack, slot, CHECK, plugin.handle_check,
                     plugin.check_check_complete, abort_reason=deadline.reason)


async def run_simple(engine: Engine, stack: LiveStack, action: str) -> None:
    """The stack row is already ``<action>_IN_PROGRESS`` and locked."""
    graph = engine.graph(stack)
    if action == SUSPEND:
        graph = graph.reversed()
    deadline = Deadline(engine.timeout_seconds(stack))

    async def visit(name: str) -> None:
        slot = stack.slots[name]
        if action == CHECK:
            await check_one(engine, stack, slot, deadline)
        else:
            await act(engine, stack, slot, action, deadline)

    outcome = await traverse(graph, visit, action=action, limit=engine.limit,
                             unlimited=lambda n: is_nested(stack.slots[n]),
                             deadline=deadline, fail_fast=(action != CHECK))
    if outcome.ok:
        await engine.recorder.stack(stack, action, COMPLETE, stack_completed(action))
    else:
        await engine.recorder.stack(stack, action, FAILED, outcome.reason)


class LifecycleOps(ServiceBase):
    async def _start_simple(self, ctx: RequestContext, stack_identity: Identity,
                            action: str) -> None:
        engine = self.engine
        rec = await self._find(ctx, stack_identity)
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
        engine = self.engine
        rec = await self._find(ctx, stack_identity)
        held = engine.claims.get(rec.id)
        if held is not None:
            raise in_progress(rec.name, held.action)
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
