"""Suspend, resume, check and mark-unhealthy: whole-stack actions without a template change.

Suspend walks dependants first (as delete does), resume and check walk requirements
first. Resource states that Heat refuses (suspending a deleted resource, resuming one
that was never suspended) fail the resource with Heat's "State (...) invalid" reason.
Suspend and resume store the stack's outputs again at their end: a resource may change
its attributes in them (a deployment run on SUSPEND or RESUME brings new
``deploy_stdout``), and the outputs shown are the stored ones.
"""

from __future__ import annotations

from kiln.db.records import StackValues
from kiln.engine.model import outputs
from kiln.engine.model.live_stack import LiveStack, Slot
from kiln.engine.model.states import (
    CHECK,
    COMPLETE,
    DELETE,
    FAILED,
    INIT,
    RESUME,
    SUSPEND,
    stack_completed,
)
from kiln.engine.runtime.engine import Engine
from kiln.engine.runtime.runner import ActionFailed, is_nested, plugin_steps, run_action
from kiln.engine.runtime.scheduler import Deadline, traverse
from kiln.resources.base import ResourceFailure


def _invalid(slot: Slot, action: str) -> ResourceFailure:
    state = slot.state
    return ResourceFailure(f"State ('{state.action}', '{state.status}') invalid for "
                           f"{action.lower()}")


async def act(engine: Engine, stack: LiveStack, slot: Slot, action: str,
              deadline: Deadline) -> None:
    plugin = slot.plugin
    state = slot.state
    # refused before anything is recorded, as Heat does
    if action == SUSPEND and (state.action == DELETE or (
            state.action != SUSPEND and state.status != COMPLETE)):
        raise ActionFailed(_invalid(slot, action).status_reason(slot.name), action)
    if action == RESUME and (state.action, state.status) not in (
            (SUSPEND, COMPLETE), (RESUME, FAILED), (RESUME, COMPLETE)):
        raise ActionFailed(_invalid(slot, action).status_reason(slot.name), action)
    await run_action(engine.recorder, engine.poller, stack, slot, action,
                     *plugin_steps(plugin, action),
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
    values: StackValues | None = (None if action == CHECK
                                  else {"outputs": outputs.resolve_all(stack)})
    reason = stack_completed(action) if outcome.ok else outcome.reason
    if action == CHECK and not checks_fully(stack):
        reason += PARTIAL_CHECK
    await engine.recorder.stack(stack, action, COMPLETE if outcome.ok else FAILED, reason,
                                extra=values)


#: what Heat 27 adds to a checked stack's reason when a resource cannot check itself
PARTIAL_CHECK = ". 'CHECK' not fully supported (see resources)"


def checks_fully(stack: LiveStack) -> bool:
    """Whether every resource checks itself, whatever its state. A resource backed by a
    child stack counts as one that does: Heat 27 adds the note to the child's reason
    only (seen on the peer with a ResourceGroup and an OS::Heat::Stack of Values)."""
    return all(slot.plugin.supports(CHECK) for slot in stack.slots.values())
