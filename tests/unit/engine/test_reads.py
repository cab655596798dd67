"""What the read calls answer, as Heat 27 answers them (observed on the live Heat 27)."""

from __future__ import annotations

import pytest

from kiln.engine.service import EngineService, RequestContext
from kiln.errors import EntityNotFound

from .support import create, hot

MISSING_ID = "6b1a6f3e-0000-4000-8000-000000000000"


async def test_missing_stack_is_named_as_the_caller_named_it(
        service: EngineService, ctx: RequestContext) -> None:
    ident = {"tenant": "demo", "stack_name": "reads_gone", "stack_id": MISSING_ID, "path": ""}
    with pytest.raises(EntityNotFound) as info:
        await service.show_stack(ctx, ident)
    assert str(info.value) == "The Stack (reads_gone) could not be found."


async def test_stack_id_under_another_name_is_not_found(
        service: EngineService, ctx: RequestContext) -> None:
    stack = await create(service, ctx, "reads_real", hot({"a": {"type": "OS::Heat::None"}}))
    wrong = dict(stack["stack_identity"], stack_name="reads_wrong")
    with pytest.raises(EntityNotFound) as info:
        await service.show_stack(ctx, wrong)
    assert str(info.value) == "The Stack (reads_wrong) could not be found."
    assert (await service.show_stack(ctx, stack["stack_identity"]))["id"] == stack["id"]


async def test_missing_resource_names_the_stack(service: EngineService,
                                                ctx: RequestContext) -> None:
    stack = await create(service, ctx, "reads_res", hot({"a": {"type": "OS::Heat::None"}}))
    ident = stack["stack_identity"]
    with pytest.raises(EntityNotFound) as shown:
        await service.describe_stack_resource(ctx, ident, "nope")
    with pytest.raises(EntityNotFound) as marked:
        await service.resource_mark_unhealthy(ctx, ident, "nope", True)
    for info in (shown, marked):
        assert info.value.error_type == "ResourceNotFound"
        assert str(info.value) == "The Resource (nope) could not be found in Stack reads_res."


@pytest.mark.parametrize(("filters", "names"), [
    ({"type": "OS::Heat::RandomString"}, ["r"]),
    ({"type": "OS::Heat::Valu"}, ["v"]),          # part of the type name is enough
    ({"type": "Heat"}, ["v", "r"]),
    ({"status": "COMPLETE"}, ["v", "r"]),
    ({"status": "CREATE_COMPLETE"}, ["v", "r"]),
    ({"status": "FAILED"}, []),
    ({"action": "CREATE"}, ["v", "r"]),
    ({"action": "DELETE"}, []),
    ({"name": "v", "status": "FAILED"}, []),
    ({"name": ["v", "r"], "type": "Value"}, ["v"]),
])
async def test_resource_list_filters(service: EngineService, ctx: RequestContext,
                                     filters: dict[str, object], names: list[str]) -> None:
    stack = await create(service, ctx, "reads_filter", hot({
        "v": {"type": "OS::Heat::Value", "properties": {"value": "hello"}},
        "r": {"type": "OS::Heat::RandomString"}}))
    listed = await service.list_stack_resources(ctx, stack["stack_identity"], filters=filters)
    assert sorted(r["resource_name"] for r in listed) == sorted(names)


async def test_resource_list_with_detail_adds_what_show_adds(
        service: EngineService, ctx: RequestContext) -> None:
    stack = await create(service, ctx, "reads_detail", hot({
        "v": {"type": "OS::Heat::Value", "properties": {"value": "hello"}},
        "r": {"type": "OS::Heat::RandomString", "properties": {"length": 4}}}))
    ident = stack["stack_identity"]
    plain = {r["resource_name"]: r for r in await service.list_stack_resources(ctx, ident)}
    assert not {"attributes", "description", "metadata"} & set(plain["v"])
    detailed = {r["resource_name"]: r
                for r in await service.list_stack_resources(ctx, ident, with_detail=True)}
    assert detailed["v"]["attributes"] == {"value": "hello"}
    assert len(detailed["r"]["attributes"]["value"]) == 4
    for name, item in detailed.items():
        shown = await service.describe_stack_resource(ctx, ident, name)
        assert item == shown


async def test_resource_description_is_the_templates_as_heat_shows_it(
        service: EngineService, ctx: RequestContext) -> None:
    # live Heat 27: show and the detailed list give the resource's template description,
    # and "" for a resource without one
    stack = await create(service, ctx, "reads_described", hot({
        "a": {"type": "OS::Heat::None", "description": "the a resource"},
        "b": {"type": "OS::Heat::None"}}))
    ident = stack["stack_identity"]
    shown = await service.describe_stack_resource(ctx, ident, "a")
    assert shown["description"] == "the a resource"
    assert (await service.describe_stack_resource(ctx, ident, "b"))["description"] == ""
    detailed = await service.list_stack_resources(ctx, ident, with_detail=True)
    assert {r["resource_name"]: r["description"] for r in detailed} == {
        "a": "the a resource", "b": ""}
