"""Export, abandon and adopt through EngineService.

The document's shape is Heat's ``prepare_abandon`` (the same one the live Heat 27 stores
as a snapshot's ``data``): stack name/id/action/status/template/environment/files/
project_id/stack_user_project_id/tags, and per resource name, resource_id, type, action,
status, metadata, resource_data. An abandoned stack's resources are taken over by a new
stack through adopt: same physical ids, same private data.
"""

from __future__ import annotations

from typing import Any

from kiln.engine.service import EngineService, RequestContext
from kiln.resources.heat.none import NoneResource
from kiln.resources.registry import global_registry

from .support import create, events, hot, resources

TEMPLATE = hot({
    "r": {"type": "OS::Heat::RandomString", "properties": {"length": 8}},
    "n": {"type": "OS::Heat::None", "depends_on": ["r"]},
}, outputs={"value": {"value": {"get_attr": ["r", "value"]}}})


async def test_export_keeps_the_stack(service: EngineService, ctx: RequestContext) -> None:
    stack = await create(service, ctx, "exp", TEMPLATE, tags="a,b")
    ident = stack["stack_identity"]
    data = await service.export_stack(ctx, ident)
    assert set(data) == {"name", "id", "action", "environment", "files", "status",
                         "template", "resources", "project_id", "stack_user_project_id",
                         "tags"}
    assert (data["name"], data["id"], data["action"], data["status"]) == (
        "exp", stack["id"], "CREATE", "COMPLETE")
    assert data["template"] == TEMPLATE
    assert data["tags"] == ["a", "b"]
    assert data["project_id"] == "demo"
    value = stack["outputs"][0]["output_value"]
    assert data["resources"]["r"] == {
        "name": "r", "resource_id": data["resources"]["r"]["resource_id"],
        "type": "OS::Heat::RandomString", "action": "CREATE", "status": "COMPLETE",
        "metadata": {}, "resource_data": {"value": value}}
    assert data["resources"]["n"]["resource_data"] == {"is_placeholder": "True"}
    assert (await service.show_stack(ctx, ident))["stack_status"] == "CREATE_COMPLETE"


async def test_abandon_then_adopt_takes_over_the_resources(
        service: EngineService, ctx: RequestContext) -> None:
    stack = await create(service, ctx, "old", TEMPLATE)
    ident = stack["stack_identity"]
    before = {r["resource_name"]: r["physical_resource_id"]
              for r in await service.list_stack_resources(ctx, ident)}
    data: dict[str, Any] = await service.abandon_stack(ctx, ident)
    await service.wait_for_stack(stack["id"])
    assert await service.list_stacks(ctx) == []
    assert (await service.show_stack(ctx, ident))["stack_status"] == "DELETE_COMPLETE"
    # the delete retained everything: events as for deletion_policy Retain
    assert ("r", "DELETE_COMPLETE", "state changed") in await events(service, ctx, ident)

    adopted = await service.create_stack(ctx, "new", None, {}, {},  # type: ignore[arg-type]
                                         {"adopt_stack_data": data})
    await service.wait_for_stack(adopted["stack_id"])
    shown = await service.show_stack(ctx, adopted)
    assert shown["stack_status"] == "ADOPT_COMPLETE"
    assert shown["stack_status_reason"] == "Stack ADOPT completed successfully"
    assert shown["outputs"][0]["output_value"] == stack["outputs"][0]["output_value"]
    assert await resources(service, ctx, adopted) == {"r": "ADOPT_COMPLETE",
                                                      "n": "ADOPT_COMPLETE"}
    after = {r["resource_name"]: r["physical_resource_id"]
             for r in await service.list_stack_resources(ctx, adopted)}
    assert after == before
    evs = await events(service, ctx, adopted)
    assert evs[0] == ("new", "ADOPT_IN_PROGRESS", "Stack ADOPT started")
    assert evs.index(("r", "ADOPT_COMPLETE", "state changed")) < \
        evs.index(("n", "ADOPT_IN_PROGRESS", "state changed"))
    # an adopted stack is an ordinary stack afterwards
    await service.delete_stack(ctx, adopted)
    await service.wait_for_stack(adopted["stack_id"])
    assert (await service.show_stack(ctx, adopted))["stack_status"] == "DELETE_COMPLETE"


async def test_adopt_data_may_be_a_json_string(service: EngineService,
                                               ctx: RequestContext) -> None:
    import json

    stack = await create(service, ctx, "src", TEMPLATE)
    data = await service.export_stack(ctx, stack["stack_identity"])
    adopted = await service.create_stack(ctx, "copy", TEMPLATE, {}, {},
                                         {"adopt_stack_data": json.dumps(data)})
    await service.wait_for_stack(adopted["stack_id"])
    shown = await service.show_stack(ctx, adopted)
    assert shown["stack_status"] == "ADOPT_COMPLETE"
    assert shown["outputs"] == stack["outputs"]


class _KeepsMore(NoneResource):
    """A plugin whose abandon data is more than its stored resource data."""

    type_name = "Kiln::Test::KeepsMore"

    async def handle_abandon(self) -> dict[str, Any]:
        return {**self.data, "handover": "token-42"}


async def test_abandon_body_carries_the_plugins_own_abandon_data(
        service: EngineService, ctx: RequestContext) -> None:
    registry = global_registry()
    registry.register(_KeepsMore.type_name, _KeepsMore)
    try:
        stack = await create(service, ctx, "keeps", hot({"k": {"type": _KeepsMore.type_name}}))
        data: dict[str, Any] = await service.abandon_stack(ctx, stack["stack_identity"])
    finally:
        registry._types.pop(_KeepsMore.type_name, None)
    assert data["resources"]["k"]["resource_data"]["handover"] == "token-42"
