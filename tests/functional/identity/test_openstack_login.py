"""The real ``openstack`` CLI and heatclient logging in to Keystone, finding Kiln in the
catalog as the ``orchestration`` service (no endpoint given), as a cloud's users do."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.support.clients import openstack_command
from tests.support.keystone import Account, KeystoneProcess, KeystoneUnavailable, start_keystone
from tests.support.server import KilnProcess, clean_env, start_kiln
from tests.support.services import unavailable

TEMPLATE = {"heat_template_version": "2018-08-31",
            "resources": {"word": {"type": "OS::Heat::RandomString",
                                   "properties": {"length": 8}}},
            "outputs": {"word": {"value": {"get_attr": ["word", "value"]}}}}


@pytest.fixture(scope="module")
def cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KeystoneProcess,
                                                                       KilnProcess]]:
    """A Keystone of its own (its catalog has this one Kiln) and Kiln registered in it."""
    try:
        keystone = start_keystone(tmp_path_factory.mktemp("keystone-catalog"))
    except KeystoneUnavailable as exc:
        unavailable(f"Keystone is not available: {exc}")
    kiln = None
    try:
        kiln = start_kiln(tmp_path_factory.mktemp("kiln-catalog"),
                          options=keystone.kiln_options())
        keystone.register_service("orchestration", "kiln", kiln.url + "/v1/%(tenant_id)s")
        yield keystone, kiln
    finally:
        if kiln is not None:
            kiln.stop()
        keystone.stop()


#: an openrc's login: no endpoint, no auth type. Keystone v3 itself refuses a login by
#: user and project *names* without their domain ("Expecting to find domain in
#: project", 400), so the two domain variables every openrc carries are given too.
LOGIN = ("OS_AUTH_URL", "OS_USERNAME", "OS_PASSWORD", "OS_PROJECT_NAME",
         "OS_USER_DOMAIN_NAME", "OS_PROJECT_DOMAIN_NAME")


def openstack(account: Account, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``openstack`` logging in with an openrc's variables only (LOGIN)."""
    env = clean_env()
    rc = account.openrc()
    env.update({k: rc[k] for k in LOGIN})
    result = subprocess.run([*openstack_command(), *args], capture_output=True, text=True,
                            env=env, cwd=cwd, timeout=180, check=False)
    assert result.returncode == 0, f"openstack {' '.join(args)}:\n{result.stderr}"
    return result


def test_openstack_stack_commands_with_a_password_login(
        cloud: tuple[KeystoneProcess, KilnProcess], tmp_path: Path) -> None:
    keystone, _ = cloud
    account = keystone.account(("member",))
    template = tmp_path / "t.yaml"
    template.write_text(yaml.safe_dump(TEMPLATE))
    openstack(account, "stack", "create", "-t", str(template), "--wait", "login-stack",
              cwd=tmp_path)
    listed = json.loads(openstack(account, "stack", "list", "-f", "json", cwd=tmp_path).stdout)
    assert [(s["Stack Name"], s["Stack Status"]) for s in listed] == [
        ("login-stack", "CREATE_COMPLETE")]
    shown = json.loads(openstack(account, "stack", "show", "login-stack", "-f", "json",
                                 cwd=tmp_path).stdout)
    assert shown["parameters"]["OS::project_id"] == account.project_id

    # another project's user logs in the same way and sees none of it
    stranger = keystone.account(("member",))
    assert json.loads(openstack(stranger, "stack", "list", "-f", "json",
                                cwd=tmp_path).stdout) == []

    # heatclient on a keystoneauth session (one test: the cloud costs a Keystone each
    # time an xdist worker sets it up)
    heatclient_on_a_session(keystone)


def heatclient_on_a_session(keystone: KeystoneProcess) -> None:
    from heatclient import client as heat
    from keystoneauth1 import session
    from keystoneauth1.identity import v3

    account = keystone.account(("member",))
    auth = v3.Password(auth_url=keystone.url, username=account.username,
                       password=account.password, project_name=account.project,
                       user_domain_name="Default", project_domain_name="Default")
    client = heat.Client("1", session=session.Session(auth=auth))
    client.stacks.create(stack_name="hc-stack", template=TEMPLATE)
    assert [s.stack_name for s in client.stacks.list()] == ["hc-stack"]
    assert client.stacks.get("hc-stack").stack_owner == account.username
