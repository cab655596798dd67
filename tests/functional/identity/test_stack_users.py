"""Stack domain users with a real Keystone: ``kiln keystone-setup``, the per-stack project,
a user per resource for servers' credentials, and all of it gone with the stack.

``kiln keystone-setup`` makes the stack user domain and its admin; Kiln, configured with
Heat's ``stack_user_domain_name`` / ``stack_domain_admin(_password)``, makes the stack's
project in that domain and a ``heat_stack_user`` user for each resource that hands
credentials to servers: a HEAT_SIGNAL wait-condition handle (user + password), a CFN
wait-condition handle (a Keystone EC2 credential behind its pre-signed URL) and an
AWS::IAM::User with an AccessKey. Each credential works as its server would use it, and
only for what Heat's policy lets a stack user do.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx
import pytest
from botocore.exceptions import ClientError

from tests.functional.agents.deploying import deleted, wait_for
from tests.functional.identity.test_ec2_keystone import Ec2, boto
from tests.support.keystone import (
    ADMIN_PASSWORD,
    ADMIN_PROJECT,
    ADMIN_USER,
    Account,
    KeystoneProcess,
)
from tests.support.server import KilnProcess, clean_env, kiln_command, start_kiln

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "handle": {"type": "OS::Heat::WaitConditionHandle",
                   "properties": {"signal_transport": "HEAT_SIGNAL"}},
        "wait": {"type": "OS::Heat::WaitCondition",
                 "properties": {"handle": {"get_resource": "handle"}, "timeout": 600}},
        "cfn_handle": {"type": "AWS::CloudFormation::WaitConditionHandle"},
        "cfn_wait": {"type": "AWS::CloudFormation::WaitCondition",
                     "properties": {"Handle": {"get_resource": "cfn_handle"},
                                    "Timeout": 600}},
        "policy": {"type": "OS::Heat::AccessPolicy",
                   "properties": {"AllowedResources": ["handle"]}},
        "user": {"type": "AWS::IAM::User",
                 "properties": {"Policies": [{"get_resource": "policy"}]}},
        "key": {"type": "AWS::IAM::AccessKey",
                "properties": {"UserName": {"get_resource": "user"}}},
    },
    "outputs": {"cfn_url": {"value": {"get_resource": "cfn_handle"}}},
}


@dataclass(frozen=True)
class Domain:
    name: str
    id: str
    admin: str
    password: str


def keystone_setup(keystone: KeystoneProcess, name: str, admin: str,
                   password: str) -> subprocess.CompletedProcess[str]:
    """``kiln keystone-setup`` as an administrator runs it, from the ``OS_*`` variables."""
    env = {**clean_env(), "OS_AUTH_URL": keystone.url, "OS_USERNAME": ADMIN_USER,
           "OS_PASSWORD": ADMIN_PASSWORD, "OS_PROJECT_NAME": ADMIN_PROJECT,
           "OS_USER_DOMAIN_NAME": "Default", "OS_PROJECT_DOMAIN_NAME": "Default",
           "HEAT_DOMAIN_PASSWORD": password}
    return subprocess.run(
        [*kiln_command(), "keystone-setup", "--stack-user-domain-name", name,
         "--stack-domain-admin", admin], env=env, capture_output=True, text=True,
        timeout=120, check=False)


@pytest.fixture(scope="module")
def domain(keystone: KeystoneProcess) -> Domain:
    name, admin = f"heat-{uuid.uuid4().hex[:8]}", f"heat-admin-{uuid.uuid4().hex[:6]}"
    password = f"pw-{uuid.uuid4().hex}"
    first = keystone_setup(keystone, name, admin, password)
    assert first.returncode == 0, first.stderr
    domain_id = first.stdout.split("stack_user_domain_id = ")[1].split()[0]
    return Domain(name, domain_id, admin, password)


@pytest.fixture(scope="module")
def kiln(keystone: KeystoneProcess, domain: Domain,
         tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    options = keystone.kiln_options()
    options["DEFAULT"] = {"stack_user_domain_name": domain.name,
                          "stack_domain_admin": domain.admin,
                          "stack_domain_admin_password": domain.password,
                          "graceful_shutdown_timeout": 2}
    proc = start_kiln(tmp_path_factory.mktemp("kiln-stack-users"), options=options)
    yield proc
    proc.stop()


def heat_as(keystone: KeystoneProcess, account: Account, kiln: KilnProcess) -> Any:
    from heatclient import client as heat
    from keystoneauth1 import session
    from keystoneauth1.identity import v3

    auth = v3.Password(auth_url=keystone.url, username=account.username,
                       password=account.password, project_name=account.project,
                       user_domain_name="Default", project_domain_name="Default")
    return heat.Client("1", session=session.Session(auth=auth),
                       endpoint_override=kiln.endpoint(account.project_id))


def user_token(auth_url: str, user_id: str, password: str, project_id: str) -> str:
    """What heat-config-notify and os-collect-config do with a stack user's password."""
    body = {"auth": {"identity": {"methods": ["password"], "password": {
        "user": {"id": user_id, "password": password}}},
        "scope": {"project": {"id": project_id}}}}
    reply = httpx.post(auth_url.rstrip("/") + "/auth/tokens", json=body, timeout=30.0)
    assert reply.status_code == 201, reply.text
    return str(reply.headers["X-Subject-Token"])


