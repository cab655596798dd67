"""Drift detection: each resource's physical object read back and compared with the
template, property by property, nested stacks included (unlike CloudFormation).

Nothing here changes a resource, a stack row or an event: the outcome is one
``drift_detection`` row per stack looked at (the service adds the rows; :func:`detect`
fills them). The reads run with the stack's own identity (its trust, as deferred work
does: :func:`kiln.engine.runtime.acting.without_request`) and at most
``[kiln_engine] drift_concurrency`` at once per detection.

What counts: the properties the template set (its own keys, or a value that is not the
schema's default, as a deprecated name translated to its successor), with the values
the last action ran with; the plugin's :meth:`~kiln.resources.base.Resource.live_state`
says which of them it can read back.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kiln.engine.model import drift as model
from kiln.engine.model.live_stack import LiveStack, Slot
from kiln.engine.model.states import COMPLETE, DELETE, INIT
from kiln.engine.runtime import acting
from kiln.engine.runtime.engine import Engine
from kiln.errors import KilnError
from kiln.resources.base import Resource
from kiln.resources.live_state import GONE, NOT_CHECKED, LiveState

LOG = logging.getLogger(__name__)

#: statuses that make a stack DRIFTED
DRIFTED_STATUSES = frozenset({model.MODIFIED, model.DELETED})
UNKNOWN = "UNKNOWN"


@dataclass
class StackResult:
    """One stack's own results, and its nested stacks' (by their ids)."""

    stack_id: str
    stack_name: str
    entries: list[dict[str, Any]] = field(default_factory=list)
    children: list[StackResult] = field(default_factory=list)

    def all_entries(self) -> list[dict[str, Any]]:
        out = list(self.entries)
        for child in self.children:
            out += child.all_entries()
        return out

    def walk(self) -> list[StackResult]:
        out = [self]
        for child in self.children:
            out += child.walk()
        return out


def expected_of(plugin: Resource) -> dict[str, Any]:
    """The template's values of the properties it set (see the module's docstring)."""
    props = plugin.properties
    raw = plugin.definition.properties
    given = set(raw) if isinstance(raw, Mapping) else set(getattr(props, "user_keys", ()))
    schema = plugin.properties_schema
    out: dict[str, Any] = {}
    for key in props:
        value = props.get(key)
        prop = schema.get(key)
        if value is None or prop is None:
            continue
        if key in given or prop.default is None:
            out[key] = value
    return out


def _entry(stack: LiveStack, slot: Slot, status: str, *,
           live: LiveState | None = None, diffs: list[model.Difference] | None = None,
           expected: Mapping[str, Any] | None = None, reason: str = "") -> dict[str, Any]:
    return model.resource_entry(
        stack_id=stack.info.id, stack_name=stack.info.name, name=slot.name,
        physical_id=slot.physical_id, type_name=slot.type_name, status=status,
        expected=live.expected if live is not None else expected,
        actual=live.actual if live is not None else None, diffs=diffs or [],
        reason=reason)


async def check_slot(stack: LiveStack, slot: Slot, limit: asyncio.Semaphore) -> dict[str, Any]:
    """One resource's result (never raises for the resource's sake)."""
    state = slot.state
    if (state.action == INIT and state.status == COMPLETE) or slot.physical_id is None:
        return _entry(stack, slot, model.NOT_CHECKED, reason="The resource was not created.")
    if state.action == DELETE and state.status == COMPLETE:
        return _entry(stack, slot, model.NOT_CHECKED, reason="The resource was deleted.")
    plugin = slot.plugin
    try:
        expected = expected_of(plugin)
    except KilnError as exc:
        return _entry(stack, slot, UNKNOWN, reason=str(exc))
    async with limit:
        try:
            live = await plugin.live_state(expected)
        except KilnError as exc:
            return _entry(stack, slot, UNKNOWN, expected=expected,
                          reason=f"The resource could not be read: {exc}")
    if live is NOT_CHECKED:
        return _entry(stack, slot, model.NOT_CHECKED,
                      reason=f"Drift detection is not supported for {slot.type_name}.")
    if live is GONE:
        return _entry(stack, slot, model.DELETED, expected=expected,
                      reason="The physical resource no longer exists.")
    assert isinstance(live, LiveState)
    diffs = model.differences(live.expected, live.actual)
    return _entry(stack, slot, model.status_of(diffs), live=live, diffs=diffs)


async def detect_tree(engine: Engine, stack: LiveStack, limit: asyncio.Semaphore, *,
                      only: str | None = None) -> StackResult:
    """Every resource of *stack* (or the one named *only*), nested stacks walked."""
    result = StackResult(stack.info.id, stack.info.name)
    names = [only] if only is not None else list(stack.slots)

    async def one(name: str) -> tuple[dict[str, Any], StackResult | None]:
        slot = stack.slots[name]
        child_id = slot.physical_id
        if slot.plugin.is_nested_stack and child_id:
            try:
                child = await engine.load(child_id)
            except KilnError as exc:
                return _entry(stack, slot, UNKNOWN, reason=str(exc)), None
            sub = await detect_tree(engine, child, limit)
            drifted = sum(e["status"] in DRIFTED_STATUSES for e in sub.all_entries())
            status = model.MODIFIED if drifted else model.IN_SYNC
            reason = (f"{drifted} resource(s) of the nested stack drifted." if drifted
                      else "")
            return _entry(stack, slot, status, reason=reason), sub
        return await check_slot(stack, slot, limit), None

    found = await asyncio.gather(*(one(n) for n in names))
    for entry, sub in found:
        result.entries.append(entry)
        if sub is not None:
            result.children.append(sub)
    return result


def summary(entries: list[dict[str, Any]]) -> tuple[str, int]:
    """(stack drift status, drifted resources): DRIFTED when any resource is MODIFIED
    or DELETED, else IN_SYNC (a stack of types that cannot be checked is IN_SYNC, as
    in CloudFormation)."""
    drifted = sum(e["status"] in DRIFTED_STATUSES for e in entries)
    return (model.DRIFTED if drifted else model.IN_SYNC), drifted


async def detect(engine: Engine, stack_id: str, detection_id: str, *,
                 only: str | None = None, keep: int = 10) -> StackResult | None:
    """Run a detection the service added as *detection_id* and settle its row (and add
    a settled row for each nested stack). A failure settles it DETECTION_FAILED with
    the reason; None then."""
    store = engine.store.drift
    limit = asyncio.Semaphore(max(1, int(engine.conf.kiln_engine.drift_concurrency)))
    try:
        stack = await engine.load(stack_id)
        await acting.without_request(engine, stack)
        result = await detect_tree(engine, stack, limit, only=only)
    except Exception as exc:  # the detection's outcome  # noqa: BLE001
        LOG.warning("drift detection %s of stack %s failed: %s", detection_id, stack_id,
                    exc)
        await store.settle(detection_id, status=model.DETECTION_FAILED, drift_status=None,
                           drifted_count=0, reason=str(exc) or type(exc).__name__,
                           resources=None)
        return None
    for sub in result.walk()[1:] if only is None else ():
        child_id = str(uuid.uuid4())
        await store.add(child_id, sub.stack_id, scope="stack",
                        status=model.DETECTION_IN_PROGRESS, keep=keep)
        await _settle(engine, child_id, sub)
    await _settle(engine, detection_id, result)
    return result


async def _settle(engine: Engine, detection_id: str, result: StackResult) -> None:
    entries = result.all_entries()
    status, drifted = summary(entries)
    await engine.store.drift.settle(detection_id, status=model.DETECTION_COMPLETE,
                                    drift_status=status, drifted_count=drifted, reason="",
                                    resources=entries)
