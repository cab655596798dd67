"""Kiln restarted while a deployment waits for its server: the URLs the server was given
still work, and the deployment completes when the agent runs after the restart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.functional.agents.deploying import (
    create,
    deployment_template,
    outputs,
    server_collector,
    settled,
    wait_deployment,
)
from tests.support.agents import agents_or_skip, make_sandbox
from tests.support.clients import heat_client
from tests.support.fixtures import StartKiln


@pytest.mark.parametrize(("transport", "signal"), [
    ("POLL_TEMP_URL", "TEMP_URL_SIGNAL"),
    ("POLL_SERVER_CFN", "CFN_SIGNAL"),     # the server's keypair outlives the restart
])
def test_the_deployment_completes_after_a_restart(start_kiln_factory: StartKiln,
                                                  tmp_path: Path, transport: str,
                                                  signal: str) -> None:
    install = agents_or_skip()
    workdir = tmp_path / "kiln"
    options = {"DEFAULT": {"graceful_shutdown_timeout": 2}}
    first = start_kiln_factory(workdir=workdir, options=options)
    hc: Any = heat_client(first.endpoint("demo"))
    sid = create(hc, "restarted", deployment_template(transport=transport, signal=signal),
                 greeting="again")
    wait_deployment(hc, sid, "CREATE")
    args = server_collector(hc, sid)
    assert first.stop() == 0

    # the same addresses, as a real deployment's (the server was given them)
    second = start_kiln_factory(workdir=workdir, port=first.port, options={
        **options, "heat_api_cfn": {"bind_host": "127.0.0.1", "bind_port": first.cfn_port}})
    hc = heat_client(second.endpoint("demo"))
    assert hc.resources.get(sid, "deployment").resource_status == "CREATE_IN_PROGRESS"
    box = make_sandbox(tmp_path / "instance", install)
    assert box.run_chain(args).returncode == 0, box.log()
    stack = settled(hc, sid)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    assert outputs(hc, sid)["result"] == "again-done"
