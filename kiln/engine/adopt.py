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
from collections.abc import Mapping, Sequence
from typing import Any

from kiln.engine import delete as delete_action
from kiln.engine import newstack, outputs
from kiln.engine.actions import (
    ADOPT,
    COMPLETE,
    DELETE,
    FAILED,
    IN_PROGRESS,
    stack_completed,
    stack_started,
)
from kiln.engine.base import ServiceBase
from kiln.engine.context import RequestContext
from kiln.engine.core import Engine
from kiln.engine.create import prepare, rollback_create
from kiln.engine.interface import JSON, Identity
from kiln.engine.runner import run_action
from kiln.engine.scheduler import Deadline, traverse
from kiln.engine.stack import LiveStack, Slot
from kiln.errors import StackValidationFailed


def resource_data(slot: Slot) -> JSON:
    state = slot.state
    return {"name": slot.name, "resource_id": state.resource_id,
            "type": slot.definition.type, "action": state.action, "status": state.status,
            "metadata": dict(state.metadata), "resource_data": dict(state.data)}


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
    await engine.recorder.stack(stack, ADOPT, FAILED, outcome.reason, extra=values)
    if not stack.info.disable_rollback:
        await rollback_create(engine, stack)


def retain_everything(stack: LiveStack) -> None:
    """Abandon deletes rows, never physical resources."""
    for slot in stack.slots.values():
        slot.definition = dataclasses.replace(slot.definition, deletion_policy="Retain")


class AdoptOps(ServiceBase):
    async def _stack_data(self, ctx: RequestContext, stack_identity: Identity,
                          ) -> tuple[LiveStack, JSON]:
        rec = await self._find(ctx, stack_identity)
        stack = await self.engine.load(rec.id)
        return stack, await abandon_data(stack)

    async def export_stack(self, ctx: RequestContext, stack_identity: Identity) -> JSON:
        return (await self._stack_data(ctx, stack_identity))[1]

    async def abandon_stack(self, ctx: RequestContext, stack_identity: Identity) -> JSON:
        engine = self.engine
        rec = await self._find(ctx, stack_identity)
        async with engine.claim(rec.id, rec.name, DELETE, preempt=True) as claim:
            stack = await engine.load(rec.id)
            data = await abandon_data(stack)
            await engine.recorder.stack(stack, DELETE, IN_PROGRESS, stack_started(DELETE))
            retain_everything(stack)
            claim.launch(lambda: delete_action.run_delete(engine, stack), stack)
        return data

    async def create_stack(self, ctx: RequestContext, stack_name: str,
                           template: Mapping[str, Any] | str, params: Mapping[str, Any],
                           files: Mapping[str, str], args: Mapping[str, Any],
                           environment_files: Sequence[str] | None = None) -> JSON:
        if args.get("adopt_stack_data"):
            return await self.adopt_stack(ctx, stack_name, template, params, files, args,
                                          environment_files)
        created: JSON = await super().create_stack(ctx, stack_name, template, params, files,
                                                   args, environment_files)
        return created

    async def adopt_stack(self, ctx: RequestContext, stack_name: str,
                          template: Mapping[str, Any] | str | None,
                          params: Mapping[str, Any], files: Mapping[str, str],
                          args: Mapping[str, Any],
                          environment_files: Sequence[str] | None = None) -> JSON:
        """create_stack with ``args["adopt_stack_data"]``: the template defaults to the
        adopted document's own."""
        engine = self.engine
        adopt = parse_adopt_data(args["adopt_stack_data"])
        body = template if template else adopt.get("template")
        if not body:
            raise StackValidationFailed("No Template provided.")
        env_body = dict(params or {}) or dict(adopt.get("environment") or {})
        all_files = {**(adopt.get("files") or {}), **(files or {})}
        stack = await newstack.prepare(engine, ctx, stack_name, body, env_body, all_files,
                                       environment_files, args, action=ADOPT)
        async with engine.claims.claim_new(stack.info.id, ADOPT) as claim:
            await newstack.store(engine, stack)
            claim.launch(lambda: run_adopt(engine, stack, adopt), stack)
        return stack.identity_dict()

