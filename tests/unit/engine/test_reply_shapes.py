"""Each EngineService reply has the one shape its TypedDict declares: every required key
present, no key the TypedDict does not name (the API serialises these dicts as they are,
so a key missing here is a field missing on the wire)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, get_origin, get_type_hints

from kiln.engine.service import EngineService, RequestContext, shapes

from .support import create, hot


def _conforms(reply: Mapping[str, Any], shape: Any) -> None:
    # the hints, not __required_keys__: Python 3.11 cannot see NotRequired in the string
    # annotations of a module with `from __future__ import annotations`
    hints = get_type_hints(shape, include_extras=True)
    required = {k for k, hint in hints.items() if get_origin(hint) is not NotRequired}
    keys = set(reply)
    assert required <= keys, (shape.__name__, keys)
    assert keys <= set(hints), (shape.__name__, keys)


async def test_stack_resource_event_and_output_replies(service: EngineService,
                                                       ctx: RequestContext) -> None:
    stack = await create(service, ctx, "shapes", hot(
        {"n": {"type": "OS::Heat::None"}}, outputs={"o": {"value": "x"}}))
    ident = stack["stack_identity"]
    _conforms(ident, shapes.StackIdentityReply)
    _conforms(await service.identify_stack(ctx, "shapes"), shapes.StackIdentityReply)
    _conforms(await service.show_stack(ctx, ident), shapes.StackDetailReply)
    for summary in await service.list_stacks(ctx):
        _conforms(summary, shapes.StackSummaryReply)
    for res in await service.list_stack_resources(ctx, ident, with_detail=True):
        _conforms(res, shapes.ResourceReply)
    _conforms(await service.describe_stack_resource(ctx, ident, "n"), shapes.ResourceReply)
    events = await service.list_events(ctx, ident)
    for event in events:
        _conforms(event, shapes.EventReply)
    of_n = next(e for e in events if e["resource_name"] == "n")
    _conforms(await service.show_event(ctx, ident, "n", of_n["id"]),
              shapes.EventReply)
    for summary_out in await service.list_outputs(ctx, ident):
        _conforms(summary_out, shapes.OutputSummaryReply)
    _conforms(await service.show_output(ctx, ident, "o"), shapes.OutputReply)


async def test_snapshot_replies(service: EngineService, ctx: RequestContext) -> None:
    stack = await create(service, ctx, "shapes", hot({"n": {"type": "OS::Heat::None"}}))
    ident = stack["stack_identity"]
    taken = await service.stack_snapshot(ctx, ident, "s")
    await service.wait_for_stack(stack["id"])
    _conforms(taken, shapes.SnapshotReply)
    _conforms(await service.show_snapshot(ctx, ident, taken["id"]), shapes.SnapshotReply)
    for listed in await service.list_snapshots(ctx, ident):
        _conforms(listed, shapes.SnapshotReply)


async def test_software_replies(service: EngineService, ctx: RequestContext) -> None:
    admin = RequestContext(project_id="demo", is_admin=True, roles=("admin",),
                           username="admin", user_id="admin-user")
    cfg = await service.create_software_config(ctx, "script", "c", "echo", [], [], {})
    _conforms(cfg, shapes.SoftwareConfigReply)
    _conforms(await service.show_software_config(ctx, cfg["id"]),
              shapes.SoftwareConfigReply)
    for who in (ctx, admin):  # an admin's listing adds each config's project
        for listed in await service.list_software_configs(who):
            _conforms(listed, shapes.SoftwareConfigSummaryReply)
    dep = await service.create_software_deployment(ctx, "srv", cfg["id"], {}, "CREATE",
                                                   "IN_PROGRESS", "")
    _conforms(dep, shapes.SoftwareDeploymentReply)
    updated = await service.update_software_deployment(ctx, dep["id"], None, None, None,
                                                       None, "COMPLETE", None)
    _conforms(updated, shapes.SoftwareDeploymentReply)
    assert "updated_time" in updated
    _conforms(await service.show_software_deployment(ctx, dep["id"]),
              shapes.SoftwareDeploymentReply)
    for listed_dep in await service.list_software_deployments(ctx, "srv"):
        _conforms(listed_dep, shapes.SoftwareDeploymentReply)
    for meta in await service.get_software_deployment_metadata(ctx, "srv"):
        _conforms(meta, shapes.SoftwareConfigReply)


async def test_catalog_replies(service: EngineService, ctx: RequestContext) -> None:
    versions = await service.list_template_versions(ctx)
    for version in versions:
        _conforms(version, shapes.TemplateVersionReply)
    for condition_functions in (False, True):
        for function in await service.list_template_functions(
                ctx, versions[-1]["version"], condition_functions):
            _conforms(function, shapes.TemplateFunctionReply)


async def test_service_replies(service: EngineService, ctx: RequestContext) -> None:
    listed = await service.list_services(ctx)
    assert listed
    for entry in listed:
        _conforms(entry, shapes.ServiceReply)
