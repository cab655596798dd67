"""Keystone mode: the per-credential rate limits key on the stack user (issue 22).

Each HEAT_SIGNAL handle gets its own Keystone stack user (what heat-config-notify and
curl log in with). One of them flooding its handle's signal URL is refused with Heat's
429 fault while another stack user, logged in with its own real Keystone token, is
served; the flooder is served again once its budget refills.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.functional.agents.deploying import wait_for
from tests.functional.agents.test_rate_limits import BURST, RATE, flood, heat_fault, recovers
from tests.functional.identity.test_stack_user_reach import login
from tests.functional.identity.test_stack_users import heat_as, keystone_setup
from tests.support.keystone import Account, KeystoneProcess
from tests.support.server import HTTP_TIMEOUT, KilnProcess, start_kiln

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {name: {"type": "OS::Heat::WaitConditionHandle",
                         "properties": {"signal_transport": "HEAT_SIGNAL"}}
                  for name in ("web_handle", "db_handle")},
}


@pytest.fixture(scope="module")
def limited_kiln(keystone: KeystoneProcess,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    name, admin = f"heat-{uuid.uuid4().hex[:8]}", f"heat-admin-{uuid.uuid4().hex[:6]}"
    password = f"pw-{uuid.uuid4().hex}"
    made = keystone_setup(keystone, name, admin, password)
    assert made.returncode == 0, made.stderr
    options = keystone.kiln_options()
    options["DEFAULT"] = {"stack_user_domain_name": name, "stack_domain_admin": admin,
                          "stack_domain_admin_password": password,
                          "graceful_shutdown_timeout": 2}
    options["kiln_api"] = {"agent_signal_rate": RATE, "agent_signal_burst": BURST}
    proc = start_kiln(tmp_path_factory.mktemp("kiln-rl"), options=options)
    yield proc
    proc.stop()


def test_each_stack_user_has_its_own_signal_budget(
        keystone: KeystoneProcess, limited_kiln: KilnProcess, member: Account) -> None:
    hc = heat_as(keystone, member, limited_kiln)
    sid = hc.stacks.create(stack_name="rl-users", template=TEMPLATE)["stack"]["id"]
    stack = wait_for(lambda: hc.stacks.get(sid),
                     lambda s: not s.stack_status.endswith("IN_PROGRESS"), "the create")
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    web = json.loads(hc.resources.get(sid, "web_handle").attributes["signal"])
    db = json.loads(hc.resources.get(sid, "db_handle").attributes["signal"])
    as_web, as_db = login(web), login(db)

    def signal(url: str, headers: dict[str, str], i: Any) -> httpx.Response:
        return httpx.post(url, headers=headers, timeout=HTTP_TIMEOUT,
                          json={"status": "SUCCESS", "reason": "r", "id": str(i)})

    answered, refused = flood(lambda i: signal(web["alarm_url"], as_web, i))
    assert "Too many signals" in heat_fault(refused)
    assert [signal(db["alarm_url"], as_db, i).status_code
            for i in range(BURST)] == [200] * BURST
    assert len(hc.resources.metadata(sid, "web_handle")) == answered
    assert recovers(lambda: signal(web["alarm_url"], as_web, "late"),
                    refused).status_code == 200
