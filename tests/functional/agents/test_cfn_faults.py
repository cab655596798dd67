"""What a server's keypair meets on the CFN API (POLL_SERVER_CFN and CFN_SIGNAL), when a
request is forged, stale, replayed, points elsewhere, or outlives its stack: AWS's error
shape, and nothing changed on the stack.

Requests are signed here exactly as os-collect-config's cfn collector signs them (SigV2
over the query, ``Timestamp``), with the keypair the DeployedServer was issued.
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx

from kiln import ec2sign
from tests.functional.agents.deploying import (
    create,
    deleted,
    deployment_template,
    settled,
    wait_deployment,
)
from tests.support.server import HTTP_TIMEOUT

WINDOW = dt.timedelta(minutes=15)


def _keys(hc: Any, sid: str) -> dict[str, str]:
    return dict(hc.resources.get(sid, "server").attributes["os_collect_config"]["cfn"])


def _poll(cfn: dict[str, str], *, resource: str = "server", stack: str | None = None,
          when: dt.datetime | None = None, secret: str | None = None) -> httpx.Response:
    """A DescribeStackResource as the cfn collector sends it."""
    url = cfn["metadata_url"]
    params = {"Action": "DescribeStackResource", "StackName": stack or cfn["stack_name"],
              "LogicalResourceId": resource, "AWSAccessKeyId": cfn["access_key_id"],
              "SignatureVersion": "2", "SignatureMethod": "HmacSHA256",
              "Timestamp": (when or dt.datetime.now(dt.UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")}
    parts = urlsplit(url)
    params["Signature"] = ec2sign.signature(
        secret or cfn["secret_access_key"], "HmacSHA256", "GET", parts.netloc.lower(),
        parts.path, ec2sign.canonical_query(params))
    return httpx.get(f"{url}?{urlencode(params)}", timeout=HTTP_TIMEOUT)


def _code(answer: httpx.Response) -> tuple[int, str]:
    text = answer.text
    assert "<ErrorResponse>" in text, text
    return answer.status_code, text[text.index("<Code>") + 6:text.index("</Code>")]


def _cfn_stack(hc: Any, name: str) -> str:
    sid = create(hc, name, deployment_template(transport="POLL_SERVER_CFN",
                                               signal="NO_SIGNAL"))
    assert settled(hc, sid).stack_status == "CREATE_COMPLETE"
    return sid


def test_a_servers_polls_forged_stale_or_aimed_elsewhere(hc: Any) -> None:
    sid = _cfn_stack(hc, "cfn-faults")
    other = _cfn_stack(hc, "cfn-faults-other")
    cfn = _keys(hc, sid)
    good = _poll(cfn)
    assert good.status_code == 200, good.text
    assert "<LogicalResourceId>server</LogicalResourceId>" in good.text

    assert _code(_poll(cfn, secret="not-the-secret")) == (403, "SignatureDoesNotMatch")
    now = dt.datetime.now(dt.UTC)
    # a request captured and replayed after the window, or dated ahead of it
    assert _code(_poll(cfn, when=now - WINDOW - dt.timedelta(minutes=1))) == \
        (400, "RequestExpired")
    assert _code(_poll(cfn, when=now + WINDOW + dt.timedelta(minutes=1))) == \
        (400, "RequestExpired")
    # the server's key reads its own resource only, in its own stack only
    assert _code(_poll(cfn, resource="deployment")) == (403, "AccessDenied")
    assert _code(_poll(cfn, stack="cfn-faults-other")) == (403, "AccessDenied")
    assert _code(_poll(cfn, stack=other)) == (403, "AccessDenied")
    assert _code(_poll(cfn, resource="nothing")) == (403, "AccessDenied")
    # the stack is untouched by all of it
    assert hc.stacks.get(sid).stack_status == "CREATE_COMPLETE"


def test_an_agent_polling_a_replaced_stack_is_refused(hc: Any) -> None:
    """The stack is deleted and a new one of the same name made: the old server's key
    went with the old stack (refused at once, nothing of the new stack is shown), and
    the new server has its own key."""
    sid = _cfn_stack(hc, "cfn-replaced")
    old = _keys(hc, sid)
    assert _poll(old).status_code == 200
    hc.stacks.delete(sid)
    assert deleted(hc, sid) == "DELETE_COMPLETE"
    assert _code(_poll(old)) == (403, "InvalidClientTokenId")

    new_sid = _cfn_stack(hc, "cfn-replaced")
    new = _keys(hc, new_sid)
    assert new["access_key_id"] != old["access_key_id"]
    assert _code(_poll(old)) == (403, "InvalidClientTokenId")
    shown = _poll(new)
    assert shown.status_code == 200 and new_sid in shown.text


def test_a_cfn_signal_to_a_removed_deployment_is_refused(hc: Any) -> None:
    """CFN_SIGNAL: the deployment's pre-signed URL dies with the deployment (its keypair
    is deleted with it), and a second signal to a live one changes nothing."""
    template = deployment_template(transport="POLL_SERVER_CFN", signal="CFN_SIGNAL")
    sid = create(hc, "cfn-signal-gone", template)
    wait_deployment(hc, sid, "CREATE")
    (config,) = hc.resources.metadata(sid, "server")["deployments"]
    url = {i["name"]: i.get("value") for i in config["inputs"]}["deploy_signal_id"]
    done = {"deploy_stdout": "first", "deploy_stderr": "", "deploy_status_code": 0}
    assert httpx.post(url, json=done, timeout=HTTP_TIMEOUT).status_code == 200
    assert settled(hc, sid).stack_status == "CREATE_COMPLETE"
    again = httpx.post(url, json={**done, "deploy_stdout": "second"}, timeout=HTTP_TIMEOUT)
    assert again.status_code == 200
    assert hc.resources.get(sid, "deployment").attributes["deploy_stdout"] == "first"

    without = deployment_template(transport="POLL_SERVER_CFN", signal="CFN_SIGNAL")
    del without["resources"]["deployment"]
    without["outputs"] = {}
    hc.stacks.update(sid, template=without)
    assert settled(hc, sid).stack_status == "UPDATE_COMPLETE"
    gone = httpx.post(url, json=done, timeout=HTTP_TIMEOUT)
    assert _code(gone) == (403, "InvalidClientTokenId")


def test_bad_cfn_signal_bodies_change_nothing(hc: Any) -> None:
    """heat-config-notify's POST with a body that is not JSON or too large: AWS's 400
    (Heat 27: a 500 for non-JSON). A JSON body that is not a map is answered 200 as
    Heat 27 answers it (the route is asynchronous; the deployment refuses it in the
    background). Either way the deployment still waits for a real signal."""
    template = deployment_template(transport="POLL_SERVER_CFN", signal="CFN_SIGNAL")
    sid = create(hc, "cfn-bad-bodies", template)
    wait_deployment(hc, sid, "CREATE")
    (config,) = hc.resources.metadata(sid, "server")["deployments"]
    url = {i["name"]: i.get("value") for i in config["inputs"]}["deploy_signal_id"]

    assert _code(httpx.post(url, content=b"{not json",
                            timeout=HTTP_TIMEOUT)) == (400, "InvalidParameterValue")
    huge = httpx.post(url, json={"deploy_stdout": "x" * 2_000_000}, timeout=HTTP_TIMEOUT)
    assert _code(huge) == (400, "RequestLimitExceeded")
    for wrong in ([1, 2], "done", 3):
        assert httpx.post(url, json=wrong, timeout=HTTP_TIMEOUT).status_code == 200
    assert hc.resources.get(sid, "deployment").resource_status == "CREATE_IN_PROGRESS"

    done = {"deploy_stdout": "ok", "deploy_stderr": "", "deploy_status_code": 0}
    assert httpx.post(url, json=done, timeout=HTTP_TIMEOUT).status_code == 200
    assert settled(hc, sid).stack_status == "CREATE_COMPLETE"
    assert hc.resources.get(sid, "deployment").attributes["deploy_stdout"] == "ok"
