"""Abandon, export and adopt: a stack's data handed out, or taken in.

The body is Heat's ``prepare_abandon`` document: the stack's name, id, action, status,
template, environment, files, project, tags and, per resource, its physical id, type,
state, metadata and private data. Export returns it and keeps the stack; abandon returns
it and deletes the stack's rows while retaining every physical resource (the delete runs
as if each resource had ``deletion_policy: Retain``, so the events read as Heat's do);
adopt creates a stack whose resources take over the physical ids of such a document
(action ADOPT, each plugin's ``handle_adopt``).

Heat 27 ships with ``enable_stack_abandon``/``enable_stack_adopt`` off; Kiln always
allows both.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from kiln.engine.actions.create import prepare, rollback_create
from kiln.engine.model import outputs
from kiln.engine.model.live_stack import LiveStack, Slot
from kiln.engine.model.states import (
    ADOPT,
    COMPLETE,
    FAILED,
    stack_completed,
)
from kiln.engine.runtime.engine import Engine
from kiln.engine.runtime.runner import run_action
from kiln.engine.runtime.scheduler import Deadline, traverse
from kiln.errors import StackValidationFailed

#: Heat's abandon document (and its per-resource entries): JSON, handed out as it is
JSON = dict[str, Any]


def resource_data(slot: Slot) -> JSON:
    state = slot.state
    return {"name": slot.name, "resource_id": state.resource_id,
            "type": slot.definition.type, "action": state.action, "status": state.status,
            "metadata": state.shown_metadata(), "resource_data": dict(state.data)}


def stack_data(stack: LiveStack, *, no_resources: bool = False) -> JSON:
    info = stack.info
    return {
        "name": info.name, "id": info.id, "action": info.action,
        "environment": stack.environment.to_dict(), "files": dict(stack.files),
        "status": info.status, "template": dict(stack.template.raw),
        "resources": {} if no_resources else {
            name: resource_data(slot) for name, slot in stack.slots.items()},
        "project_id": info.project_id,
        "stack_user_project_id": info.stack_user_project_id or info.project_id,
        "tags": list(info.tags),
    }


async def abandon_data(stack: LiveStack) -> JSON:
    """The export/abandon body, with each plugin's own ``handle_abandon`` data, so a plugin
    that keeps more than its resource data can hand all of it to a later adopt."""
    data = stack_data(stack)
    for name, slot in stack.slots.items():
        data["resources"][name]["resource_data"] = dict(await slot.plugin.handle_abandon())
    return data


def parse_adopt_data(value: Any) -> dict[str, Any]:
    """``adopt_stack_data`` as the API passes it: a JSON string or a mapping."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise StackValidationFailed(f"Invalid adopt data: {exc}") from None
    if not isinstance(value, Mapping):
        raise StackValidationFailed("Invalid adopt data: it must be a map")
    return dict(value)


async def adopt_resource(engine: Engine, stack: LiveStack, slot: Slot, data: Any,
                         deadline: Deadline) -> None:
    plugin = slot.plugin

    async def handle() -> Any:
        prepare(stack, slot)
        return await plugin.handle_adopt(data if isinstance(data, Mapping) else {})

    await run_action(engine.recorder, engine.poller, stack, slot, ADOPT, handle,
                     plugin.check_adopt_complete, abort_reason=deadline.reason)


async def run_adopt(engine: Engine, stack: LiveStack, adopt: Mapping[str, Any]) -> None:
    """Like a create, but each resource adopts its physical counterpart."""
    given = adopt.get("resources") or {}
    deadline = Deadline(engine.timeout_seconds(stack))

    async def visit(name: str) -> None:
        await adopt_resource(engine, stack, stack.slots[name], given.get(name), deadline)

    outcome = await traverse(engine.graph(stack), visit, action=ADOPT, limit=engine.limit,
                             deadline=deadline, cancel=engine.cancels.get(stack.info.id))
    values: Any = {"outputs": outputs.resolve_all(stack)}
    if outcome.ok:
        await engine.recorder.stack(stack, ADOPT, COMPLETE, stack_completed(ADOPT),
                                    extra=values)
        return
    failed = engine.recorder.stack(stack, ADOPT, FAILED, outcome.reason, extra=values)
    if not stack.info.disable_rollback:
        await rollback_create(engine, stack, after=failed)
    else:
        await failed


def retain_everything(stack: LiveStack) -> None:
    """Abandon deletes rows, never physical resources."""
    for slot in stack.slots.values():
        slot.definition = dataclasses.replace(slot.definition, deletion_policy="Retain")
