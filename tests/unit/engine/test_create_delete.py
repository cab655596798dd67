"""Stack create and delete through EngineService, checked against Heat 27's observable
behaviour (events, status reasons, resource states) as the live peer reports it."""

from __future__ import annotations

import pytest

from kiln.engine.service import EngineService, RequestContext
from kiln.errors import EntityNotFound, RequestLimitExceeded, StackExists, StackValidationFailed

from .support import create, events, hot, resources

CHAIN = hot({
    "a": {"type": "OS::Heat::None"},
    "b": {"type": "OS::Heat::None", "depends_on": ["a"]},
    "c": {"type": "OS::Heat::Value", "properties": {"value": {"get_resource": "b"}}},
})


async def test_create_follows_dependencies_and_delete_reverses_them(
        service: EngineService, ctx: RequestContext) -> None:
    stack = await create(service, ctx, "chain", CHAIN)
    assert stack["stack_status"] == "CREATE_COMPLETE"
    assert stack["stack_status_reason"] == "Stack CREATE completed successfully"
    ident = stack["stack_identity"]
    assert await events(service, ctx, ident) == [
        ("chain", "CREATE_IN_PROGRESS", "Stack CREATE started"),
        ("a", "CREATE_IN_PROGRESS", "state changed"),
        ("a", "CREATE_COMPLETE", "state changed"),
        ("b", "CREATE_IN_PROGRESS", "state changed"),
        ("b", "CREATE_COMPLETE", "state changed"),
        ("c", "CREATE_IN_PROGRESS", "state changed"),
        ("c", "CREATE_COMPLETE", "state changed"),
        ("chain", "CREATE_COMPLETE", "Stack CREATE completed successfully"),
    ]
    await service.delete_stack(ctx, ident)
    await service.wait_for_stack(ident["stack_id"])
    deleted = [e for e in await events(service, ctx, ident)][8:]
    assert deleted == [
        ("chain", "DELETE_IN_PROGRESS", "Stack DELETE started"),
        ("c", "DELETE_IN_PROGRESS", "state changed"),
        ("c", "DELETE_COMPLETE", "state changed"),
        ("b", "DELETE_IN_PROGRESS", "state changed"),
        ("b", "DELETE_COMPLETE", "state changed"),
        ("a", "DELETE_IN_PROGRESS", "state changed"),
        ("a", "DELETE_COMPLETE", "state changed"),
        ("chain", "DELETE_COMPLETE", "Stack DELETE completed successfully"),
    ]
    shown = await service.show_stack(ctx, ident)
    assert shown["stack_status"] == "DELETE_COMPLETE"
    assert "outputs" not in shown
    assert await service.list_stacks(ctx) == []
    with pytest.raises(EntityNotFound):
        await service.list_stack_resources(ctx, ident)


async def test_references_and_outputs_resolve_against_created_resources(
        service: EngineService, ctx: RequestContext) -> None:
    template = hot(
        {"r": {"type": "OS::Heat::RandomString", "properties": {"length": 10}},
         "v": {"type": "OS::Heat::Value", "properties": {"value": {"get_attr": ["r", "value"]}}}},
        outputs={"o": {"value": {"get_attr": ["v", "value"]}, "description": "the value"},
                 "n": {"value": {"get_resource": "v"}},
                 "r": {"value": {"get_resource": "r"}}})
    stack = await create(service, ctx, "refs", template)
    outs = {o["output_key"]: o for o in stack["outputs"]}
    assert len(outs["o"]["output_value"]) == 10
    assert outs["o"]["description"] == "the value"
    assert outs["n"]["description"] == "No description given"
    # the physical id Heat gives a Value: <stack>-<resource>-<12 chars>
    assert outs["n"]["output_value"].startswith("refs-v-")
    assert len(outs["n"]["output_value"]) == len("refs-v-") + 12
    # ... while a RandomString's reference is its value
    assert outs["r"]["output_value"] == outs["o"]["output_value"]
    res = await service.describe_stack_resource(ctx, stack["stack_identity"], "r")
    assert res["attributes"]["value"] == outs["o"]["output_value"]
    assert res["required_by"] == ["v"]
    assert stack["parameters"] == {"OS::stack_id": stack["id"], "OS::project_id": "demo",
                                   "OS::stack_name": "refs"}
    assert await service.list_outputs(ctx, stack["stack_identity"]) == [
        {"output_key": "o", "description": "the value"},
        {"output_key": "n", "description": "No description given"},
        {"output_key": "r", "description": "No description given"}]


