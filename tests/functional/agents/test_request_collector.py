"""The whole agent chain, unchanged, against ``kiln serve`` with no object store: a
DeployedServer on POLL_TEMP_URL (os-collect-config's ``request`` collector reads its
metadata from a Kiln temp URL) and a script deployment on TEMP_URL_SIGNAL
(heat-config-notify PUTs the hook's result to another Kiln temp URL)."""

from __future__ import annotations

from typing import Any

import httpx

from tests.functional.agents.deploying import (
    create,
    deleted,
    deployment_template,
    metadata_url,
    outputs,
    server_collector,
    settled,
    wait_deployment,
)
from tests.support.agents import Sandbox
from tests.support.server import HTTP_TIMEOUT


def test_script_deploys_and_its_outputs_come_back(hc: Any, box: Sandbox) -> None:
    sid = create(hc, "req1", deployment_template(), greeting="hi")
    wait_deployment(hc, sid, "CREATE")
    args = server_collector(hc, sid)
    assert args[-1] == "request"
    assert metadata_url(args).startswith("http://127.0.0.1:")

    run = box.run_chain(args)
    assert run.returncode == 0, box.log()

    stack = settled(hc, sid)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    out = outputs(hc, sid)
    server_id = hc.resources.get(sid, "server").physical_resource_id
    assert out["stdout"] == f"stdout: hi from {server_id} (CREATE)\n"
    assert out["stderr"] == "to-stderr\n"
    assert out["status_code"] == 0
    assert out["result"] == "hi-done"
    # what the hook got: every deploy_* input Heat gives a TEMP_URL_SIGNAL deployment
    (deployed,) = [v for k, v in box.deployed().items() if not k.endswith(".notify.json")]
    inputs = {i["name"]: i["value"] for i in deployed["inputs"]}
    assert inputs["deploy_server_id"] == server_id
    assert inputs["deploy_action"] == "CREATE"
    assert inputs["deploy_stack_id"] == f"req1/{sid}"
    assert inputs["deploy_resource_name"] == "deployment"
    assert inputs["deploy_signal_transport"] == "TEMP_URL_SIGNAL"
    assert inputs["deploy_signal_verb"] == "PUT"
    assert "temp_url_sig=" in inputs["deploy_signal_id"]
    assert inputs["greeting"] == "hi"


def test_an_update_runs_the_script_again(hc: Any, box: Sandbox) -> None:
    sid = create(hc, "req-update", deployment_template(), greeting="one")
    wait_deployment(hc, sid, "CREATE")
    args = server_collector(hc, sid)
    assert box.run_chain(args).returncode == 0, box.log()
    assert settled(hc, sid).stack_status == "CREATE_COMPLETE"

    hc.stacks.update(sid, template=deployment_template(), parameters={"greeting": "two"})
    wait_deployment(hc, sid, "UPDATE")
    assert box.run_chain(args).returncode == 0, box.log()
    stack = settled(hc, sid)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    out = outputs(hc, sid)
    assert out["stdout"].endswith("two from " + hc.resources.get(sid, "server")
                                  .physical_resource_id + " (UPDATE)\n")
    assert out["result"] == "two-done"


def test_a_failing_script_fails_the_deployment(hc: Any, box: Sandbox) -> None:
    sid = create(hc, "req-fail", deployment_template(), exit_code="3")
    wait_deployment(hc, sid, "CREATE")
    assert box.run_chain(server_collector(hc, sid)).returncode == 0, box.log()
    stack = settled(hc, sid)
    assert stack.stack_status == "CREATE_FAILED"
    # Heat 27's words, as the resource and the stack report them
    reason = ("Error: resources.deployment: Deployment to server failed: "
              "deploy_status_code : Deployment exited with non-zero status code: 3")
    assert stack.stack_status_reason == f"Resource CREATE failed: {reason}"
    assert hc.resources.get(sid, "deployment").resource_status_reason == reason
    assert outputs(hc, sid)["status_code"] == 3