def ks(keystone: KeystoneProcess, path: str, **params: Any) -> httpx.Response:
    return keystone.admin().get(path, params=params)


def test_keystone_setup_is_idempotent(keystone: KeystoneProcess, domain: Domain) -> None:
    again = keystone_setup(keystone, domain.name, domain.admin, domain.password)
    assert again.returncode == 0, again.stderr
    assert f"stack_user_domain_id = {domain.id}" in again.stdout
    assert domain.password not in again.stdout + again.stderr
    found = ks(keystone, "/domains", name=domain.name).json()["domains"]
    assert [d["id"] for d in found] == [domain.id]
    admins = ks(keystone, "/users", name=domain.admin, domain_id=domain.id).json()["users"]
    assert len(admins) == 1
    grants = ks(keystone, "/role_assignments", **{"user.id": admins[0]["id"],
                                                  "scope.domain.id": domain.id,
                                                  "include_names": 1}).json()
    assert [g["role"]["name"] for g in grants["role_assignments"]] == ["admin"]
    assert ks(keystone, "/roles", name="heat_stack_user").json()["roles"]


def test_stack_users_work_for_their_stack_and_go_with_it(
        keystone: KeystoneProcess, domain: Domain, kiln: KilnProcess,
        member: Account) -> None:
    hc = heat_as(keystone, member, kiln)
    stack_id = hc.stacks.create(stack_name="users", template=TEMPLATE)["stack"]["id"]
    for name in ("handle", "cfn_handle", "key"):
        made = wait_for(lambda n=name: hc.resources.get(stack_id, n),
                        lambda r: not r.resource_status.endswith("IN_PROGRESS"), name)
        assert made.resource_status == "CREATE_COMPLETE", made.resource_status_reason

    # the per-stack project, in the stack user domain, named as Heat names it
    project_id = hc.stacks.get(stack_id).stack_user_project_id
    project = ks(keystone, f"/projects/{project_id}").json()["project"]
    assert project["domain_id"] == domain.id
    assert project["name"] == f"{member.project_id}-{stack_id}"[:64]
    # one heat_stack_user per resource handing out credentials, in that project
    grants = ks(keystone, "/role_assignments", **{"scope.project.id": project_id,
                                                  "include_names": 1}).json()
    users = {g["user"]["name"]: g["role"]["name"] for g in grants["role_assignments"]}
    assert sorted(users.values()) == ["heat_stack_user"] * 3
    assert sorted(n.split("-")[1] for n in users) == ["cfn_handle", "handle", "user"]
    user_ids = [g["user"]["id"] for g in grants["role_assignments"]]

    # HEAT_SIGNAL: the handle's user logs in and signals; it may do nothing else
    signal = json.loads(hc.resources.get(stack_id, "handle").attributes["signal"])
    assert signal["project_id"] == project_id and signal["auth_url"] == keystone.url
    assert signal["alarm_url"].startswith("http"), signal["alarm_url"]
    token = user_token(signal["auth_url"], signal["user_id"], signal["password"],
                       signal["project_id"])
    sent = httpx.post(signal["alarm_url"], headers={"X-Auth-Token": token},
                      json={"status": "SUCCESS", "data": "from the server"}, timeout=30.0)
    assert sent.status_code == 200, sent.text
    listing = httpx.get(f"{kiln.url}/v1/{project_id}/stacks",
                        headers={"X-Auth-Token": token}, timeout=30.0)
    assert listing.status_code == 403

    # CFN_SIGNAL: the pre-signed URL, checked through Keystone's ec2tokens
    url = hc.stacks.output_show(stack_id, "cfn_url")["output"]["output_value"]
    assert "Timestamp" not in dict(parse_qsl(urlsplit(url).query))
    body = {"Status": "SUCCESS", "Reason": "done", "UniqueId": "1", "Data": "d"}
    query = dict(parse_qsl(urlsplit(url).query))
    forged = url.split("?")[0] + "?" + urlencode({**query, "Signature": "Zm9yZ2Vk"})
    refused = httpx.put(forged, json=body, timeout=30.0)
    assert refused.status_code == 403 and "<Code>AccessDenied</Code>" in refused.text
    assert httpx.put(url, json=body, timeout=30.0).status_code == 200

    stack = wait_for(lambda: hc.stacks.get(stack_id),
                     lambda s: not s.stack_status.endswith("IN_PROGRESS"), "the stack")
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason

    # AWS::IAM::AccessKey: a Keystone EC2 credential of the IAM user, limited by its policy
    key = hc.resources.get(stack_id, "key")
    iam_user = ks(keystone, "/users", domain_id=domain.id).json()["users"]
    iam_id = next(u["id"] for u in iam_user if u["name"].split("-")[1] == "user")
    held = ks(keystone, "/credentials", user_id=iam_id).json()["credentials"]
    assert [json.loads(c["blob"])["access"] for c in held] == [key.physical_resource_id]
    cfn = boto(kiln, "cloudformation",
               Ec2(key.physical_resource_id, key.attributes["SecretAccessKey"]))
    detail = cfn.describe_stack_resource(StackName="users", LogicalResourceId="handle")
    assert detail["StackResourceDetail"]["LogicalResourceId"] == "handle"
    with pytest.raises(ClientError) as caught:
        cfn.describe_stack_resource(StackName="users", LogicalResourceId="cfn_handle")
    assert caught.value.response["Error"]["Code"] == "AccessDenied"
    assert signal["password"] not in kiln.logs()

    # deleted with the stack: the users (their credentials with them) and the project
    hc.stacks.delete(stack_id)
    assert deleted(hc, stack_id) == "DELETE_COMPLETE"
    for user_id in user_ids:
        assert ks(keystone, f"/users/{user_id}").status_code == 404
    assert ks(keystone, f"/projects/{project_id}").status_code == 404
    assert ks(keystone, "/credentials", user_id=iam_id).json()["credentials"] == []


