"""OS::Heat::SoftwareDeploymentGroup over three servers, each with its own agent chain in
its own instance root; the group's attributes are maps keyed by the ``servers`` keys."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from tests.functional.agents.deploying import (
    SCRIPT,
    create,
    deploy_actions,
    server_collector,
    settled,
    wait_deployment,
    wait_resource,
)
from tests.support.agents import agents_or_skip, make_sandbox

NAMES = ("alpha", "beta", "gamma")


def _template(group_type: str = "OS::Heat::SoftwareDeploymentGroup") -> dict[str, Any]:
    resources: dict[str, Any] = {
        f"server_{n}": {"type": "OS::Heat::DeployedServer",
                        "properties": {"software_config_transport": "POLL_TEMP_URL"}}
        for n in NAMES}
    resources["config"] = {"type": "OS::Heat::SoftwareConfig", "properties": {
        "group": "script", "inputs": [{"name": "greeting"}], "outputs": [{"name": "result"}],
        "config": SCRIPT}}
    resources["deployments"] = {"type": group_type, "properties": {
        "config": {"get_resource": "config"},
        "servers": {n: {"get_resource": f"server_{n}"} for n in NAMES},
        "signal_transport": "TEMP_URL_SIGNAL",
        "input_values": {"greeting": {"get_param": "greeting"}}}}
    return {"heat_template_version": "2018-08-31",
            "parameters": {"greeting": {"type": "string", "default": "hello"}},
            "resources": resources,
            "outputs": {
                "stdouts": {"value": {"get_attr": ["deployments", "deploy_stdouts"]}},
                "codes": {"value": {"get_attr": ["deployments", "deploy_status_codes"]}},
                "results": {"value": {"get_attr": ["deployments", "result"]}},
                "beta": {"value": {"get_attr": ["deployments", "result", "beta"]}}}}


def _all_waiting(hc: Any, sid: str) -> None:
    """Each server's metadata holds its member's deployment (its agent can run it)."""
    for name in NAMES:
        wait_deployment(hc, sid, "CREATE", server=f"server_{name}")


def test_a_group_deploys_to_three_servers(hc: Any, tmp_path: Path) -> None:
    install = agents_or_skip()
    sid = create(hc, "group3", _template(), greeting="hey")
    _all_waiting(hc, sid)
    servers = {n: hc.resources.get(sid, f"server_{n}").physical_resource_id for n in NAMES}
    for name in NAMES:
        box = make_sandbox(tmp_path / name, install)
        run = box.run_chain(server_collector(hc, sid, f"server_{name}"))
        assert run.returncode == 0, box.log()
        # each server ran exactly its own deployment
        (notify,) = [v for k, v in box.deployed().items() if k.endswith(".notify.json")]
        assert notify["deploy_stdout"] == f"stdout: hey from {servers[name]} (CREATE)\n"

    stack = settled(hc, sid)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    out = {o["output_key"]: o["output_value"] for o in stack.outputs}
    assert out["stdouts"] == {n: f"stdout: hey from {servers[n]} (CREATE)\n" for n in NAMES}
    assert out["codes"] == dict.fromkeys(NAMES, 0)
    assert out["results"] == dict.fromkeys(NAMES, "hey-done")
    assert out["beta"] == "hey-done"
    wait_resource(hc, sid, "deployments", "CREATE_COMPLETE")


def test_a_structured_group_substitutes_inputs_per_server(hc: Any, tmp_path: Path) -> None:
    """StructuredConfig + StructuredDeploymentGroup through heat-agents' json-file hook:
    each server's file holds the inputs substituted for that server."""
    install = agents_or_skip()
    written = tmp_path / "written" / "out.json"
    template = _template("OS::Heat::StructuredDeploymentGroup")
    template["resources"]["config"] = {"type": "OS::Heat::StructuredConfig", "properties": {
        "group": "json-file",
        "config": {str(written): {"server": {"get_input": "deploy_server_id"},
                                  "action": {"get_input": "deploy_action"},
                                  "greeting": {"get_input": "greeting"}}}}}
    del template["outputs"]["results"], template["outputs"]["beta"]
    sid = create(hc, "sgroup3", template, greeting="hola")
    _all_waiting(hc, sid)
    for name in NAMES:
        server = hc.resources.get(sid, f"server_{name}").physical_resource_id
        box = make_sandbox(tmp_path / name, install)
        assert box.run_chain(server_collector(hc, sid, f"server_{name}")).returncode == 0, \
            box.log()
        assert json.loads(written.read_text()) == {"server": server, "action": "CREATE",
                                                   "greeting": "hola"}
    stack = settled(hc, sid)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    out = {o["output_key"]: o["output_value"] for o in stack.outputs}
    assert out["codes"] == dict.fromkeys(NAMES, 0)



