"""The standalone and custombackend flavors, through a real `kiln serve`."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path
from typing import Any

import httpx
import yaml

from tests.support.keystone import KeystoneProcess
from tests.support.server import HTTP_TIMEOUT, start_kiln

SMALL = {"heat_template_version": "2018-08-31",
         "resources": {"r": {"type": "OS::Heat::None"}}}


def test_standalone_logs_the_user_in_with_heatclients_credentials(
        keystone: KeystoneProcess, start_kiln_factory: Any) -> None:
    from heatclient import client as heat
    from heatclient import exc as heat_exc

    kiln = start_kiln_factory(options={"paste_deploy": {"flavor": "standalone"},
                                       "clients_keystone": {"auth_uri": keystone.url}})
    account = keystone.account(("member",))
    endpoint = kiln.endpoint(account.project_id)
    # heatclient given a username and password sends X-Auth-User / X-Auth-Key itself
    client = heat.Client("1", endpoint=endpoint, username=account.username,
                         password=account.password, include_pass=True)
    client.stacks.create(stack_name="standalone", template=SMALL)
    stack = client.stacks.get("standalone")
    assert stack.stack_owner == account.username
    assert [s.stack_name for s in client.stacks.list()] == ["standalone"]

    wrong = heat.Client("1", endpoint=endpoint, username=account.username,
                        password="wrong", include_pass=True)
    try:
        wrong.stacks.list().__next__()
    except heat_exc.HTTPUnauthorized:
        pass
    else:
        raise AssertionError("a wrong password was accepted")
    reply = httpx.get(endpoint + "/stacks", headers={"X-Auth-User": account.username,
                                                     "X-Auth-Key": "wrong"}, timeout=HTTP_TIMEOUT)
    assert reply.status_code == 401
    assert reply.headers["WWW-Authenticate"] == f"Keystone uri='{keystone.url}'"
    # a project the user has no role on: Keystone refuses the scope, Kiln answers 401
    stranger = keystone.account(("member",))
    reply = httpx.get(kiln.endpoint(stranger.project_id) + "/stacks",
                      headers={"X-Auth-User": account.username,
                               "X-Auth-Key": account.password}, timeout=HTTP_TIMEOUT)
    assert reply.status_code == 401


def test_a_custom_backend_plugin_decides_and_the_policy_still_applies(
        start_kiln_factory: Any, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.yaml"
    tokens.write_text(yaml.safe_dump([
        {"token": "ci-secret", "user_id": "ci", "project_id": "ci-project",
         "roles": ["member", "reader"]},
        {"token_sha256": hashlib.sha256(b"viewer-secret").hexdigest(), "user_id": "viewer",
         "project_id": "ci-project", "roles": ["reader"]},
    ]))
    kiln = start_kiln_factory(options={
        "paste_deploy": {"flavor": "custombackend"},
        "kiln_auth": {"backend": "tokens_file", "tokens_file": tokens}})
    url = kiln.endpoint("ci-project") + "/stacks"
    created = httpx.post(url, headers={"X-Auth-Token": "ci-secret"},
                         json={"stack_name": "ci", "template": SMALL}, timeout=HTTP_TIMEOUT)
    assert created.status_code == 201, created.text
    listed = httpx.get(url, headers={"X-Auth-Token": "viewer-secret"}, timeout=HTTP_TIMEOUT)
    assert [s["stack_name"] for s in listed.json()["stacks"]] == ["ci"]
    refused = httpx.post(url, headers={"X-Auth-Token": "viewer-secret"},
                         json={"stack_name": "no", "template": SMALL}, timeout=HTTP_TIMEOUT)
    assert refused.status_code == 403
    assert refused.json()["error"]["message"] == "You are not authorized to use stacks:create."
    assert httpx.get(url, headers={"X-Auth-Token": "guess"},
                     timeout=HTTP_TIMEOUT).status_code == 401
    assert httpx.get(url, timeout=HTTP_TIMEOUT).status_code == 401
    other = httpx.get(kiln.endpoint("other") + "/stacks",
                      headers={"X-Auth-Token": "ci-secret"}, timeout=HTTP_TIMEOUT)
    assert other.status_code == 403


def test_an_unknown_backend_stops_startup_naming_it(tmp_path: Path) -> None:
    kiln = start_kiln(tmp_path / "kiln", wait=False, options={
        "paste_deploy": {"flavor": "custombackend"}, "kiln_auth": {"backend": "nosuch"}})
    try:
        status = kiln.proc.wait(60)
    except subprocess.TimeoutExpired:
        raise AssertionError("kiln started with an unknown auth backend") from None
    finally:
        kiln.stop()
    assert status == 2
    assert ("kiln: error: [kiln_auth] backend: no kiln.auth entry point named 'nosuch' "
            "(installed: tokens_file)") in kiln.logs()