def test_delete_and_suspend_resume_run_when_asked(hc: Any, box: Sandbox) -> None:
    """actions: a deployment triggered on SUSPEND, RESUME and DELETE waits for the agent
    in each of them (a signal during DELETE or SUSPEND reaches it, as in Heat)."""
    template = deployment_template(actions=["CREATE", "SUSPEND", "RESUME", "DELETE"])
    sid = create(hc, "req-actions", template)
    wait_deployment(hc, sid, "CREATE")
    args = server_collector(hc, sid)
    assert box.run_chain(args).returncode == 0, box.log()
    assert settled(hc, sid).stack_status == "CREATE_COMPLETE"

    for action, done in (("suspend", "SUSPEND_COMPLETE"), ("resume", "RESUME_COMPLETE")):
        getattr(hc.actions, action)(sid)
        wait_deployment(hc, sid, action.upper())
        assert box.run_chain(args).returncode == 0, box.log()
        stack = settled(hc, sid)
        assert stack.stack_status == done, stack.stack_status_reason
        shown = hc.resources.get(sid, "deployment").attributes
        assert shown["deploy_stdout"].endswith(f"({action.upper()})\n")
        # the stack's outputs follow (they were left as at create)
        assert outputs(hc, sid)["stdout"] == shown["deploy_stdout"]

    hc.stacks.delete(sid)
    wait_deployment(hc, sid, "DELETE")
    assert box.run_chain(args).returncode == 0, box.log()
    assert deleted(hc, sid) == "DELETE_COMPLETE"
    notified = [v for k, v in box.deployed().items() if k.endswith(".notify.json")]
    assert any("(DELETE)" in n["deploy_stdout"] for n in notified)


def test_the_metadata_url_answers_head_with_last_modified(hc: Any) -> None:
    sid = create(hc, "req-head", deployment_template(signal="NO_SIGNAL"))
    assert settled(hc, sid).stack_status == "CREATE_COMPLETE"
    url = metadata_url(server_collector(hc, sid))
    head = httpx.head(url, timeout=HTTP_TIMEOUT)
    assert head.status_code == 200
    assert head.headers["last-modified"].endswith(" GMT")
    assert head.content == b""
    got = httpx.get(url, timeout=HTTP_TIMEOUT)
    assert got.headers["last-modified"] == head.headers["last-modified"]
    body = got.json()
    # the same document the native API shows as the server's metadata
    assert body == hc.resources.metadata(sid, "server")
    (deployment,) = body["deployments"]
    assert deployment["group"] == "script"
    assert body["os-collect-config"]["request"]["metadata_url"] == url


def _writes(word: str) -> str:
    return f"#!/bin/sh\nprintf '{word} %s' \"$greeting\" > \"$heat_outputs_path.result\"\n"


def test_a_software_component_runs_the_config_of_each_action(hc: Any, box: Sandbox) -> None:
    """OS::Heat::SoftwareComponent: 55-heat-config picks the config listed for the
    deployment's action and runs it with that config's tool."""
    template = deployment_template()
    template["resources"]["config"] = {"type": "OS::Heat::SoftwareComponent", "properties": {
        "inputs": [{"name": "greeting"}], "outputs": [{"name": "result"}],
        "configs": [
            {"actions": ["CREATE"], "tool": "script", "config": _writes("made")},
            {"actions": ["UPDATE"], "tool": "script", "config": _writes("changed")},
        ]}}
    sid = create(hc, "component", template, greeting="it")
    wait_deployment(hc, sid, "CREATE")
    args = server_collector(hc, sid)
    assert box.run_chain(args).returncode == 0, box.log()
    assert settled(hc, sid).stack_status == "CREATE_COMPLETE"
    assert outputs(hc, sid)["result"] == "made it"

    hc.stacks.update(sid, template=template, parameters={"greeting": "that"})
    wait_deployment(hc, sid, "UPDATE")
    assert box.run_chain(args).returncode == 0, box.log()
    stack = settled(hc, sid)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    assert outputs(hc, sid)["result"] == "changed that"
