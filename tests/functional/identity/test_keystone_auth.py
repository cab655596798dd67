"""Keystone mode against the real Keystone: who gets in, who gets 401, 403 or 503."""

from __future__ import annotations

import time
from typing import Any

import httpx

from tests.functional.identity.conftest import token_client
from tests.support.fixtures import StartKeystone
from tests.support.keystone import Account, KeystoneProcess
from tests.support.server import HTTP_TIMEOUT, KilnProcess

SMALL = {"heat_template_version": "2018-08-31",
         "resources": {"r": {"type": "OS::Heat::None"}}}
KSM_401 = {"error": {"code": 401, "title": "Unauthorized",
                     "message": "The request you have made requires authentication."}}


def assert_401(reply: httpx.Response, keystone: KeystoneProcess) -> None:
    assert reply.status_code == 401, reply.text
    assert reply.json() == KSM_401
    assert reply.headers["WWW-Authenticate"] == f'Keystone uri="{keystone.url}"'


def test_a_request_without_a_valid_token_is_401_naming_keystone(
        ks_kiln: KilnProcess, keystone: KeystoneProcess, member: Account) -> None:
    url = f"{ks_kiln.url}/v1/{member.project_id}/stacks"
    assert_401(httpx.get(url, timeout=HTTP_TIMEOUT), keystone)
    assert_401(httpx.get(url, headers={"X-Auth-Token": "garbage"}, timeout=HTTP_TIMEOUT), keystone)
    assert_401(httpx.post(url, headers={"X-Auth-Token": ""}, json={},
                          timeout=HTTP_TIMEOUT), keystone)
    # the version document stays open, as Heat's version negotiation
    assert httpx.get(ks_kiln.url + "/", timeout=HTTP_TIMEOUT).status_code == 300


def test_a_revoked_token_is_401(ks_kiln: KilnProcess, keystone: KeystoneProcess,
                                member: Account) -> None:
    token = member.token()
    keystone.revoke(token.id)
    reply = httpx.get(f"{ks_kiln.url}/v1/{member.project_id}/stacks",
                      headers={"X-Auth-Token": token.id}, timeout=HTTP_TIMEOUT)
    assert_401(reply, keystone)


def test_the_project_comes_from_the_token(member_http: httpx.Client, member: Account,
                                          other: Account) -> None:
    created = member_http.post(f"/v1/{member.project_id}/stacks",
                               json={"stack_name": "mine", "template": SMALL})
    assert created.status_code == 201, created.text
    assert f"/v1/{member.project_id}/stacks/mine/" in created.json()["stack"]["links"][0][
        "href"]
    # a URL naming another project is refused as Heat refuses it (webob's 403)
    refused = member_http.get(f"/v1/{other.project_id}/stacks")
    assert refused.status_code == 403
    assert refused.json() == {
        "code": 403, "title": "Forbidden", "explanation": "Access was denied to this resource.",
        "error": {"type": "HTTPForbidden", "traceback": None,
                  "message": "Access was denied to this resource."}}


def test_an_unscoped_token_reaches_no_project(ks_kiln: KilnProcess,
                                              keystone: KeystoneProcess,
                                              member: Account) -> None:
    unscoped = keystone.token(member.username, member.password)
    assert unscoped.project_id is None
    reply = httpx.get(f"{ks_kiln.url}/v1/{member.project_id}/stacks",
                      headers={"X-Auth-Token": unscoped.id}, timeout=HTTP_TIMEOUT)
    assert reply.status_code == 403, reply.text
    assert reply.json()["error"]["type"] == "HTTPForbidden"


def test_one_validation_per_token_however_many_requests(
        ks_kiln: KilnProcess, keystone: KeystoneProcess, member: Account) -> None:
    import concurrent.futures

    token = member.token().id
    before = keystone.validations()
    url = f"{ks_kiln.url}/v1/{member.project_id}/stacks"

    def get(_: Any) -> int:
        return httpx.get(url, headers={"X-Auth-Token": token}, timeout=60).status_code

    # twenty at once, before any of them is cached, then twenty more
    with concurrent.futures.ThreadPoolExecutor(20) as pool:
        assert set(pool.map(get, range(20))) == {200}
        assert set(pool.map(get, range(20))) == {200}
    assert keystone.validations() == before + 1


def test_expiry_service_tokens_and_keystone_going_away(
        start_keystone_factory: StartKeystone, start_kiln_factory: Any) -> None:
    """One private Keystone whose tokens live 15 s, and a Kiln caching for 300 s."""
    private = start_keystone_factory(token_expiration=15)
    kiln = start_kiln_factory(options=private.kiln_options(http_connect_timeout=3))
    account = private.account()
    user = account.token().id
    url = f"{kiln.url}/v1/{account.project_id}/stacks"
    assert httpx.get(url, headers={"X-Auth-Token": user}, timeout=HTTP_TIMEOUT).status_code == 200

    # the cached validation ends with the token: 401 once it has expired
    deadline = time.monotonic() + 60
    while (reply := httpx.get(url, headers={"X-Auth-Token": user},
                              timeout=HTTP_TIMEOUT)).status_code == 200:
        assert time.monotonic() < deadline, "an expired token was still accepted"
        time.sleep(0.5)  # waiting for the token's expiry time to pass; bounded
    assert_401(reply, private)

    # a service token with the service role lets the expired user token through, as
    # keystonemiddleware allows; a service token without that role does not
    service = private.service_account().token().id
    with_service = httpx.get(url, headers={"X-Auth-Token": user, "X-Service-Token": service},
                             timeout=HTTP_TIMEOUT)
    assert with_service.status_code == 200, with_service.text
    plain = account.token().id
    assert_401(httpx.get(url, headers={"X-Auth-Token": user, "X-Service-Token": plain},
                         timeout=HTTP_TIMEOUT),
               private)

    # Keystone gone: a token never seen is 503 within the timeout; a cached one still works
    known, fresh = account.token().id, account.token().id
    assert httpx.get(url, headers={"X-Auth-Token": known}, timeout=HTTP_TIMEOUT).status_code == 200
    private.stop()
    started = time.monotonic()
    reply = httpx.get(url, headers={"X-Auth-Token": fresh}, timeout=30)
    took = time.monotonic() - started
    assert reply.status_code == 503, reply.text
    assert reply.headers["Retry-After"].isdigit()
    assert reply.json()["error"] == {
        "type": "HTTPServiceUnavailable", "traceback": None,
        "message": "The Keystone service is temporarily unavailable."}
    assert took < 3 + 2, f"answered after {took:.1f}s (timeout 3 s)"
    assert httpx.get(url, headers={"X-Auth-Token": known}, timeout=HTTP_TIMEOUT).status_code == 200


def test_kiln_serve_alone_still_needs_no_token(kiln_server: KilnProcess) -> None:
    assert httpx.get(kiln_server.endpoint("anyone") + "/stacks",
                     timeout=HTTP_TIMEOUT).status_code == 200


def test_token_client_helper_sends_the_token(ks_kiln: KilnProcess, member: Account) -> None:
    with token_client(ks_kiln, member) as client:
        assert client.get(f"/v1/{member.project_id}/stacks").status_code == 200
