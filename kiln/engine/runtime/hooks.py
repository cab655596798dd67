"""Lifecycle hooks: breakpoints that pause one resource until a user clears them.

An environment's ``resource_registry: {resources: {<glob>: {hooks: [pre-create, ...]}}}``
names the breakpoints. When the stack's action reaches a hooked resource, the engine
records the hook as set (resource data ``<hook> = "True"``, exactly where Heat keeps it,
so any engine and a restart see it), writes Heat's event ``<ACTION> paused until Hook
<hook> is cleared`` and waits. A resource signal ``{"unset_hook": "<hook>"}``
(:mod:`kiln.engine.service.signals`) deletes the key and wakes the waiter at once when it runs in
the same engine; a waiter also re-reads the key at the engine's longest poll interval, so
a signal handled by another process (``kiln api``) releases it too.

Hooks fire only for the action the *stack* is running (pre-create during a stack create,
not when an update replaces a resource), as Heat does.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kiln.db.records import NewEvent
from kiln.engine.model.live_stack import LiveStack, Slot
from kiln.engine.store import SignalWrite

if TYPE_CHECKING:
    from kiln.engine.runtime.engine import Engine

SET = "True"


def hook_name(phase: str, action: str) -> str:
    """``("pre", "CREATE")`` → ``"pre-create"``."""
    return f"{phase}-{action.lower()}"


class Breakpoints:
    """The hooks this engine is waiting on, so a signal can wake the waiter directly."""

    def __init__(self) -> None:
        self._waiting: dict[tuple[str, str, str], asyncio.Event] = {}
        self._reached: dict[tuple[str, str, str], asyncio.Event] = {}

    async def reached(self, stack_id: str, resource: str, hook: str) -> None:
        """Return once the resource is paused at the hook (its event is committed);
        for tests and tools that must act exactly while a resource waits."""
        await self._reached.setdefault((stack_id, resource, hook), asyncio.Event()).wait()

    def mark_reached(self, stack_id: str, resource: str, hook: str) -> None:
        self._reached.setdefault((stack_id, resource, hook), asyncio.Event()).set()

    def event(self, stack_id: str, resource: str, hook: str) -> asyncio.Event:
        return self._waiting.setdefault((stack_id, resource, hook), asyncio.Event())

    def release(self, stack_id: str, resource: str, hook: str) -> None:
        waiter = self._waiting.get((stack_id, resource, hook))
        if waiter is not None:
            waiter.set()

    def forget(self, stack_id: str, resource: str, hook: str) -> None:
        self._waiting.pop((stack_id, resource, hook), None)
        self._reached.pop((stack_id, resource, hook), None)

    def waiting(self) -> list[tuple[str, str, str]]:
        return list(self._waiting)


def resource_event(stack: LiveStack, slot: Slot, reason: str,
                   action: str | None = None) -> NewEvent:
    """An event about ``slot`` that does not change its state (Heat's ``_add_event``)."""
    state = slot.state
    return NewEvent(stack_id=stack.info.id, resource_name=slot.name,
                    resource_type=slot.definition.type,
                    resource_action=action or state.action, resource_status=state.status,
                    resource_status_reason=reason, physical_resource_id=state.resource_id,
                    resource_properties=state.properties_data)


async def save_side_state(engine: Engine, stack: LiveStack, slot: Slot, *,
                          event: NewEvent | None = None, metadata: bool = False,
                          signals: Sequence[SignalWrite] = ()) -> None:
    """Persist the slot's data (and metadata, and the ``signals`` it keeps anew)
    changed outside an action, plus an event, in one write.

    Yields once first so transitions the recorder queued earlier in this loop turn reach
    the writer before this job: the database then sees the changes in program order.
    """
    await asyncio.sleep(0)
    data, saved = slot.state.data, slot.saved_data
    data_set = {k: str(v) for k, v in data.items() if saved.get(k) != v}
    data_del = [k for k in saved if k not in data]
    slot.saved_data = dict(data)
    await engine.store.resources.save_side_state(
        slot.db_id, data_set, data_del, dict(slot.state.metadata) if metadata else None,
        event, signals)


async def _still_set(engine: Engine, slot: Slot, hook: str) -> bool:
    """Re-read the hook key from the database (a signal may have come to another
    process); the in-memory state follows what is stored."""
    stored = await engine.store.resources.data(slot.db_id)
    if stored.get(hook) == SET:
        return True
    slot.state.data.pop(hook, None)
    slot.saved_data.pop(hook, None)
    return False


def may_pause(stack: LiveStack, slot: Slot, phase: str, action: str) -> bool:
    """Whether :func:`pause` could stop ``slot`` here (the stack runs ``action`` and the
    environment hooks the resource there)."""
    return (stack.info.action == action
            and hook_name(phase, action) in stack.environment.registry.hooks_for(slot.name))


async def pause(engine: Engine, stack: LiveStack, slot: Slot, phase: str, action: str) -> None:
    """Stop here while the ``<phase>-<action>`` hook of ``slot`` is set.

    A no-op unless the stack itself is running ``action`` and the environment hooks this
    resource. Cancellation (a delete pre-empting the action, a timeout) clears the hook,
    as Heat does when the wait is interrupted.
    """
    if stack.info.action != action:
        return
    hook = hook_name(phase, action)
    if hook not in stack.environment.registry.hooks_for(slot.name):
        return
    breakpoints = engine.breakpoints
    waiter = breakpoints.event(stack.info.id, slot.name, hook)
    waiter.clear()
    slot.state.data[hook] = SET
    await save_side_state(engine, stack, slot, event=resource_event(
        stack, slot, f"{action} paused until Hook {hook} is cleared"))
    breakpoints.mark_reached(stack.info.id, slot.name, hook)
    interval = max(float(engine.conf.kiln_engine.poll_max_delay), 0.05)
    try:
        while slot.state.data.get(hook) == SET:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(waiter.wait(), interval)
            waiter.clear()
            if slot.state.data.get(hook) == SET and not await _still_set(engine, slot, hook):
                break
    except asyncio.CancelledError:
        slot.state.data.pop(hook, None)
        raise
    finally:
        breakpoints.forget(stack.info.id, slot.name, hook)
