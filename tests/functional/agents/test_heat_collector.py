"""The ``heat`` collector (POLL_SERVER_HEAT) and HEAT_SIGNAL with a real Keystone.

os-collect-config logs in to Keystone with keystoneclient, finds the ``orchestration``
endpoint in the catalog (Kiln's), and reads ``GET .../stacks/{name}/{id}/resources/
{server}/metadata``; heat-config-notify signals the deployment. Two setups:

- Kiln without authentication (it ignores the agent's token): the DeployedServer's
  published user is a placeholder, so the agent logs in as an ordinary Keystone user of
  the stack's project, and HEAT_SIGNAL carries Kiln's native signal URL
  (``deploy_signal_id``);
- keystone mode with a stack user domain: the server and the deployment each get a stack
  user Kiln made in Keystone, and the agents use the published credentials unchanged
  (heat-config-notify with Heat's ``deploy_auth_url``/``deploy_user_id``/
  ``deploy_password``/``deploy_project_id``).
"""

from __future__ import annotations

import json
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
    assert kiln.records_when_logged(
        lambda r: str(r.get("path", "")).endswith("/resources/server/metadata"))


def keystone_kiln(start_kiln_factory: StartKiln,
                  start_keystone_factory: StartKeystone) -> tuple[Any, Any, Any, Any]:
    """A private Keystone with a stack user domain (``kiln keystone-setup``), Kiln in
    keystone mode using it and listed in the catalog, and heatclient for a new member:
    (keystone, kiln, heatclient, account)."""
    from tests.functional.identity.test_stack_users import heat_as, keystone_setup

    keystone = start_keystone_factory()
    setup = keystone_setup(keystone, "heat", "heat_stack_admin", "domain-secret")
    assert setup.returncode == 0, setup.stderr
    options = keystone.kiln_options()
    options["DEFAULT"] = {"graceful_shutdown_timeout": 2, "stack_user_domain_name": "heat",
                          "stack_domain_admin": "heat_stack_admin",
                          "stack_domain_admin_password": "domain-secret"}
    kiln = start_kiln_factory(options=options)
    keystone.register_service("orchestration", "kiln", f"{kiln.url}/v1/%(tenant_id)s")
    account = keystone.account()
    return keystone, kiln, heat_as(keystone, account, kiln), account


def test_heat_collector_and_heat_signal_as_the_stack_user(
        start_kiln_factory: StartKiln, start_keystone_factory: StartKeystone,
        tmp_path: Path) -> None:
    """Keystone mode with a stack user domain: the server's credentials are a stack user
    Kiln made in Keystone, and the real agents use them exactly as published."""
    install = agents_or_skip()
    keystone, kiln, hc, account = keystone_kiln(start_kiln_factory, start_keystone_factory)

    sid = create(hc, "heatpoll", deployment_template(transport="POLL_SERVER_HEAT",
                                                     signal="HEAT_SIGNAL"), greeting="hej")
    wait_deployment(hc, sid, "CREATE")
    occ = hc.resources.get(sid, "server").attributes["os_collect_config"]
    published = occ["heat"]
    user_project = hc.stacks.get(sid).stack_user_project_id
    assert user_project != account.project_id
    assert (published["auth_url"], published["project_id"]) == (keystone.url, user_project)
    # the deployment hands heat-config-notify Heat's HEAT_SIGNAL inputs, no signal URL
    config = hc.resources.metadata(sid, "server")["deployments"][0]
    inputs = {i["name"]: i.get("value") for i in config["inputs"]}
    assert inputs["deploy_project_id"] == user_project
    assert inputs["deploy_auth_url"] == keystone.url
    assert inputs["deploy_user_id"] != published["user_id"]
    assert "deploy_signal_id" not in inputs

    box = make_sandbox(tmp_path / "instance", install)
    run = box.run_chain(collector_args(occ))
    assert run.returncode == 0, box.log()

    stack = settled(hc, sid)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    server_id = hc.resources.get(sid, "server").physical_resource_id
    assert outputs(hc, sid)["stdout"] == f"stdout: hej from {server_id} (CREATE)\n"
    # both agents went through Kiln under the stack user's project (an access line is
    # written after its response is sent: the signal's can trail the stack's completion)
    for route in ("/server/metadata", "/deployment/signal"):
        assert kiln.records_when_logged(
            lambda r, route=route: str(r.get("path", "")).startswith(f"/v1/{user_project}/")
            and str(r.get("path", "")).endswith(route)), route
    assert published["password"] not in kiln.logs()


def test_cfn_collector_and_cfn_signal_with_keystone_ec2_credentials(
        start_kiln_factory: StartKiln, start_keystone_factory: StartKeystone,
        tmp_path: Path) -> None:
    """POLL_SERVER_CFN and CFN_SIGNAL in keystone mode: the server's keypair and the
    deployment's pre-signed URL are Keystone EC2 credentials of stack users, and every
    signature the agents make is checked by Keystone's ec2tokens."""
    install = agents_or_skip()
    keystone, kiln, hc, _ = keystone_kiln(start_kiln_factory, start_keystone_factory)
    sid = create(hc, "cfnpoll", deployment_template(transport="POLL_SERVER_CFN",
                                                    signal="CFN_SIGNAL"), greeting="hey")
    wait_deployment(hc, sid, "CREATE")
    occ = hc.resources.get(sid, "server").attributes["os_collect_config"]
    access = occ["cfn"]["access_key_id"]
    user_project = hc.stacks.get(sid).stack_user_project_id
    held = keystone.admin().get("/credentials", params={"type": "ec2"}).json()
    owners = {json.loads(c["blob"])["access"]: c["project_id"] for c in held["credentials"]}
    assert owners[access] == user_project

    box = make_sandbox(tmp_path / "instance", install)
    run = box.run_chain(collector_args(occ))
    assert run.returncode == 0, box.log()
    stack = settled(hc, sid)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    server_id = hc.resources.get(sid, "server").physical_resource_id
    assert outputs(hc, sid)["stdout"] == f"stdout: hey from {server_id} (CREATE)\n"
    # the metadata poll and the signal were both checked by Keystone
    assert keystone.access_log.read_text().count('"POST /v3/ec2tokens') >= 2
    assert occ["cfn"]["secret_access_key"] not in kiln.logs()
