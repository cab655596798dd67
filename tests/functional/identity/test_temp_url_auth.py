"""Keystone mode: a temp URL's signature opens that temp URL and nothing else.

Issue 22, finding 1: any ``/v1/AUTH_*`` path with a ``temp_url_sig`` parameter used to
skip token authentication and reach every route as a no-auth caller (every project's
stacks listed, stacks created, services answered). Now only a request of the temp-URL
shape goes past token authentication, to the temp-URL route alone, which checks its
signature; the real agents still poll and signal through their temp URLs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from tests.functional.agents.deploying import (
    create,
    deployment_template,
    metadata_url,
    outputs,
    server_collector,
    settled,
    wait_deployment,
)
from tests.functional.identity.test_keystone_auth import SMALL, assert_401
from tests.support.agents import agents_or_skip, make_sandbox
from tests.support.keystone import Account, KeystoneProcess
from tests.support.server import HTTP_TIMEOUT, KilnProcess


def heat_as(keystone: KeystoneProcess, account: Account, kiln: KilnProcess) -> Any:
    from heatclient import client as heat
    from keystoneauth1 import session
    from keystoneauth1.identity import v3

    auth = v3.Password(auth_url=keystone.url, username=account.username,
                       password=account.password, project_name=account.project,
                       user_domain_name="Default", project_domain_name="Default")
    return heat.Client("1", session=session.Session(auth=auth),
                       endpoint_override=kiln.endpoint(account.project_id))


def test_a_signature_parameter_is_no_token(ks_kiln: KilnProcess, keystone: KeystoneProcess,
                                           member_http: httpx.Client,
                                           member: Account) -> None:
    created = member_http.post(f"/v1/{member.project_id}/stacks",
                               json={"stack_name": "someones", "template": SMALL})
    assert created.status_code == 201, created.text
    stack_id = created.json()["stack"]["id"]
    base = ks_kiln.url
    # the three requests
    assert_401(httpx.get(f"{base}/v1/AUTH_x/stacks?global_tenant=True&temp_url_sig=1",
                         timeout=HTTP_TIMEOUT), keystone)
    assert_401(httpx.post(f"{base}/v1/AUTH_x/stacks?temp_url_sig=1",
                          json={"stack_name": "intruder", "template": SMALL},
                          timeout=HTTP_TIMEOUT), keystone)
    assert_401(httpx.get(f"{base}/v1/AUTH_x/services?temp_url_sig=1",
                         timeout=HTTP_TIMEOUT), keystone)
    # the project's own id behind AUTH_, and a forged expiry too
    assert_401(httpx.get(f"{base}/v1/AUTH_{member.project_id}/stacks?temp_url_sig=1"
                         "&temp_url_expires=99999999999", timeout=HTTP_TIMEOUT), keystone)
    # an encoded slash makes the raw path look like a temp URL while its decoded form
    # is a stack's show: it reaches the temp-URL route only, which finds no such object
    sneaky = httpx.get(f"{base}/v1/AUTH_x%2Fstacks/{stack_id}/someones?temp_url_sig=1"
                       "&temp_url_expires=99999999999", timeout=HTTP_TIMEOUT)
    assert sneaky.status_code == 404, sneaky.text
    assert "someones" not in sneaky.text
    # nothing was created
    listed = member_http.get(f"/v1/{member.project_id}/stacks").json()["stacks"]
    assert [s["stack_name"] for s in listed if s["stack_name"] == "intruder"] == []


def test_the_agents_poll_and_signal_through_their_temp_urls(
        ks_kiln: KilnProcess, keystone: KeystoneProcess, member: Account,
        tmp_path: Path) -> None:
    box = make_sandbox(tmp_path / "instance", agents_or_skip())
    hc = heat_as(keystone, member, ks_kiln)
    sid = create(hc, "polled", deployment_template(), greeting="hi")
    wait_deployment(hc, sid, "CREATE")
    args = server_collector(hc, sid)
    url = metadata_url(args)
    # no token: the signature alone reads the server's metadata
    polled = httpx.get(url, timeout=HTTP_TIMEOUT)
    assert polled.status_code == 200, polled.text
    assert polled.json()["deployments"]
    # a changed signature is refused by the temp-URL route (Swift's 401)
    forged = httpx.get(url.replace("temp_url_sig=", "temp_url_sig=0"), timeout=HTTP_TIMEOUT)
    assert forged.status_code == 401
    assert forged.json()["error"]["type"] == "HTTPUnauthorized"
    # and a method the route does not serve is refused before anything else
    assert httpx.post(url, timeout=HTTP_TIMEOUT).status_code == 405

    run = box.run_chain(args)
    assert run.returncode == 0, box.log()
    stack = settled(hc, sid)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    assert outputs(hc, sid)["result"] == "hi-done"
