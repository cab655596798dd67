"""Keystone mode: a stack user reaches only the resource it was made for.

Issue 22, finding 7, with Keystone's stack users: each HEAT_SIGNAL handle gets its own
``heat_stack_user`` user and password (what heat-config-notify and curl log in with).
Heat's policy lets any stack user signal and read metadata; Kiln lets one signal and
read only its own resource (403 otherwise), in the native API and the CFN one.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.functional.agents.deploying import wait_for
from tests.functional.identity.test_stack_users import heat_as, keystone_setup, user_token
from tests.support.keystone import Account, KeystoneProcess
from tests.support.server import HTTP_TIMEOUT, KilnProcess, start_kiln

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "web_handle": {"type": "OS::Heat::WaitConditionHandle",
                       "properties": {"signal_transport": "HEAT_SIGNAL"}},
        "db_handle": {"type": "OS::Heat::WaitConditionHandle",
                      "properties": {"signal_transport": "HEAT_SIGNAL"}},
        "server": {"type": "OS::Heat::DeployedServer",
                   "properties": {"software_config_transport": "POLL_SERVER_HEAT"}},
    },
}


@pytest.fixture(scope="module")
def domain_kiln(keystone: KeystoneProcess,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    """Kiln with a stack user domain made by ``kiln keystone-setup``."""
    name, admin = f"heat-{uuid.uuid4().hex[:8]}", f"heat-admin-{uuid.uuid4().hex[:6]}"
    password = f"pw-{uuid.uuid4().hex}"
    made = keystone_setup(keystone, name, admin, password)
    assert made.returncode == 0, made.stderr
    options = keystone.kiln_options()
    options["DEFAULT"] = {"stack_user_domain_name": name, "stack_domain_admin": admin,
                          "stack_domain_admin_password": password,
                          "graceful_shutdown_timeout": 2}
    proc = start_kiln(tmp_path_factory.mktemp("kiln-reach"), options=options)
    yield proc
    proc.stop()


def login(signal: dict[str, Any]) -> dict[str, str]:
    token = user_token(signal["auth_url"], signal["user_id"], signal["password"],
                       signal["project_id"])
    return {"X-Auth-Token": token}


def test_a_stack_user_signals_and_reads_its_own_resource_only(
        keystone: KeystoneProcess, domain_kiln: KilnProcess, member: Account) -> None:
    kiln = domain_kiln
    hc = heat_as(keystone, member, kiln)
    sid = hc.stacks.create(stack_name="reach", template=TEMPLATE)["stack"]["id"]
    stack = wait_for(lambda: hc.stacks.get(sid),
                     lambda s: not s.stack_status.endswith("IN_PROGRESS"), "the create")
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    web = json.loads(hc.resources.get(sid, "web_handle").attributes["signal"])
    db = json.loads(hc.resources.get(sid, "db_handle").attributes["signal"])
    as_web = login(web)
    base = db["alarm_url"].rsplit("/resources/", 1)[0]

    refused = httpx.post(db["alarm_url"], headers=as_web, timeout=HTTP_TIMEOUT,
                         json={"status": "SUCCESS", "reason": "forged"})
    assert refused.status_code == 403, refused.text
    assert refused.json()["error"]["type"] == "Forbidden"
    for other in ("db_handle", "server"):
        read = httpx.get(f"{base}/resources/{other}/metadata", headers=as_web,
                         timeout=HTTP_TIMEOUT)
        assert read.status_code == 403, read.text
    server_id = hc.resources.get(sid, "server").physical_resource_id
    deployments = httpx.get(
        f"{kiln.url}/v1/{web['project_id']}/software_deployments/metadata/{server_id}",
        headers=as_web, timeout=HTTP_TIMEOUT)
    assert deployments.status_code == 403, deployments.text
    assert hc.resources.metadata(sid, "db_handle") == {}

    # its own resource: signalled and read as before
    sent = httpx.post(web["alarm_url"], headers=as_web, timeout=HTTP_TIMEOUT,
                      json={"status": "SUCCESS", "reason": "up", "data": "web", "id": "1"})
    assert sent.status_code == 200, sent.text
    own = httpx.get(f"{base}/resources/web_handle/metadata", headers=as_web,
                    timeout=HTTP_TIMEOUT)
    assert own.status_code == 200, own.text
    assert own.json()["metadata"]["1"]["data"] == "web"
    # the server's own login (POLL_SERVER_HEAT) reads its server's metadata and
    # deployments, and not a handle's
    occ = hc.resources.get(sid, "server").attributes["os_collect_config"]["heat"]
    as_server = {"X-Auth-Token": user_token(occ["auth_url"], occ["user_id"],
                                            occ["password"], occ["project_id"])}
    mine = httpx.get(f"{base}/resources/server/metadata", headers=as_server,
                     timeout=HTTP_TIMEOUT)
    assert mine.status_code == 200, mine.text
    assert httpx.get(
        f"{kiln.url}/v1/{occ['project_id']}/software_deployments/metadata/{server_id}",
        headers=as_server, timeout=HTTP_TIMEOUT).status_code == 200
    assert httpx.get(f"{base}/resources/web_handle/metadata", headers=as_server,
                     timeout=HTTP_TIMEOUT).status_code == 403
