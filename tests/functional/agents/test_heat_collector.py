"""The ``heat`` collector (POLL_SERVER_HEAT) and HEAT_SIGNAL with a real Keystone.

os-collect-config logs in to Keystone with keystoneclient, finds the ``orchestration``
endpoint in the catalog (Kiln's), and reads ``GET .../stacks/{name}/{id}/resources/
{server}/metadata``; heat-config-notify signals the deployment. Kiln here runs without
authentication (it ignores the agent's token): the stack-domain users whose credentials
a DeployedServer publishes are not created in Keystone yet, so the agent logs in as an
ordinary Keystone user of the stack's project, and HEAT_SIGNAL carries Kiln's native
signal URL (``deploy_signal_id``) rather than Heat's ``deploy_auth_url``/user/password.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.functional.agents.deploying import (
    collector_args,
    create,
    deployment_template,
    outputs,
    settled,
    wait_deployment,
)
from tests.support.agents import agents_or_skip, make_sandbox
from tests.support.clients import heat_client
from tests.support.fixtures import StartKeystone, StartKiln
from tests.support.ports import free_port


def test_heat_collector_and_heat_signal(start_kiln_factory: StartKiln,
                                        start_keystone_factory: StartKeystone,
                                        tmp_path: Path) -> None:
    install = agents_or_skip()
    keystone = start_keystone_factory()
    port = free_port()
    kiln = start_kiln_factory(port=port, options={"DEFAULT": {
        "heat_metadata_server_url": f"http://127.0.0.1:{port}",
        "graceful_shutdown_timeout": 2}})
    keystone.register_service("orchestration", "kiln", f"{kiln.url}/v1/%(tenant_id)s")
    account = keystone.account()
    hc: Any = heat_client(kiln.endpoint(account.project_id))

    sid = create(hc, "heatpoll", deployment_template(transport="POLL_SERVER_HEAT",
                                                     signal="HEAT_SIGNAL"), greeting="hej")
    wait_deployment(hc, sid, "CREATE")
    occ = hc.resources.get(sid, "server").attributes["os_collect_config"]
    assert occ["collectors"] == ["heat", "local"]
    published = occ["heat"]
    assert published["stack_id"] == f"heatpoll/{sid}"
    assert published["resource_name"] == "server"
    login = {**published, "auth_url": keystone.url, "user_id": account.user_id,
             "password": account.password, "project_id": account.project_id,
             "region_name": "RegionOne"}
    box = make_sandbox(tmp_path / "instance", install)
    run = box.run_chain(collector_args({"collectors": ["heat"], "heat": login}))
    assert run.returncode == 0, box.log()

    stack = settled(hc, sid)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    server_id = hc.resources.get(sid, "server").physical_resource_id
    assert outputs(hc, sid)["stdout"] == f"stdout: hej from {server_id} (CREATE)\n"
    # the collector went through Keystone: it logged in, then read Kiln's metadata route
    assert "POST /v3/auth/tokens" in keystone.access_log.read_text()
    assert any(r.get("path", "").endswith("/resources/server/metadata")
               for r in kiln.log_records())
