"""Software deployments: derived configs, waiting for the agent, outputs as attributes.

The derived configs expected here are what Heat 27 stored for the same template
(GET /software_configs/{deployment's config_id}); the attribute answers likewise.
"""

from __future__ import annotations

from typing import Any

import pytest

from kiln.errors import InvalidTemplateAttribute
from kiln.resources.base import Resource, ResourceFailure, UpdateReplace
from tests.unit.resources.fakes import FakeRuntime, make, roundtrip, run


@pytest.fixture
def rt() -> FakeRuntime:
    return FakeRuntime()


async def source_config(rt: FakeRuntime) -> Resource:
    sc = make(rt, "sc", "OS::Heat::SoftwareConfig", {
        "group": "script", "config": "echo hi",
        "inputs": [{"name": "foo", "default": "dflt"},
                   {"name": "bar", "type": "Number", "replace_on_change": True}],
        "outputs": [{"name": "result"}, {"name": "err", "error_output": True}]})
    await run(sc, "create")
    return sc


def derived(rt: FakeRuntime, dep: Resource) -> dict[str, Any]:
    row = rt.software_deployments.rows[dep.resource_id or ""]
    return rt.software_configs.configs[row["config_id"]]


def common_inputs(rt: FakeRuntime, name: str, transport: str) -> list[dict[str, Any]]:
    return [
        {"name": "deploy_server_id", "description": "ID of the server being deployed to",
         "type": "String", "value": "server-1"},
        {"name": "deploy_action", "description": "Name of the current action being deployed",
         "type": "String", "value": "CREATE"},
        {"name": "deploy_stack_id", "description": "ID of the stack this deployment belongs to",
         "type": "String", "value": f"{rt.stack_name}/{rt.stack_id}"},
        {"name": "deploy_resource_name",
         "description": "Name of this deployment resource in the stack", "type": "String",
         "value": name},
        {"name": "deploy_signal_transport",
         "description": "How the server should signal to heat with the deployment output "
                        "values.", "type": "String", "value": transport}]


async def test_no_signal_deployment_completes_at_once(rt: FakeRuntime) -> None:
    sc = await source_config(rt)
    dep = make(rt, "dn", "OS::Heat::SoftwareDeployment", {
        "config": sc.reference_id(), "server": "server-1",
        "input_values": {"bar": 1, "extra": "x"}, "signal_transport": "NO_SIGNAL"})
    assert await run(dep, "create") == 1
    row = rt.software_deployments.rows[dep.resource_id or ""]
    assert (row["action"], row["status"], row["status_reason"]) == (
        "CREATE", "COMPLETE", "Not waiting for outputs signal")
    assert row["server_id"] == "server-1"
    assert row["input_values"] == {"bar": 1, "extra": "x"}
    cfg = derived(rt, dep)
    assert cfg["name"].startswith("teststack-sc-")      # the source config's name
    assert cfg["group"] == "script" and cfg["config"] == "echo hi"
    assert cfg["inputs"] == [
        {"name": "foo", "description": "", "type": "String", "default": "dflt",
         "value": "dflt"},
        {"name": "bar", "description": "", "type": "Number", "default": 0,
         "replace_on_change": True, "value": 1},
        {"name": "extra", "type": "String", "value": "x"},
        *common_inputs(rt, "dn", "NO_SIGNAL")]
    assert cfg["outputs"] == [
        {"name": "result", "description": "", "type": "String", "error_output": False},
        {"name": "err", "description": "", "type": "String", "error_output": True}]
    assert dep.get_attribute("result") is None
    with pytest.raises(InvalidTemplateAttribute,
                       match=r"^The Referenced Attribute \(dn show\) is incorrect\.$"):
        dep.get_attribute("show")


async def test_cfn_signal_deployment_waits_for_outputs(rt: FakeRuntime) -> None:
    sc = await source_config(rt)
    dep = make(rt, "dc", "OS::Heat::SoftwareDeployment", {
        "config": sc.reference_id(), "server": "server-1", "name": "zzz"})
    token = roundtrip(await dep.handle_create())
    cfg = derived(rt, dep)
    assert cfg["name"] == "zzz"
    (keypair,) = rt.keypairs.values()      # issued for the deployment, signs its URL
    signal_url = rt.presigned_signal_url("dc", "cfn_signal", keypair)
    assert cfg["inputs"][2:] == [
        *common_inputs(rt, "dc", "CFN_SIGNAL"),
        {"name": "deploy_signal_id", "description": "ID of signal to use for signaling "
         "output values", "type": "String", "value": signal_url},
        {"name": "deploy_signal_verb", "description": "HTTP verb to use for signaling "
         "output values", "type": "String", "value": "POST"}]
    row = rt.software_deployments.rows[dep.resource_id or ""]
    assert (row["status"], row["status_reason"]) == ("IN_PROGRESS", "Deploy data available")
    assert not await dep.check_create_complete(token)
    reason = await dep.handle_signal({"result": "ok", "deploy_stdout": "out",
                                      "deploy_status_code": 0})
    assert reason == f"deployment {dep.resource_id} succeeded"
    assert await dep.check_create_complete(token)
    assert dep.get_attribute("result") == "ok"
    assert dep.get_attribute("deploy_stdout") == "out"
    assert dep.get_attribute("deploy_status_code") == 0
    assert dep.get_attribute("err") is None
    with pytest.raises(InvalidTemplateAttribute):
        dep.get_attribute("nonsense")