def _policy_template(policy: dict[str, Any], signal: str = "TEMP_URL_SIGNAL"
                     ) -> dict[str, Any]:
    template = _template()
    template["resources"]["deployments"]["update_policy"] = policy
    template["resources"]["deployments"]["properties"]["signal_transport"] = signal
    return template


def test_rolling_update_deploys_one_server_at_a_time(hc: Any, tmp_path: Path) -> None:
    """rolling_update max_batch_size 1: the update reaches one server, the next only once
    that one's agent has signalled, the last server in the map first (as Heat)."""
    install = agents_or_skip()
    template = _policy_template({"rolling_update": {"max_batch_size": 1}})
    sid = create(hc, "rolling", template, greeting="v1")
    _all_waiting(hc, sid)
    boxes = {n: make_sandbox(tmp_path / n, install) for n in NAMES}
    args = {n: server_collector(hc, sid, f"server_{n}") for n in NAMES}
    for name in NAMES:
        assert boxes[name].run_chain(args[name]).returncode == 0, boxes[name].log()
    assert settled(hc, sid).stack_status == "CREATE_COMPLETE"

    hc.stacks.update(sid, template=template, parameters={"greeting": "v2"})
    for name in reversed(NAMES):
        wait_deployment(hc, sid, "UPDATE", server=f"server_{name}")
        # the servers not reached yet still hold only their CREATE deployment
        later = [n for n in NAMES if NAMES.index(n) < NAMES.index(name)]
        for waiting in later:
            assert deploy_actions(hc, sid, f"server_{waiting}") == ["CREATE"], waiting
        assert boxes[name].run_chain(args[name]).returncode == 0, boxes[name].log()
    stack = settled(hc, sid)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    out = {o["output_key"]: o["output_value"] for o in stack.outputs}
    assert out["results"] == dict.fromkeys(NAMES, "v2-done")


def _child_updates(hc: Any, sid: str) -> list[tuple[Any, set[str]]]:
    """For each UPDATE of the group's child stack: when it started, which members it
    updated or created (from the child's events)."""
    child = hc.resources.get(sid, "deployments").physical_resource_id
    found: list[tuple[Any, set[str]]] = []
    action = ""
    for ev in hc.events.list(child, sort_dir="asc"):
        if ev.physical_resource_id == child:      # the child stack's own event
            action = ev.resource_status
            if action == "UPDATE_IN_PROGRESS":
                found.append((ev.event_time, set()))
        elif action == "UPDATE_IN_PROGRESS" and ev.resource_status.endswith("IN_PROGRESS"):
            found[-1][1].add(ev.resource_name)
    return found


def test_batch_create_and_pause_time(hc: Any) -> None:
    """batch_create max_batch_size 2 creates two deployments, then the third (from an
    empty child, as Heat); rolling_update max_batch_size 2 with pause_time 1 updates in
    two child updates at least a second apart (NO_SIGNAL: no agent to wait for)."""
    template = _policy_template({"batch_create": {"max_batch_size": 2},
                                 "rolling_update": {"max_batch_size": 2, "pause_time": 1}},
                                signal="NO_SIGNAL")
    sid = create(hc, "batched", template, greeting="v1")
    assert settled(hc, sid).stack_status == "CREATE_COMPLETE"
    assert [members for _, members in _child_updates(hc, sid)] == [
        {"alpha", "beta"}, {"gamma"}]

    hc.stacks.update(sid, template=template, parameters={"greeting": "v2"})
    stack = settled(hc, sid)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    updates = _child_updates(hc, sid)[2:]
    assert [members for _, members in updates] == [{"gamma", "beta"}, {"alpha"}]
    first, second = (dt.datetime.fromisoformat(at.rstrip("Z")) for at, _ in updates)
    assert (second - first).total_seconds() >= 1.0
