"""The ``cfn`` collector (POLL_SERVER_CFN) and CFN_SIGNAL, with the real agents.

os-collect-config's cfn collector signs ``DescribeStackResource`` (SigV2) with the keypair
the DeployedServer was issued and reads the server's ``Metadata`` from Kiln's CFN API;
heat-config-notify POSTs the hook's result to the deployment's pre-signed
``/v1/signal/{arn}`` URL. No Keystone: the signatures are checked against the keypairs
Kiln issued.
"""

from __future__ import annotations

from typing import Any

from tests.functional.agents.deploying import (
    create,
    deleted,
    deployment_template,
    outputs,
    run_for,
    server_collector,
    settled,
    wait_deployment,
)
from tests.support.agents import Sandbox
from tests.support.server import KilnProcess


def _cfn_template() -> dict[str, Any]:
    return deployment_template(transport="POLL_SERVER_CFN", signal="CFN_SIGNAL")


def test_script_deploys_through_the_cfn_collector(hc: Any, kiln: KilnProcess,
                                                   box: Sandbox) -> None:
    sid = create(hc, "cfnpoll", _cfn_template(), greeting="salut")
    wait_deployment(hc, sid, "CREATE")
    args = server_collector(hc, sid)
    assert args[-1] == "cfn"
    # what the server was given: Kiln's CFN endpoint and the keypair issued to it
    url = args[args.index("--cfn-metadata-url") + 1]
    assert url == kiln.cfn_url.rstrip("/") + "/", (url, kiln.cfn_url)
    assert args[args.index("--cfn-path") + 1] == "server.Metadata"

    collected = box.collect(args)
    (deployment,) = collected["cfn"]["deployments"]
    assert deployment["group"] == "script"

    run = box.run_chain(args)
    assert run.returncode == 0, box.log()
    stack = settled(hc, sid)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    server_id = hc.resources.get(sid, "server").physical_resource_id
    out = outputs(hc, sid)
    assert out["stdout"] == f"stdout: salut from {server_id} (CREATE)\n"
    assert out["stderr"] == "to-stderr\n"
    assert out["status_code"] == 0
    assert out["result"] == "salut-done"
    shown = hc.resources.get(sid, "deployment").attributes
    assert shown["deploy_stdout"] == out["stdout"]
    # the hook was told to signal through the CFN API, with a pre-signed POST
    (ran,) = [v for k, v in box.deployed().items() if not k.endswith(".notify.json")]
    inputs = {i["name"]: i["value"] for i in ran["inputs"]}
    assert inputs["deploy_signal_transport"] == "CFN_SIGNAL"
    assert inputs["deploy_signal_id"].startswith(kiln.cfn_url.rstrip("/") + "/signal/")
    assert "Signature=" in inputs["deploy_signal_id"]


def test_update_failure_and_delete_through_the_cfn_collector(hc: Any,
                                                             box: Sandbox) -> None:
    sid = create(hc, "cfnpoll-life", _cfn_template(), greeting="one")
    wait_deployment(hc, sid, "CREATE")
    args = server_collector(hc, sid)
    assert run_for(hc, sid, box, args, "CREATE").stack_status == "CREATE_COMPLETE"

    for greeting, code, status in (("two", "0", "UPDATE_COMPLETE"),
                                   ("three", "5", "UPDATE_FAILED")):
        hc.stacks.update(sid, template=_cfn_template(),
                         parameters={"greeting": greeting, "exit_code": code})
        stack = run_for(hc, sid, box, args, "UPDATE")
        assert stack.stack_status == status, stack.stack_status_reason
        assert outputs(hc, sid)["status_code"] == int(code)
    assert outputs(hc, sid)["result"] == "three-done"
    assert stack.stack_status_reason.endswith(
        "Deployment exited with non-zero status code: 5"), stack.stack_status_reason

    hc.stacks.delete(sid)
    assert deleted(hc, sid) == "DELETE_COMPLETE"
    # the stack and the server's keypair are gone: the collector is refused, and the
    # agent runs nothing
    before = box.deployed()
    run = box.run_chain(args)
    assert "403 Client Error" in run.output, run.output   # the key is refused at once
    assert box.deployed() == before