async def test_outputs_reported_through_the_api_are_seen(rt: FakeRuntime) -> None:
    sc = await source_config(rt)
    dep = make(rt, "d", "OS::Heat::SoftwareDeployment",
               {"config": sc.reference_id(), "server": "server-1"})
    token = roundtrip(await dep.handle_create())
    await rt.software_deployments.update(dep.resource_id or "", status="COMPLETE",
                                         output_values={"result": "via api"})
    assert await dep.check_create_complete(token)
    assert dep.get_attribute("result") == "via api"


async def test_failed_deployment(rt: FakeRuntime) -> None:
    sc = await source_config(rt)
    dep = make(rt, "d", "OS::Heat::SoftwareDeployment",
               {"config": sc.reference_id(), "server": "server-1"})
    token = roundtrip(await dep.handle_create())
    await dep.handle_signal({"deploy_status_code": 3})
    with pytest.raises(ResourceFailure) as info:
        await dep.check_create_complete(token)
    assert info.value.status_reason("d") == (
        "Error: resources.d: Deployment to server failed: deploy_status_code : Deployment "
        "exited with non-zero status code: 3")


async def test_actions_not_listed_do_nothing(rt: FakeRuntime) -> None:
    sc = await source_config(rt)
    dep = make(rt, "d", "OS::Heat::SoftwareDeployment",
               {"config": sc.reference_id(), "server": "server-1",
                "signal_transport": "NO_SIGNAL"})
    await run(dep, "create")
    assert await dep.handle_suspend() is None
    assert len(rt.software_configs.configs) == 2         # source + one derived config
    await run(dep, "delete")                            # DELETE not in actions
    assert rt.software_deployments.rows == {}
    assert list(rt.software_configs.configs) == [sc.resource_id]


async def test_delete_action_deploys_then_cleans_up(rt: FakeRuntime) -> None:
    sc = await source_config(rt)
    dep = make(rt, "d", "OS::Heat::SoftwareDeployment",
               {"config": sc.reference_id(), "server": "server-1",
                "actions": ["CREATE", "DELETE"]})
    token = roundtrip(await dep.handle_create())
    await dep.handle_signal({})
    assert await dep.check_create_complete(token)
    first_derived = rt.software_deployments.rows[dep.resource_id or ""]["config_id"]
    token = roundtrip(await dep.handle_delete())
    row = rt.software_deployments.rows[dep.resource_id or ""]
    assert row["action"] == "DELETE" and row["status"] == "IN_PROGRESS"
    assert first_derived not in rt.software_configs.configs   # replaced derived config
    assert not await dep.check_delete_complete(token)
    await dep.handle_signal({})
    assert await dep.check_delete_complete(token)
    assert rt.software_deployments.rows == {}
    assert list(rt.software_configs.configs) == [sc.resource_id]


async def test_update_redeploys_or_replaces(rt: FakeRuntime) -> None:
    sc = await source_config(rt)
    props = {"config": sc.reference_id(), "server": "server-1",
             "input_values": {"foo": "a", "bar": 1}, "signal_transport": "NO_SIGNAL"}
    dep = make(rt, "d", "OS::Heat::SoftwareDeployment", props)
    await run(dep, "create")
    cls = type(dep)
    new = cls.make_properties("d", {**props, "input_values": {"foo": "b", "bar": 1}})
    diff = dep.diff_properties(dep.properties, new)
    assert not dep.needs_replace(diff)
    await run(dep, "update", dep.definition, new, diff)
    row = rt.software_deployments.rows[dep.resource_id or ""]
    assert row["action"] == "UPDATE" and row["input_values"] == {"foo": "b", "bar": 1}
    assert {i["name"]: i["value"] for i in derived(rt, dep)["inputs"]}["deploy_action"] \
        == "UPDATE"
    dep.properties = new
    changed = cls.make_properties("d", {**props, "input_values": {"foo": "b", "bar": 2}})
    with pytest.raises(UpdateReplace):              # bar is replace_on_change
        await dep.handle_update(dep.definition, changed,
                                dep.diff_properties(dep.properties, changed))


async def test_structured_deployment_substitutes_inputs(rt: FakeRuntime) -> None:
    st = make(rt, "st", "OS::Heat::StructuredConfig", {
        "config": {"a": {"get_input": "x"}, "b": [{"get_input": "y"}, "keep"],
                   "c": {"get_input": "x", "other": 1}}})
    await run(st, "create")
    dep = make(rt, "sd", "OS::Heat::StructuredDeployment", {
        "config": st.reference_id(), "server": "server-1",
        "input_values": {"x": 42}, "signal_transport": "NO_SIGNAL"})
    await run(dep, "create")
    assert derived(rt, dep)["config"] == {
        "a": 42, "b": [None, "keep"], "c": {"get_input": "x", "other": 1}}
    strict = make(rt, "ss", "OS::Heat::StructuredDeployment", {
        "config": st.reference_id(), "server": "server-1", "input_values": {"x": 1},
        "input_values_validate": "STRICT", "signal_transport": "NO_SIGNAL"})
    with pytest.raises(ResourceFailure) as info:
        await strict.handle_create()
    assert info.value.status_reason("ss") == (
        "UserParameterMissing: resources.ss: The Parameter (y) was not provided.")


async def test_deployment_without_config(rt: FakeRuntime) -> None:
    dep = make(rt, "d", "OS::Heat::SoftwareDeployment",
               {"server": "server-1", "signal_transport": "NO_SIGNAL"})
    await run(dep, "create")
    cfg = derived(rt, dep)
    assert cfg["config"] == "" and cfg["group"] == "Heat::Ungrouped"
    assert cfg["name"].startswith("teststack-d-")
