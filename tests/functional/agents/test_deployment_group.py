"""OS::Heat::SoftwareDeploymentGroup over three servers, each with its own agent chain in
its own instance root; the group's attributes are maps keyed by the ``servers`` keys."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.functional.agents.deploying import (
    SCRIPT,
    create,
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

