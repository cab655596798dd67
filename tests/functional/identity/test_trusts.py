"""Deferred authentication with Keystone trusts, against a real Keystone whose tokens
live 30 seconds, with the real ``openstack`` CLI logging in through the catalog.

- A create that outlives the user's token completes with
  ``reauthentication_auth_method = trusts``: its nested stack, started after the token
  expired, creates a Keystone role through the trust; the same create on a Kiln acting
  with the user's token (Heat's default) fails once the token has expired.
- The trust exists (trustor the user, trustee Kiln's service user, impersonating, on the
  stack's project) while the stack lives, and is gone once the stack is deleted.
- A trust deleted behind Kiln's back fails the next signal (scaling) and suspend with a
  reason naming the trust; the stack can still be deleted.
- The trust's id is never in Kiln's responses, events, logs (at DEBUG) or database file.
- Keystone down at create: a 503 with Retry-After saying so, and no stack.
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.support.clients import openstack_command
from tests.support.fixtures import StartKeystone
from tests.support.keystone import Account, KeystoneProcess
from tests.support.server import HTTP_TIMEOUT, KilnProcess, clean_env

# setup (Keystone and two Kilns) and call together took up to 173 s at load 27, with
# waits on tokens expiring: too close to the suite's 300 s per test
pytestmark = pytest.mark.timeout(900)

TOKEN_LIFETIME = 30
#: the waiting resource outlives every token issued before the create started
WAIT_SECONDS = TOKEN_LIFETIME + 15


def cli(kiln_keystone: KeystoneProcess, account: Account, *args: str, cwd: Path,
        check: bool = True, region: str = "RegionOne") -> subprocess.CompletedProcess[str]:
    """``openstack`` with an openrc's login (the region's Kiln found in the catalog)."""
    env = clean_env()
    env.update(account.openrc())
    env["OS_REGION_NAME"] = region
    result = subprocess.run([*openstack_command(), *args], capture_output=True, text=True,
                            env=env, cwd=cwd, timeout=180, check=False)
    if check:
        assert result.returncode == 0, f"openstack {' '.join(args)}:\n{result.stderr}"
    return result


def trusts_of(keystone: KeystoneProcess, user_id: str) -> list[dict[str, Any]]:
    listed = keystone.admin().get("/OS-TRUST/trusts", params={"trustor_user_id": user_id})
    assert listed.status_code == 200, listed.text
    return list(listed.json()["trusts"])


def wait_status(keystone: KeystoneProcess, account: Account, stack: str, cwd: Path,
                timeout: float = 240, region: str = "RegionOne") -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        shown = json.loads(cli(keystone, account, "stack", "show", stack, "-f", "json",
                               cwd=cwd, region=region).stdout)
        if not shown["stack_status"].endswith("IN_PROGRESS"):
            return dict(shown)
        assert time.monotonic() < deadline, f"{stack} still {shown['stack_status']}"
        time.sleep(2)  # polling the stack's status, as `--wait` does; bounded


def long_template(role: str, wait: int = WAIT_SECONDS) -> dict[str, Any]:
    """A resource that waits past the token's expiry, then a nested stack (a group of
    one) whose member is a Keystone role: created by the engine through the clients of
    whatever identity the create acts with."""
    return {"heat_template_version": "2018-08-31",
            "resources": {
                "wait": {"type": "OS::Heat::TestResource",
                         "properties": {"value": "waited",
                                        "action_wait_secs": {"create": wait}}},
                "later": {"type": "OS::Heat::ResourceGroup", "depends_on": "wait",
                          "properties": {"count": 1, "resource_def": {
                              "type": "OS::Keystone::Role",
                              "properties": {"name": role}}}}}}


SCALING = {"heat_template_version": "2018-08-31",
           "resources": {
               "group": {"type": "OS::Heat::AutoScalingGroup",
                         "properties": {"min_size": 1, "max_size": 3,
                                        "resource": {"type": "OS::Heat::None"}}},
               "up": {"type": "OS::Heat::ScalingPolicy",
                      "properties": {"adjustment_type": "change_in_capacity",
                                     "auto_scaling_group_id": {"get_resource": "group"},
                                     "scaling_adjustment": 1, "cooldown": 0}}},
           "outputs": {"size": {"value": {"get_attr": ["group", "current_size"]}}}}


@pytest.fixture
def private(start_keystone_factory: StartKeystone, start_kiln_factory: Any,
            ) -> Iterator[tuple[KeystoneProcess, KilnProcess, KilnProcess]]:
    """A Keystone with 30-second tokens, a Kiln re-authenticating through trusts and one
    acting with users' tokens (Heat's default), both in its catalog (two regions)."""
    keystone = start_keystone_factory(token_expiration=TOKEN_LIFETIME)
    keystone.role_id("heat_stack_user")  # a scaling policy's stack user has it
    options = keystone.kiln_options()
    trusting = start_kiln_factory(options={
        **options, "DEFAULT": {"reauthentication_auth_method": "trusts", "debug": True}})
    tokens = start_kiln_factory(options=options)
    keystone.register_service("orchestration", "kiln", trusting.url + "/v1/%(tenant_id)s")
    keystone._call("POST", "/regions", json={"region": {"id": "RegionTwo"}})
    keystone.register_service("orchestration", "kiln-tokens",
                              tokens.url + "/v1/%(tenant_id)s", region="RegionTwo")
    yield keystone, trusting, tokens


@pytest.mark.slow
def test_a_create_outliving_the_token_completes_through_the_trust(
        private: tuple[KeystoneProcess, KilnProcess, KilnProcess], tmp_path: Path) -> None:
    keystone, trusting, _tokens = private
    user = keystone.account(("member", "admin"))
    role = f"made-through-trust-{uuid.uuid4().hex[:8]}"
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(long_template(role)))
    cli(keystone, user, "stack", "create", "-t", "t.yaml", "long", cwd=tmp_path)
    trust_id = assert_one_trust(keystone, user)
    started = time.monotonic()

    shown = wait_status(keystone, user, "long", tmp_path)
    assert time.monotonic() - started > TOKEN_LIFETIME - 5
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    roles = keystone.admin().get("/roles", params={"name": role}).json()["roles"]
    assert [r["name"] for r in roles] == [role]

    # nothing Kiln answers, logs or stores carries the trust's id
    for args in (("stack", "show", "long"), ("stack", "event", "list", "--nested-depth",
                                              "2", "long"),
                 ("stack", "resource", "list", "-n", "2", "long"),
                 ("stack", "environment", "show", "long"), ("stack", "template", "show",
                                                             "long")):
        out = cli(keystone, user, *args, "-f", "json", cwd=tmp_path).stdout
        assert trust_id not in out
    raw = httpx.get(f"{trusting.url}/v1/{user.project_id}/stacks/long",
                    headers={"X-Auth-Token": user.token().id}, follow_redirects=True,
                    timeout=HTTP_TIMEOUT)
    assert raw.status_code == 200 and trust_id not in raw.text

    cli(keystone, user, "stack", "delete", "-y", "--wait", "long", cwd=tmp_path)
    assert trusts_of(keystone, user.user_id) == []
    assert not keystone.admin().get("/roles", params={"name": role}).json()["roles"]
    assert "DEBUG" in trusting.stderr_path.read_text()
    for path in [trusting.stderr_path, *trusting.workdir.rglob("*.sqlite*")]:
        assert trust_id.encode() not in path.read_bytes(), path


@pytest.mark.slow
def test_acting_with_the_token_a_create_outliving_it_fails(
        private: tuple[KeystoneProcess, KilnProcess, KilnProcess], tmp_path: Path) -> None:
    """Heat's default (reauthentication_auth_method empty): the user's action acts with
    the user's token, so its nested stack's role fails once the token has expired."""
    keystone, _trusting, _tokens = private
    user = keystone.account(("member", "admin"))
    role = f"never-{uuid.uuid4().hex[:8]}"
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(long_template(role)))
    cli(keystone, user, "stack", "create", "-t", "t.yaml", "long", cwd=tmp_path,
        region="RegionTwo")
    assert_one_trust(keystone, user)  # made all the same, for deferred work
    shown = wait_status(keystone, user, "long", tmp_path, region="RegionTwo")
    assert shown["stack_status"] == "CREATE_FAILED"
    # Keystone no longer knows the token (its answer, relayed: "Failed to validate token")
    assert "token" in shown["stack_status_reason"], shown["stack_status_reason"]
    assert not keystone.admin().get("/roles", params={"name": role}).json()["roles"]


def assert_one_trust(keystone: KeystoneProcess, user: Account) -> str:
    service = keystone.service_account()
    [listed] = trusts_of(keystone, user.user_id)
    trust = keystone.admin().get(f"/OS-TRUST/trusts/{listed['id']}").json()["trust"]
    assert trust["trustee_user_id"] == service.user_id
    assert trust["project_id"] == user.project_id
    assert trust["impersonation"] is True
    # every role of the user's token (implied ones too: member implies reader), as
    # trusts_delegated_roles is unset
    assert sorted(r["name"] for r in trust["roles"]) == sorted(user.token().roles)
    return str(trust["id"])


def test_a_trust_deleted_behind_kilns_back_fails_the_next_action_naming_it(
        private: tuple[KeystoneProcess, KilnProcess, KilnProcess], tmp_path: Path) -> None:
    keystone, trusting, _tokens = private
    user = keystone.account(("member",))
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(SCALING))
    cli(keystone, user, "stack", "create", "-t", "s.yaml", "--wait", "scaled", cwd=tmp_path)

    # a signal (no request of the user's behind the scaling) acts through the trust
    cli(keystone, user, "stack", "resource", "signal", "scaled", "up", cwd=tmp_path)
    assert output_size(keystone, user, tmp_path) == 2

    trust_id = assert_one_trust(keystone, user)
    gone = httpx.delete(f"{keystone.url}/OS-TRUST/trusts/{trust_id}",
                        headers={"X-Auth-Token": user.token().id}, timeout=HTTP_TIMEOUT)
    assert gone.status_code == 204, gone.text

    named = f"the trust user {user.user_id} delegated to Kiln for stack scaled"
    refused = cli(keystone, user, "stack", "resource", "signal", "scaled", "up",
                  cwd=tmp_path, check=False)
    assert refused.returncode != 0
    assert named in refused.stderr and trust_id not in refused.stderr
    assert output_size(keystone, user, tmp_path) == 2
    # with reauthentication_auth_method = trusts the user's own actions need it too (an
    # update would make a new one: Heat's check_refresh_cred, test_trust_refresh.py)
    suspended = cli(keystone, user, "stack", "suspend", "scaled", cwd=tmp_path,
                    check=False)
    assert suspended.returncode != 0 and named in suspended.stderr, suspended.stderr
    assert trust_id not in trusting.stderr_path.read_text()

    # the stack can still be deleted
    cli(keystone, user, "stack", "delete", "-y", "--wait", "scaled", cwd=tmp_path)
    listed = json.loads(cli(keystone, user, "stack", "list", "-f", "json",
                            cwd=tmp_path).stdout)
    assert listed == []


def output_size(keystone: KeystoneProcess, user: Account, cwd: Path) -> int:
    shown = json.loads(cli(keystone, user, "stack", "output", "show", "scaled", "size",
                           "-f", "json", cwd=cwd).stdout)
    return int(shown["output_value"])


def test_keystone_down_at_create_is_a_clear_503_and_no_stack(
        private: tuple[KeystoneProcess, KilnProcess, KilnProcess]) -> None:
    keystone, trusting, _tokens = private
    user = keystone.account(("member",))
    token = user.token().id
    stacks = f"{trusting.url}/v1/{user.project_id}/stacks"
    headers = {"X-Auth-Token": token}
    assert httpx.get(stacks, headers=headers,
                     timeout=HTTP_TIMEOUT).status_code == 200  # the token is cached
    keystone.stop()
    body = {"stack_name": "offline", "template": {"heat_template_version": "2018-08-31",
                                                  "resources": {}}}
    started = time.monotonic()
    reply = httpx.post(stacks, headers=headers, json=body, timeout=60)
    took = time.monotonic() - started
    assert reply.status_code == 503, reply.text
    assert took < 5 + 3, f"answered after {took:.1f}s (http_connect_timeout 5 s)"
    assert reply.headers["Retry-After"].isdigit()
    assert "Keystone cannot be reached to give Kiln a trust" in \
        reply.json()["error"]["message"]
    assert httpx.get(stacks, headers=headers, timeout=HTTP_TIMEOUT).json()["stacks"] == []