FAILING = hot({
    "a": {"type": "OS::Heat::None"},
    "f": {"type": "OS::Heat::TestResource", "properties": {"fail": True}, "depends_on": ["a"]},
    "g": {"type": "OS::Heat::None", "depends_on": ["f"]},
})


async def test_failed_create_without_rollback_leaves_what_was_made(
        service: EngineService, ctx: RequestContext) -> None:
    stack = await create(service, ctx, "fail1", FAILING, disable_rollback=True)
    reason = "ValueError: resources.f: Test Resource failed f"
    assert stack["stack_status"] == "CREATE_FAILED"
    assert stack["stack_status_reason"] == f"Resource CREATE failed: {reason}"
    ident = stack["stack_identity"]
    assert await resources(service, ctx, ident) == {
        "a": "CREATE_COMPLETE", "f": "CREATE_FAILED", "g": "INIT_COMPLETE"}
    assert (await events(service, ctx, ident))[-2:] == [
        ("f", "CREATE_FAILED", reason),
        ("fail1", "CREATE_FAILED", f"Resource CREATE failed: {reason}")]
    # a failed stack can be deleted
    await service.delete_stack(ctx, ident)
    await service.wait_for_stack(ident["stack_id"])
    assert (await service.show_stack(ctx, ident))["stack_status"] == "DELETE_COMPLETE"


async def test_failed_create_rolls_back_unless_disabled(
        service: EngineService, ctx: RequestContext) -> None:
    stack = await create(service, ctx, "fail2", FAILING, disable_rollback=False)
    assert stack["stack_status"] == "ROLLBACK_COMPLETE"
    assert stack["stack_status_reason"] == "Stack ROLLBACK completed successfully"
    ident = stack["stack_identity"]
    assert (await events(service, ctx, ident))[5:] == [
        ("fail2", "CREATE_FAILED",
         "Resource CREATE failed: ValueError: resources.f: Test Resource failed f"),
        ("fail2", "ROLLBACK_IN_PROGRESS", "Stack ROLLBACK started"),
        ("f", "DELETE_IN_PROGRESS", "state changed"),
        ("f", "DELETE_COMPLETE", "state changed"),
        ("a", "DELETE_IN_PROGRESS", "state changed"),
        ("a", "DELETE_COMPLETE", "state changed"),
        ("fail2", "ROLLBACK_COMPLETE", "Stack ROLLBACK completed successfully"),
    ]
    assert await resources(service, ctx, ident) == {}


async def test_a_slow_resource_does_not_hold_back_unrelated_ones(
        service: EngineService, ctx: RequestContext) -> None:
    template = hot({
        "slow": {"type": "OS::Heat::TestResource", "properties": {"wait_secs": 0.3}},
        "b": {"type": "OS::Heat::None"},
        "c": {"type": "OS::Heat::None", "depends_on": ["b"]},
    })
    stack = await create(service, ctx, "par", template)
    assert stack["stack_status"] == "CREATE_COMPLETE"
    order = [(n, s) for n, s, _ in await events(service, ctx, stack["stack_identity"])]
    assert order.index(("c", "CREATE_COMPLETE")) < order.index(("slow", "CREATE_COMPLETE"))


async def test_stack_timeout_fails_the_create_with_heats_reason(
        service: EngineService, ctx: RequestContext, override) -> None:  # type: ignore[no-untyped-def]
    override(stack_action_timeout=1)
    template = hot({"slow": {"type": "OS::Heat::TestResource",
                             "properties": {"wait_secs": 60}}})
    stack = await create(service, ctx, "slowpoke", template)
    assert stack["stack_status"] == "CREATE_FAILED"
    assert stack["stack_status_reason"] == "Timed out"
    res = await service.describe_stack_resource(ctx, stack["stack_identity"], "slow")
    assert res["resource_status"] == "CREATE_FAILED"
    # Heat 27 names the task as it started (observed on the peer for a deployment)
    stack_id = stack["stack_identity"]["stack_id"]
    assert res["resource_status_reason"] == (
        f'CREATE aborted (Task create from TestResource "slow" Stack "slowpoke" '
        f'[{stack_id}] Timed out)')


