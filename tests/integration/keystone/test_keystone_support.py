"""The test suite's own Keystone (tests/support/keystone.py) is a working identity service:
its tokens say who holds them, it validates them, its catalog points at itself, and
instances are independent (their own keys and token lifetimes)."""

from __future__ import annotations

from datetime import datetime

import httpx
from keystoneauth1 import session
from keystoneauth1.identity import v3

from tests.support.fixtures import StartKeystone
from tests.support.keystone import KeystoneProcess


def _validate(keystone: KeystoneProcess, token: str) -> httpx.Response:
    return keystone.admin().get("/auth/tokens", headers={"X-Subject-Token": token})


def test_an_account_token_is_scoped_to_its_project_and_validates(
        keystone: KeystoneProcess) -> None:
    account = keystone.account(roles=("member",))
    token = account.token()
    assert token.project_id == account.project_id
    assert token.user_id == account.user_id
    assert "member" in token.roles and "admin" not in token.roles

    before = keystone.validations()
    reply = _validate(keystone, token.id)
    assert reply.status_code == 200, reply.text
    assert reply.json()["token"]["project"]["id"] == account.project_id
    assert keystone.validations() == before + 1
    assert _validate(keystone, "not-a-token").status_code == 404


def test_the_catalog_names_this_instance_and_a_login_finds_it(
        keystone: KeystoneProcess) -> None:
    account = keystone.account()
    auth = v3.Password(auth_url=keystone.url, username=account.username,
                       password=account.password, project_name=account.project,
                       user_domain_name="Default", project_domain_name="Default")
    sess = session.Session(auth=auth)
    url = sess.get_endpoint(service_type="identity", interface="public")
    assert url is not None and url.rstrip("/") == keystone.url


def test_a_private_keystone_has_its_own_token_lifetime_and_keys(
        keystone: KeystoneProcess, start_keystone_factory: StartKeystone) -> None:
    short = start_keystone_factory(token_expiration=60)
    account = short.account()
    token = account.token()
    issued = datetime.fromisoformat(token.body["token"]["issued_at"].replace("Z", "+00:00"))
    expires = datetime.fromisoformat(token.expires_at.replace("Z", "+00:00"))
    assert round((expires - issued).total_seconds()) == 60
    assert _validate(short, token.id).status_code == 200
    # the shared instance has other fernet keys: it cannot read this one's tokens
    assert _validate(keystone, token.id).status_code in (401, 404)
