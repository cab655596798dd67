"""Helpers for engine tests: run an action to its end and read back what users see."""

from __future__ import annotations

from typing import Any

from kiln.engine.service import EngineService, RequestContext


def hot(resources: dict[str, Any], outputs: dict[str, Any] | None = None,
        **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"heat_template_version": "2018-08-31", "resources": resources}
    if outputs:
        body["outputs"] = outputs
    body.update(extra)
    return body


async def create(svc: EngineService, ctx: RequestContext, name: str, template: Any, *,
                 params: dict[str, Any] | None = None, files: dict[str, str] | None = None,
                 **args: Any) -> dict[str, Any]:
    ident = await svc.create_stack(ctx, name, template, params or {}, files or {}, args)
    await svc.wait_for_stack(ident["stack_id"])
    return await svc.show_stack(ctx, ident)


async def events(svc: EngineService, ctx: RequestContext, ident: Any,
                 ) -> list[tuple[str, str, str]]:
    """(resource_name, status, reason), oldest first."""
    evs = await svc.list_events(ctx, ident, sort_dir="asc")
    return [(e["resource_name"], e["resource_status"], e["resource_status_reason"])
            for e in evs]


async def resources(svc: EngineService, ctx: RequestContext, ident: Any) -> dict[str, str]:
    return {r["resource_name"]: r["resource_status"]
            for r in await svc.list_stack_resources(ctx, ident)}
