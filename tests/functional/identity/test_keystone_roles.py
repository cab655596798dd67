"""Heat 27's roles and policy rules with real tokens: reader, member, admin and the
in-instance heat_stack_user; an operator's policy file; one that does not parse."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import httpx

from tests.functional.api.test_api_tenancy import SMALL, created
from tests.functional.identity.conftest import token_client
from tests.support.keystone import Account, KeystoneProcess
from tests.support.server import KilnProcess, start_kiln


def denied(reply: httpx.Response, rule: str) -> None:
    assert reply.status_code == 403, reply.text
    assert reply.json()["error"] == {
        "type": "Forbidden", "traceback": None,
        "message": f"You are not authorized to use {rule}."}


def test_reader_reads_member_writes_admin_reaches_every_project(
        ks_kiln: KilnProcess, keystone: KeystoneProcess, member: Account,
        member_http: httpx.Client) -> None:
    stack = created(member_http, member.project_id, "roles-stack", SMALL)
    url = f"/v1/{member.project_id}/stacks/roles-stack/{stack['id']}"
    reader = keystone.account(("reader",), project=member.project, prefix="reader")
    with token_client(ks_kiln, reader) as http:
        assert http.get(url).status_code == 200
        assert http.get(url + "/resources").status_code == 200
        denied(http.post(f"/v1/{member.project_id}/stacks",
                         json={"stack_name": "nope", "template": SMALL}), "stacks:create")
        denied(http.delete(url), "stacks:delete")
        denied(http.post(url + "/actions", json={"suspend": None}), "actions:suspend")
        # a reader may check, as in Heat
        assert http.post(url + "/actions", json={"check": None}).status_code == 200
    admin = keystone.account(("admin",), prefix="admin")
    with token_client(ks_kiln, admin) as http:
        # Heat's context_is_admin: the stack is found by id from the admin's own project
        shown = http.get(f"/v1/{admin.project_id}/stacks/roles-stack/{stack['id']}")
        assert shown.status_code == 200, shown.text
        assert http.get(f"/v1/{admin.project_id}/services").status_code == 200
    with token_client(ks_kiln, member) as http:
        denied(http.get(f"/v1/{member.project_id}/services"), "service:index")


def test_a_stack_user_may_only_read_metadata_and_signal_its_own_resource(
        ks_kiln: KilnProcess, keystone: KeystoneProcess, member: Account,
        member_http: httpx.Client) -> None:
    """Heat's policy lets a heat_stack_user read metadata and signal; Kiln lets one reach
    only the resource it was made for (issue 22), and this one was made for none (its
    own resource: tests/functional/identity/test_stack_user_reach.py)."""
    stack = created(member_http, member.project_id, "stack-user-stack", SMALL)
    url = f"/v1/{member.project_id}/stacks/stack-user-stack/{stack['id']}"
    agent = keystone.account(("heat_stack_user",), project=member.project, prefix="agent")
    with token_client(ks_kiln, agent) as http:
        for reply in (http.get(url + "/resources/r/metadata"),
                      http.post(url + "/resources/r/signal", json={})):
            assert reply.status_code == 403, reply.text
            assert "the resource it was made for" in reply.json()["error"]["message"]
        denied(http.get(f"/v1/{member.project_id}/stacks"), "stacks:index")
        denied(http.get(url), "stacks:show")
        denied(http.get(url + "/resources"), "resource:index")
        denied(http.delete(url), "stacks:delete")


def test_an_operators_policy_file_changes_a_rule(
        keystone: KeystoneProcess, start_kiln_factory: Any, tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text('"stacks:index": "role:admin"\n')
    options = keystone.kiln_options()
    options["oslo_policy"] = {"policy_file": policy}
    kiln = start_kiln_factory(options=options)
    account = keystone.account(("member",))
    with token_client(kiln, account) as http:
        denied(http.get(f"/v1/{account.project_id}/stacks"), "stacks:index")
        assert http.post(f"/v1/{account.project_id}/stacks",
                         json={"stack_name": "ok", "template": SMALL}).status_code == 201


def test_a_policy_file_that_does_not_parse_stops_startup(
        keystone: KeystoneProcess, tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text('"stacks:index": "role:admin"\n"stacks:show": [\n')
    options = keystone.kiln_options()
    options["oslo_policy"] = {"policy_file": policy}
    kiln = start_kiln(tmp_path / "kiln", options=options, wait=False)
    try:
        status = kiln.proc.wait(60)
    except subprocess.TimeoutExpired:
        raise AssertionError("kiln kept running with a broken policy file") from None
    finally:
        kiln.stop()
    assert status == 2, kiln.logs()
    assert f"kiln: error: {policy}: cannot parse the policy file" in kiln.logs()
    assert "line 3" in kiln.logs()
