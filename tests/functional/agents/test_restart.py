"""Kiln restarted while a deployment waits for its server: the URLs the server was given
still work, and the deployment completes when the agent runs after the restart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def test_the_deployment_completes_after_a_restart(start_kiln_factory: StartKiln,
                                                  tmp_path: Path) -> None:
    install = agents_or_skip()
    workdir = tmp_path / "kiln"
    options = {"DEFAULT": {"graceful_shutdown_timeout": 2}}
    first = start_kiln_factory(workdir=workdir, options=options)
    hc: Any = heat_client(first.endpoint("demo"))
    sid = create(hc, "restarted", deployment_template(), greeting="again")
    wait_deployment(hc, sid, "CREATE")
    args = server_collector(hc, sid)
    assert first.stop() == 0

    second = start_kiln_factory(workdir=workdir, options=options, port=first.port)
    hc = heat_client(second.endpoint("demo"))
    assert hc.resources.get(sid, "deployment").resource_status == "CREATE_IN_PROGRESS"
    box = make_sandbox(tmp_path / "instance", install)
    assert box.run_chain(args).returncode == 0, box.log()
    stack = settled(hc, sid)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    assert outputs(hc, sid)["result"] == "again-done"