def test_without_a_domain_stack_users_live_in_the_owners_project(
        keystone: KeystoneProcess, ks_kiln: KilnProcess, member: Account) -> None:
    """Heat's fallback: no stack_user_domain_*, a warning at startup, and the users made
    in the stack owner's project (by Kiln's service user, an admin here)."""
    # the role a deployment has (keystone-setup makes it; this test may run on an xdist
    # worker whose Keystone never saw the domain fixture)
    keystone.role_id("heat_stack_user")
    assert ("stack_user_domain_id or stack_user_domain_name not set in heat.conf falling "
            "back to using default") in ks_kiln.logs()
    hc = heat_as(keystone, member, ks_kiln)
    template = {"heat_template_version": "2018-08-31", "resources": {
        "handle": TEMPLATE["resources"]["handle"]}}
    stack_id = hc.stacks.create(stack_name="fallback", template=template)["stack"]["id"]
    made = wait_for(lambda: hc.stacks.get(stack_id),
                    lambda s: not s.stack_status.endswith("IN_PROGRESS"), "the create")
    assert made.stack_status == "CREATE_COMPLETE", made.stack_status_reason
    assert made.stack_user_project_id == member.project_id
    signal = json.loads(hc.resources.get(stack_id, "handle").attributes["signal"])
    user = ks(keystone, f"/users/{signal['user_id']}").json()["user"]
    assert (user["domain_id"], user["default_project_id"]) == ("default", member.project_id)
    grants = ks(keystone, "/role_assignments", **{"user.id": signal["user_id"],
                                                  "include_names": 1}).json()
    assert [(g["role"]["name"], g["scope"]["project"]["id"])
            for g in grants["role_assignments"]] == [("heat_stack_user", member.project_id)]
    token = user_token(signal["auth_url"], signal["user_id"], signal["password"],
                       member.project_id)
    sent = httpx.post(signal["alarm_url"], headers={"X-Auth-Token": token},
                      json={"status": "SUCCESS"}, timeout=30.0)
    assert sent.status_code == 200, sent.text

    hc.stacks.delete(stack_id)
    assert deleted(hc, stack_id) == "DELETE_COMPLETE"
    assert ks(keystone, f"/users/{signal['user_id']}").status_code == 404
    assert ks(keystone, f"/projects/{member.project_id}").status_code == 200