async def test_name_taken_limits_and_cycles_are_refused_before_anything_runs(
        service: EngineService, ctx: RequestContext, override) -> None:  # type: ignore[no-untyped-def]
    await create(service, ctx, "one", hot({"a": {"type": "OS::Heat::None"}}))
    with pytest.raises(StackExists, match=r"^The Stack \(one\) already exists\.$"):
        await service.create_stack(ctx, "one", hot({}), {}, {}, {})
    override(max_stacks_per_tenant=1)
    with pytest.raises(RequestLimitExceeded) as info:
        await service.create_stack(ctx, "two", hot({}), {}, {}, {})
    assert info.value.message == ("Request limit exceeded: You have reached the maximum "
                                  "stacks per tenant, 1. Please delete some stacks.")
    override(max_stacks_per_tenant=10, max_resources_per_stack=2)
    with pytest.raises(RequestLimitExceeded, match="Maximum resources per stack exceeded"):
        await service.create_stack(ctx, "three", hot({n: {"type": "OS::Heat::None"}
                                                      for n in "xyz"}), {}, {}, {})
    cyclic = hot({"a": {"type": "OS::Heat::None", "depends_on": ["b"]},
                  "b": {"type": "OS::Heat::None", "depends_on": ["a"]}})
    with pytest.raises(StackValidationFailed) as err:
        await service.create_stack(ctx, "four", cyclic, {}, {}, {})
    assert err.value.error_type == "CircularDependencyException"
    assert err.value.message.startswith("Circular Dependency Found: ")
    assert [s["stack_name"] for s in await service.list_stacks(ctx)] == ["one"]


async def test_unknown_type_and_bad_properties_are_validation_errors(
        service: EngineService, ctx: RequestContext) -> None:
    from kiln.errors import ResourceTypeNotFound

    with pytest.raises(ResourceTypeNotFound):
        await service.create_stack(ctx, "t1", hot({"a": {"type": "OS::No::Such"}}),
                                   {}, {}, {})
    with pytest.raises(StackValidationFailed, match=r"Property error: resources\.r\.properties"):
        await service.create_stack(
            ctx, "t2", hot({"r": {"type": "OS::Heat::RandomString",
                                  "properties": {"length": "many"}}}), {}, {}, {})


async def test_events_beyond_the_limit_are_purged_oldest_first(
        service: EngineService, ctx: RequestContext, override) -> None:  # type: ignore[no-untyped-def]
    override(max_events_per_stack=5, event_purge_batch_size=2)
    stack = await create(service, ctx, "purged", CHAIN)
    # 8 events were written; the 3 oldest go so that 5 remain
    assert await events(service, ctx, stack["stack_identity"]) == [
        ("b", "CREATE_IN_PROGRESS", "state changed"),
        ("b", "CREATE_COMPLETE", "state changed"),
        ("c", "CREATE_IN_PROGRESS", "state changed"),
        ("c", "CREATE_COMPLETE", "state changed"),
        ("purged", "CREATE_COMPLETE", "Stack CREATE completed successfully"),
    ]


async def test_retained_resources_are_not_deleted_but_reported(
        service: EngineService, ctx: RequestContext) -> None:
    # a delete of this TestResource would wait a minute; Retain must skip it
    template = hot({"r": {"type": "OS::Heat::TestResource", "deletion_policy": "Retain",
                          "properties": {"action_wait_secs": {"delete": 60}}}})
    stack = await create(service, ctx, "keep", template)
    ident = stack["stack_identity"]
    await service.delete_stack(ctx, ident)
    # the bound (well under the 60 s a real delete would wait) is what shows Retain
    # skipped the delete: the events alone would read the same
    await service.wait_for_stack(ident["stack_id"], timeout=40)
    assert (await events(service, ctx, ident))[-4:] == [
        ("keep", "DELETE_IN_PROGRESS", "Stack DELETE started"),
        ("r", "DELETE_IN_PROGRESS", "state changed"),
        ("r", "DELETE_COMPLETE", "state changed"),
        ("keep", "DELETE_COMPLETE", "Stack DELETE completed successfully")]


async def test_snapshot_policy_needs_a_plugin_that_can_snapshot(
        service: EngineService, ctx: RequestContext) -> None:
    template = hot({"s": {"type": "OS::Heat::RandomString", "deletion_policy": "Snapshot"}})
    with pytest.raises(StackValidationFailed) as info:
        await service.create_stack(ctx, "snap", template, {}, {}, {})
    assert info.value.message == ('resources.s.deletion_policy: "Snapshot" deletion policy '
                                  "not supported")


async def test_preview_lists_the_resources_without_creating_anything(
        service: EngineService, ctx: RequestContext) -> None:
    template = hot({"r": {"type": "OS::Heat::RandomString", "properties": {"length": 5}}})
    preview = await service.preview_stack(ctx, "pre", template, {}, {}, {})
    assert preview["stack_name"] == "pre" and preview["id"] == "None"
    (res,) = preview["resources"]
    assert res["resource_name"] == "r"
    assert res["resource_status"] == "INIT_COMPLETE"
    assert res["physical_resource_id"] == ""
    assert res["properties"]["length"] == 5
    assert res["attributes"] == {"value": None}
    assert await service.list_stacks(ctx) == []
