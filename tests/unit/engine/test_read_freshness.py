"""Stack list and show answer from trimmed reads and a per-stack cache of show's
parameters; a change must still show in the very next read."""

from __future__ import annotations

from kiln.engine.service import EngineService, RequestContext

from .support import create, hot

PARAM_TEMPLATE = hot({"x": {"type": "OS::Heat::None"}},
                     parameters={"flavor": {"type": "string", "default": "small"},
                                 "secret": {"type": "string", "hidden": True}},
                     description="first")


async def test_show_reflects_an_update_of_parameters_and_description(
        service: EngineService, ctx: RequestContext) -> None:
    shown = await create(service, ctx, "fresh_show", PARAM_TEMPLATE,
                         params={"parameters": {"secret": "s1"}})
    ident = shown["stack_identity"]
    assert shown["parameters"]["flavor"] == "small"
    assert shown["parameters"]["secret"] == "******"
    assert shown["description"] == "first"
    await service.show_stack(ctx, ident)   # a second show, answered from the cache

    second = {**PARAM_TEMPLATE, "description": "second"}
    await service.update_stack(ctx, ident, second,
                               {"parameters": {"flavor": "large", "secret": "s2"}}, {}, {})
    await service.wait_for_stack(ident["stack_id"])
    after = await service.show_stack(ctx, ident)
    assert after["stack_status"] == "UPDATE_COMPLETE"
    assert after["parameters"]["flavor"] == "large"
    assert after["parameters"]["secret"] == "******"
    assert after["description"] == "second"
    assert after["parameters"]["OS::stack_name"] == "fresh_show"


async def test_list_shows_a_create_update_and_delete_in_the_next_listing(
        service: EngineService, ctx: RequestContext) -> None:
    def by_name(items: list[dict[str, object]]) -> dict[object, dict[str, object]]:
        return {s["stack_name"]: s for s in items}

    assert await service.list_stacks(ctx) == []
    ident = await service.create_stack(ctx, "fresh_list", PARAM_TEMPLATE,
                                       {"parameters": {"secret": "s"}}, {},
                                       {"tags": "a,b"})
    listed = by_name(await service.list_stacks(ctx))["fresh_list"]
    assert listed["stack_status"] in ("CREATE_IN_PROGRESS", "CREATE_COMPLETE")
    assert listed["tags"] == ["a", "b"]
    assert listed["id"] == ident["stack_id"]
    await service.wait_for_stack(ident["stack_id"])
    assert by_name(await service.list_stacks(ctx))["fresh_list"]["stack_status"] == \
        "CREATE_COMPLETE"

    await service.update_stack(ctx, ident, PARAM_TEMPLATE, {"parameters": {"secret": "t"}},
                               {}, {"tags": "c"})
    await service.wait_for_stack(ident["stack_id"])
    updated = by_name(await service.list_stacks(ctx))["fresh_list"]
    assert updated["stack_status"] == "UPDATE_COMPLETE"
    assert updated["tags"] == ["c"]
    assert updated["updated_time"] is not None

    await service.delete_stack(ctx, ident)
    await service.wait_for_stack(ident["stack_id"])
    assert await service.list_stacks(ctx) == []
    gone = by_name(await service.list_stacks(ctx, show_deleted=True))["fresh_list"]
    assert gone["stack_status"] == "DELETE_COMPLETE"
    assert gone["deletion_time"] is not None
