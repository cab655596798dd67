"""Helpers for the per-backend action tests: run an action to its end, then read back
what a user of the API sees (statuses, events, physical ids, outputs)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.engine.service import EngineService, RequestContext

#: an action that keeps running longer than any test may take, so only a cancel ends it
LONG = 600
#: how long a test waits for an action it has cancelled or pre-empted to end
PROMPT = 30


def hot(resources: dict[str, Any], outputs: dict[str, Any] | None = None,
        **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"heat_template_version": "2018-08-31", "resources": resources}
    if outputs:
        body["outputs"] = outputs
    body.update(extra)
    return body


def tres(value: Any, depends: list[str] | None = None, **props: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"type": "OS::Heat::TestResource",
                            "properties": {"value": value, **props}}
    if depends:
        body["depends_on"] = depends
    return body


def hooked(resource: str, *hooks: str) -> dict[str, Any]:
    """The environment that sets breakpoints on one resource."""
    return {"resource_registry": {"resources": {resource: {"hooks": list(hooks)}}}}


async def create(svc: EngineService, ctx: RequestContext, name: str, template: Any, *,
                 env: Mapping[str, Any] | None = None, files: Mapping[str, str] | None = None,
                 **args: Any) -> dict[str, Any]:
    ident = await svc.create_stack(ctx, name, template, env or {}, files or {}, args)
    await svc.wait_for_stack(ident["stack_id"], timeout=PROMPT)
    return await svc.show_stack(ctx, ident)


async def update(svc: EngineService, ctx: RequestContext, ident: Any, template: Any, *,
                 env: Mapping[str, Any] | None = None, files: Mapping[str, str] | None = None,
                 **args: Any) -> dict[str, Any]:
    await svc.update_stack(ctx, ident, template, env or {}, files or {}, args)
    await svc.wait_for_stack(ident["stack_id"], timeout=PROMPT)
    return await svc.show_stack(ctx, ident)


async def act(svc: EngineService, ctx: RequestContext, ident: Any, call: str,
              *extra: Any) -> dict[str, Any]:
    """A stack action by method name (``stack_suspend``, ``delete_stack``...), to its end."""
    await getattr(svc, call)(ctx, ident, *extra)
    await svc.wait_for_stack(ident["stack_id"], timeout=PROMPT)
    return await svc.show_stack(ctx, ident)


async def events(svc: EngineService, ctx: RequestContext, ident: Any,
                 ) -> list[tuple[str, str, str]]:
    """(resource_name, ACTION_STATUS, reason), oldest first."""
    return [(e["resource_name"], e["resource_status"], e["resource_status_reason"])
            for e in await svc.list_events(ctx, ident, sort_dir="asc")]


async def steps(svc: EngineService, ctx: RequestContext, ident: Any,
                since: int = 0) -> list[tuple[str, str]]:
    """(resource_name, ACTION_STATUS) of the events after the first ``since``."""
    return [(n, s) for n, s, _ in (await events(svc, ctx, ident))[since:]]


async def statuses(svc: EngineService, ctx: RequestContext, ident: Any) -> dict[str, str]:
    return {r["resource_name"]: r["resource_status"]
            for r in await svc.list_stack_resources(ctx, ident)}


async def physical(svc: EngineService, ctx: RequestContext, ident: Any) -> dict[str, str]:
    return {r["resource_name"]: r["physical_resource_id"]
            for r in await svc.list_stack_resources(ctx, ident)}


def outputs(stack: Mapping[str, Any]) -> dict[str, Any]:
    return {o["output_key"]: o.get("output_value") for o in stack.get("outputs") or []}


def state(stack: Mapping[str, Any]) -> tuple[str, str]:
    return stack["stack_status"], stack["stack_status_reason"]