def test_a_domain_without_its_admin_stops_startup(
        keystone: KeystoneProcess, tmp_path: Path) -> None:
    options = keystone.kiln_options()
    options["DEFAULT"] = {"stack_user_domain_name": "heat"}
    proc = start_kiln(tmp_path / "kiln", options=options, wait=False)
    try:
        status = proc.proc.wait(120)
    finally:
        proc.stop()
    assert status == 2, proc.logs()
    assert ('heat.conf misconfigured, cannot specify "stack_user_domain_id" or '
            '"stack_user_domain_name" without "stack_domain_admin" and '
            '"stack_domain_admin_password"') in proc.logs()


def test_nested_stacks_share_the_stack_user_project(
        keystone: KeystoneProcess, domain: Domain, kiln: KilnProcess,
        member: Account) -> None:
    handle = {"type": "OS::Heat::WaitConditionHandle",
              "properties": {"signal_transport": "HEAT_SIGNAL"}}
    template = {"heat_template_version": "2018-08-31", "resources": {
        "outer": handle,
        "group": {"type": "OS::Heat::ResourceGroup",
                  "properties": {"count": 1, "resource_def": handle}}}}
    hc = heat_as(keystone, member, kiln)
    stack_id = hc.stacks.create(stack_name="nested-users", template=template)["stack"]["id"]
    made = wait_for(lambda: hc.stacks.get(stack_id),
                    lambda s: not s.stack_status.endswith("IN_PROGRESS"), "the create")
    assert made.stack_status == "CREATE_COMPLETE", made.stack_status_reason
    child_id = hc.resources.get(stack_id, "group").physical_resource_id
    project_id = made.stack_user_project_id
    assert project_id != member.project_id
    assert hc.stacks.get(child_id).stack_user_project_id == project_id
    grants = ks(keystone, "/role_assignments", **{"scope.project.id": project_id,
                                                  "include_names": 1}).json()
    names = sorted(g["user"]["name"].split("-")[-2] for g in grants["role_assignments"])
    assert names == ["0", "outer"]
    user_ids = [g["user"]["id"] for g in grants["role_assignments"]]

    hc.stacks.delete(stack_id)
    assert deleted(hc, stack_id) == "DELETE_COMPLETE"
    assert ks(keystone, f"/projects/{project_id}").status_code == 404
    for user_id in user_ids:
        assert ks(keystone, f"/users/{user_id}").status_code == 404
