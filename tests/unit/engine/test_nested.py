"""Nested stacks in the same engine: provider templates and ResourceGroup, with the
names, references, attributes and failure reasons the live Heat 27 peer showed for the
same templates."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from kiln.engine.service import EngineService, RequestContext
from kiln.errors import StackValidationFailed

from .support import create, hot

CHILD = {"heat_template_version": "2018-08-31",
         "parameters": {"v": {"type": "string"}, "fail": {"type": "boolean", "default": False}},
         "resources": {"t": {"type": "OS::Heat::TestResource",
                             "properties": {"value": {"get_param": "v"},
                                            "fail": {"get_param": "fail"}}}},
         "outputs": {"out": {"value": {"get_attr": ["t", "output"]}}}}
FILES = {"child.yaml": json.dumps(CHILD)}


def outputs(stack: dict[str, Any]) -> dict[str, Any]:
    return {o["output_key"]: o.get("output_value") for o in stack["outputs"]}


async def test_provider_template_runs_as_a_child_stack(service: EngineService,
                                                       ctx: RequestContext) -> None:
    template = hot({"good": {"type": "child.yaml", "properties": {"v": "hello"}}},
                   outputs={"ref": {"value": {"get_resource": "good"}},
                            "out": {"value": {"get_attr": ["good", "out"]}},
                            "sid": {"value": {"get_attr": ["good", "OS::stack_id"]}}})
    stack = await create(service, ctx, "prov", template, files=FILES)
    assert stack["stack_status"] == "CREATE_COMPLETE"
    outs = outputs(stack)
    assert outs["out"] == "hello"
    (res,) = await service.list_stack_resources(ctx, stack["stack_identity"])
    child = res["nested_stack_id"]
    assert re.fullmatch(r"prov-good-[a-z0-9]{12}", child["stack_name"])
    assert res["physical_resource_id"] == child["stack_id"]
    arn = f"arn:openstack:heat::demo:stacks/{child['stack_name']}/{child['stack_id']}"
    assert outs["ref"] == arn and outs["sid"] == arn
    # the child is a stack of its own, listed only with show_nested, owned by the parent
    assert [s["stack_name"] for s in await service.list_stacks(ctx)] == ["prov"]
    nested = {s["stack_name"]: s for s in await service.list_stacks(ctx, show_nested=True)}
    assert nested[child["stack_name"]]["parent"] == stack["id"]
    inner = await service.list_stack_resources(ctx, stack["stack_identity"], nested_depth=1)
    assert {(r["resource_name"], r.get("parent_resource")) for r in inner} == {
        ("good", None), ("t", "good")}
    # delete removes the child stack too
    await service.delete_stack(ctx, stack["stack_identity"])
    await service.wait_for_stack(stack["id"])
    assert await service.list_stacks(ctx, show_nested=True) == []


async def test_child_failure_is_reported_with_the_nested_path(service: EngineService,
                                                              ctx: RequestContext) -> None:
    template = hot({"bad": {"type": "child.yaml", "properties": {"v": "x", "fail": True}}})
    stack = await create(service, ctx, "nfail", template, files=FILES)
    reason = "ValueError: resources.bad.resources.t: Test Resource failed t"
    assert stack["stack_status"] == "CREATE_FAILED"
    assert stack["stack_status_reason"] == f"Resource CREATE failed: {reason}"
    res = await service.describe_stack_resource(ctx, stack["stack_identity"], "bad")
    assert res["resource_status_reason"] == reason
    evs = await service.list_events(ctx, stack["stack_identity"], nested_depth=1,
                                    sort_dir="asc")
    child_name = res["nested_stack_id"]["stack_name"]
    assert [(e["resource_name"], e["resource_status"]) for e in evs] == [
        ("nfail", "CREATE_IN_PROGRESS"), ("bad", "CREATE_IN_PROGRESS"),
        (child_name, "CREATE_IN_PROGRESS"), ("t", "CREATE_IN_PROGRESS"),
        ("t", "CREATE_FAILED"), (child_name, "CREATE_FAILED"), ("bad", "CREATE_FAILED"),
        ("nfail", "CREATE_FAILED")]


GROUP = hot({"grp": {"type": "OS::Heat::ResourceGroup", "properties": {
    "count": 2, "resource_def": {"type": "OS::Heat::Value",
                                 "properties": {"value": "v%index%"}}}}},
    outputs={"refs": {"value": {"get_attr": ["grp", "refs"]}},
             "vals": {"value": {"get_attr": ["grp", "value"]}},
             "r1": {"value": {"get_attr": ["grp", "resource.1.value"]}},
             "r1ref": {"value": {"get_attr": ["grp", "resource.1"]}},
             "attrs": {"value": {"get_attr": ["grp", "attributes", "value"]}},
             "rmap": {"value": {"get_attr": ["grp", "refs_map"]}},
             "removed": {"value": {"get_attr": ["grp", "removed_rsrc_list"]}},
             "gref": {"value": {"get_resource": "grp"}}})


async def test_resource_group_members_and_attributes(service: EngineService,
                                                     ctx: RequestContext) -> None:
    stack = await create(service, ctx, "grp", GROUP)
    assert stack["stack_status"] == "CREATE_COMPLETE"
    outs = outputs(stack)
    (res,) = await service.list_stack_resources(ctx, stack["stack_identity"])
    child = res["nested_stack_id"]["stack_name"]
    assert outs["gref"] == res["physical_resource_id"]
    assert outs["vals"] == ["v0", "v1"]
    assert outs["r1"] == "v1"
    assert outs["attrs"] == {"0": "v0", "1": "v1"}
    assert [r.rsplit("-", 1)[0] for r in outs["refs"]] == [f"{child}-0", f"{child}-1"]
    assert outs["rmap"] == {"0": outs["refs"][0], "1": outs["refs"][1]}
    assert outs["r1ref"] == outs["refs"][1]
    assert outs["removed"] == []


async def test_resource_group_update_removal_policies_and_count(
        service: EngineService, ctx: RequestContext) -> None:
    stack = await create(service, ctx, "grp2", GROUP)
    ident = stack["stack_identity"]
    before = outputs(stack)["rmap"]
    template = json.loads(json.dumps(GROUP))
    props = template["resources"]["grp"]["properties"]
    props["count"] = 3
    props["removal_policies"] = [{"resource_list": ["0"]}]
    await service.update_stack(ctx, ident, template, {}, {}, {})
    await service.wait_for_stack(ident["stack_id"])
    stack = await service.show_stack(ctx, ident)
    assert stack["stack_status"] == "UPDATE_COMPLETE"
    outs = outputs(stack)
    # "0" is removed and never reused; "1" is kept as it was; new members follow
    assert list(outs["rmap"]) == ["1", "2", "3"]
    assert outs["rmap"]["1"] == before["1"]
    assert outs["vals"] == ["v1", "v2", "v3"]
    assert outs["removed"] == ["0"]
    # shrinking removes the highest names
    props["count"] = 1
    props["removal_policies"] = []
    await service.update_stack(ctx, ident, template, {}, {}, {})
    await service.wait_for_stack(ident["stack_id"])
    outs = outputs(await service.show_stack(ctx, ident))
    assert list(outs["rmap"]) == ["1"]
    assert outs["removed"] == ["0"]


async def test_batch_create_makes_members_in_batches(service: EngineService,
                                                     ctx: RequestContext) -> None:
    template = hot({"grp": {"type": "OS::Heat::ResourceGroup",
                            "update_policy": {"batch_create": {"max_batch_size": 2}},
                            "properties": {"count": 4, "resource_def": {
                                "type": "OS::Heat::TestResource",
                                "properties": {"value": "%index%"}}}}})
    stack = await create(service, ctx, "batches", template)
    assert stack["stack_status"] == "CREATE_COMPLETE"
    evs = await service.list_events(ctx, stack["stack_identity"], nested_depth=1,
                                    sort_dir="asc")
    order = [(e["resource_name"], e["resource_status"]) for e in evs]
    for late in ("2", "3"):
        for early in ("0", "1"):
            assert order.index((early, "CREATE_COMPLETE")) < \
                order.index((late, "CREATE_IN_PROGRESS"))


async def test_nesting_depth_limit(service: EngineService, ctx: RequestContext,
                                   override: Any) -> None:
    override(max_nested_stack_depth=1)
    inner = {"heat_template_version": "2018-08-31",
             "resources": {"deeper": {"type": "leaf.yaml"}}}
    leaf = {"heat_template_version": "2018-08-31",
            "resources": {"n": {"type": "OS::Heat::None"}}}
    files = {"inner.yaml": json.dumps(inner), "leaf.yaml": json.dumps(leaf)}
    # Heat 27 rejects the create (it validates the nested stacks first), naming the path
    with pytest.raises(StackValidationFailed) as info:
        await create(service, ctx, "deep", hot({"r": {"type": "inner.yaml"}}), files=files)
    assert info.value.message == (
        "RequestLimitExceeded: resources.r<inner.yaml>.resources.deeper<leaf.yaml>: "
        "Request limit exceeded: Recursion depth exceeds 1.")


async def test_resources_are_counted_over_the_whole_tree(
        service: EngineService, ctx: RequestContext, override: Any) -> None:
    override(max_resources_per_stack=3)
    stack = await create(service, ctx, "many", hot({"grp": {
        "type": "OS::Heat::ResourceGroup",
        "properties": {"count": 5, "resource_def": {"type": "OS::Heat::None"}}}}))
    assert stack["stack_status"] == "CREATE_FAILED"
    assert "Maximum resources per stack exceeded." in stack["stack_status_reason"]


@pytest.mark.parametrize("count", [0, 1])
async def test_empty_and_single_groups(service: EngineService, ctx: RequestContext,
                                       count: int) -> None:
    template = json.loads(json.dumps(GROUP))
    template["resources"]["grp"]["properties"]["count"] = count
    stack = await create(service, ctx, f"g{count}", template)
    assert stack["stack_status"] == "CREATE_COMPLETE"
    assert outputs(stack)["vals"] == [f"v{i}" for i in range(count)]


async def test_resource_chain_creates_in_order_unless_concurrent(
        service: EngineService, ctx: RequestContext) -> None:
    template = hot({"chain": {"type": "OS::Heat::ResourceChain", "properties": {
        "resources": ["OS::Heat::TestResource", "OS::Heat::TestResource"],
        "resource_properties": {"value": "same"}}}},
        outputs={"refs": {"value": {"get_attr": ["chain", "refs"]}},
                 "outs": {"value": {"get_attr": ["chain", "output"]}},
                 "one": {"value": {"get_attr": ["chain", "resource.1.output"]}}})
    stack = await create(service, ctx, "chain", template)
    assert stack["stack_status"] == "CREATE_COMPLETE"
    outs = outputs(stack)
    assert outs["outs"] == ["same", "same"] and outs["one"] == "same"
    assert len(outs["refs"]) == 2
    evs = await service.list_events(ctx, stack["stack_identity"], nested_depth=1,
                                    sort_dir="asc")
    order = [(e["resource_name"], e["resource_status"]) for e in evs]
    assert order.index(("0", "CREATE_COMPLETE")) < order.index(("1", "CREATE_IN_PROGRESS"))


async def test_os_heat_stack_is_a_stack_of_its_own(service: EngineService,
                                                  ctx: RequestContext) -> None:
    inner = json.dumps({"heat_template_version": "2018-08-31",
                        "parameters": {"p": {"type": "string"}},
                        "resources": {"v": {"type": "OS::Heat::Value",
                                            "properties": {"value": {"get_param": "p"}}}},
                        "outputs": {"o": {"value": {"get_attr": ["v", "value"]}}}})
    template = hot({"s": {"type": "OS::Heat::Stack",
                          "properties": {"template": inner, "parameters": {"p": "pv"}}}},
                   outputs={"outs": {"value": {"get_attr": ["s", "outputs"]}},
                            "name": {"value": {"get_attr": ["s", "stack_name"]}},
                            "ref": {"value": {"get_resource": "s"}}})
    stack = await create(service, ctx, "remote", template)
    assert stack["stack_status"] == "CREATE_COMPLETE"
    outs = outputs(stack)
    assert outs["outs"] == {"o": "pv"}
    listed = {s["stack_name"]: s["id"] for s in await service.list_stacks(ctx)}
    assert listed[outs["name"]] == outs["ref"]
    await service.delete_stack(ctx, stack["stack_identity"])
    await service.wait_for_stack(stack["id"])
    assert await service.list_stacks(ctx) == []


async def test_aws_cloudformation_stack_from_files(service: EngineService,
                                                   ctx: RequestContext) -> None:
    inner = {"AWSTemplateFormatVersion": "2010-09-09",
             "Parameters": {"P": {"Type": "String"}},
             "Resources": {"V": {"Type": "OS::Heat::Value", "Properties": {"value": {"Ref": "P"}}}},
             "Outputs": {"Out": {"Value": {"Fn::GetAtt": ["V", "value"]}}}}
    url = "http://example.com/inner.template"
    template = {"AWSTemplateFormatVersion": "2010-09-09", "Resources": {
        "N": {"Type": "AWS::CloudFormation::Stack",
              "Properties": {"TemplateURL": url, "Parameters": {"P": "cfn"}}}},
        "Outputs": {"O": {"Value": {"Fn::GetAtt": ["N", "Outputs.Out"]}},
                    "R": {"Value": {"Ref": "N"}}}}
    stack = await create(service, ctx, "cfn", template, files={url: json.dumps(inner)})
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    outs = outputs(stack)
    assert outs["O"] == "cfn"
    assert outs["R"].startswith("arn:openstack:heat::demo:stacks/cfn-N-")


async def test_provider_resources_update_their_child_on_every_stack_update(
        service: EngineService, ctx: RequestContext) -> None:
    template = hot({"p": {"type": "child.yaml", "properties": {"v": "one"}}},
                   outputs={"out": {"value": {"get_attr": ["p", "out"]}}})
    stack = await create(service, ctx, "provupd", template, files=FILES)
    ident = stack["stack_identity"]
    before = (await service.describe_stack_resource(ctx, ident, "p"))["physical_resource_id"]
    changed = {**CHILD, "outputs": {"out": {"value": {"str_replace": {
        "template": "got V", "params": {"V": {"get_attr": ["t", "output"]}}}}}}}
    await service.update_stack(ctx, ident, template, {},
                               {"child.yaml": json.dumps(changed)}, {})
    await service.wait_for_stack(ident["stack_id"])
    stack = await service.show_stack(ctx, ident)
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    assert outputs(stack)["out"] == "got one"
    res = await service.describe_stack_resource(ctx, ident, "p")
    assert res["resource_status"] == "UPDATE_COMPLETE"
    assert res["physical_resource_id"] == before  # the same child stack, updated


async def test_provider_template_written_as_yaml_with_an_unquoted_version_date(
        service: EngineService, ctx: RequestContext) -> None:
    # Users write provider templates as YAML files; YAML reads `2018-08-31` as a date,
    # which must still be understood as the template version.
    child_yaml = (
        "heat_template_version: 2018-08-31\n"
        "parameters:\n  v: {type: string}\n"
        "resources:\n  t: {type: OS::Heat::Value, properties: {value: {get_param: v}}}\n"
        "outputs:\n  out: {value: {get_attr: [t, value]}}\n")
    template = hot({"p": {"type": "child.yaml", "properties": {"v": "from-yaml"}}},
                   outputs={"out": {"value": {"get_attr": ["p", "out"]}}})
    stack = await create(service, ctx, "provyaml", template,
                         files={"child.yaml": child_yaml})
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    assert outputs(stack)["out"] == "from-yaml"


async def test_nested_stacks_do_not_deadlock_a_concurrency_limit_of_one(
        sqlite_url: str, ctx: RequestContext, override: Any) -> None:
    # each group member is itself a nested stack; with one slot, a parent holding it
    # while waiting for its child would never finish
    override(max_concurrency=1, poll_initial_delay=0.001, poll_max_delay=0.05,
             group="kiln_engine")
    svc = EngineService(db_url=sqlite_url)
    await svc.start()
    try:
        template = hot({"grp": {"type": "OS::Heat::ResourceGroup", "properties": {
            "count": 3, "resource_def": {"type": "child.yaml",
                                         "properties": {"v": "x%index%"}}}}},
            outputs={"outs": {"value": {"get_attr": ["grp", "out"]}}})
        stack = await create(svc, ctx, "tight", template, files=FILES)
        assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
        assert outputs(stack)["outs"] == ["x0", "x1", "x2"]
    finally:
        await svc.stop()


def _group(member: dict[str, Any]) -> dict[str, Any]:
    return {"type": "OS::Heat::ResourceGroup",
            "properties": {"count": 1, "resource_def": member}}


async def test_errors_inside_nested_stacks_in_heats_words(service: EngineService,
                                                          ctx: RequestContext) -> None:
    """Heat 27 (peer): a member named by digits is ``resources[0]``; a property error
    from inside a child is quoted by the parent stack's reason with the resource's name
    in front of the inner path (``g.resources[0]...``), not by the resource's own reason;
    at create, a value Heat's own RandomString validation has to convert and cannot is a
    400 ``ValueError`` (values are otherwise not checked in a child then)."""
    missing = hot({"g": _group({"type": "OS::Heat::Value", "properties": {}})})
    stack = await create(service, ctx, "nested-words", missing)
    inner = "Property error: resources[0].properties: Property value not assigned"
    assert stack["stack_status_reason"] == (
        "Resource CREATE failed: StackValidationFailed: resources.g: Property error: "
        "g.resources[0].properties: Property value not assigned")
    res = await service.describe_stack_resource(ctx, stack["stack_identity"], "g")
    assert res["resource_status_reason"] == f"StackValidationFailed: resources.g: {inner}"
    deeper = hot({"g": _group(_group({"type": "OS::Heat::Value", "properties": {}}))})
    stack = await create(service, ctx, "nested-words2", deeper)
    assert stack["stack_status_reason"] == (
        "Resource CREATE failed: StackValidationFailed: resources.g.resources[0]: "
        "Property error: [0].resources[0].properties: Property value not assigned")
    for props, message in (
            ({"length": "x"}, "ValueError: resources.g<nested_stack>.resources[0]: "
                              "Value 'x' is not an integer"),
            ({"bogus": 1}, "Property error: resources.g<nested_stack>.resources[0]."
                           "properties: Unknown Property bogus")):
        template = hot({"g": _group({"type": "OS::Heat::RandomString", "properties": props})})
        with pytest.raises(StackValidationFailed) as caught:
            await service.create_stack(ctx, "nested-words3", template, {}, {}, {})
        assert caught.value.message == message
