"""Servers signal wait conditions the ways Heat's users do, against a real ``kiln serve``:
heat-cfntools' cfn-signal and curl to an AWS handle's pre-signed URL, the ``curl_cli``
of an OS::Heat handle run as printed, and each ``signal_transport``. Forged, misdirected,
repeated and malformed signals are refused in AWS's (or Heat's) format and change
nothing; a deleted stack's URLs stop working."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx
import pytest

from tests.support import cfntools
from tests.support.clients import heat_client, wait_for_stack_status
from tests.support.server import HTTP_TIMEOUT, KilnProcess, start_kiln

AWS_WAIT = {
    "AWSTemplateFormatVersion": "2010-09-09",
    "Parameters": {"Count": {"Type": "Number", "Default": 1}},
    "Resources": {
        "Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"},
        "Wait": {"Type": "AWS::CloudFormation::WaitCondition",
                 "Properties": {"Handle": {"Ref": "Handle"}, "Timeout": 300,
                                "Count": {"Ref": "Count"}}}},
    "Outputs": {"url": {"Value": {"Ref": "Handle"}},
                "data": {"Value": {"Fn::GetAtt": ["Wait", "Data"]}}},
}


def heat_wait(transport: str) -> dict[str, Any]:
    return {"heat_template_version": "2018-08-31", "resources": {
        "handle": {"type": "OS::Heat::WaitConditionHandle",
                   "properties": {"signal_transport": transport}},
        "wait": {"type": "OS::Heat::WaitCondition",
                 "properties": {"handle": {"get_resource": "handle"}, "timeout": 300}}},
        "outputs": {name: {"value": {"get_attr": ["handle", name]}}
                    for name in ("curl_cli", "token", "endpoint", "signal")}}


@pytest.fixture(scope="module")
def kiln(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    proc = start_kiln(tmp_path_factory.mktemp("wait"))
    yield proc
    assert proc.stop() == 0, proc.logs()


@pytest.fixture
def heat(kiln: KilnProcess) -> Any:
    return heat_client(kiln.endpoint("demo"))


def outputs(heat: Any, name: str) -> dict[str, Any]:
    return {o["output_key"]: o["output_value"] for o in heat.stacks.get(name).outputs}


def waiting(heat: Any, name: str, template: dict[str, Any], **params: Any) -> dict[str, Any]:
    """Create the stack and return its outputs once the handle is CREATE_COMPLETE (the
    condition then waits). Not as soon as an output is set: before the handle's create
    ends its reference is its name ("Handle"), which a loaded machine lets a poll see."""
    from heatclient.exc import HTTPNotFound

    heat.stacks.create(stack_name=name, template=template, parameters=params)
    handle = "Handle" if "Resources" in template else "handle"
    deadline = time.monotonic() + 90
    while True:
        try:
            status = resource_status(heat, name, handle)
        except HTTPNotFound:  # the stack's resources are not listed yet
            status = "INIT"
        if status == "CREATE_COMPLETE":
            return outputs(heat, name)
        assert "FAILED" not in status, f"{name}: the handle's create failed"
        assert time.monotonic() < deadline, f"{name}: the handle still {status} after 90 s"
        time.sleep(0.05)  # poll for the handle's create, bounded by the deadline


def delete(heat: Any, name: str) -> None:
    """Delete the stack and wait until it is gone (bounded)."""
    from heatclient.exc import HTTPNotFound

    stack_id = heat.stacks.get(name).id
    heat.stacks.delete(stack_id)
    deadline = time.monotonic() + 60
    while True:
        try:
            status = heat.stacks.get(stack_id).stack_status
        except HTTPNotFound:
            return
        assert status != "DELETE_FAILED" and time.monotonic() < deadline, status
        time.sleep(0.05)  # poll for the delete, bounded by the deadline


def resource_status(heat: Any, stack: str, name: str) -> str:
    return str(heat.resources.get(stack, name).resource_status)


def test_cfn_signal_completes_an_aws_wait_condition(heat: Any) -> None:
    url = waiting(heat, "cfnsig", AWS_WAIT, Count=2)["url"]
    assert url.startswith("http://127.0.0.1:") and "/v1/waitcondition/arn%3Aopenstack" in url
    with cfntools.system_paths():
        first = cfntools.run("cfn-signal", "-i", "a", "-e", "0", "-r", "first", "-d", "one",
                             url)
        assert first.returncode == 0, first.stderr
        # the PUT is answered once the signal is stored: one of two, still waiting
        assert resource_status(heat, "cfnsig", "Wait") == "CREATE_IN_PROGRESS"
        second = cfntools.run("cfn-signal", "-i", "b", "-s", "true", "-d", "two", url)
        assert second.returncode == 0, second.stderr
    stack = wait_for_stack_status(heat, "cfnsig")
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    assert json.loads(outputs(heat, "cfnsig")["data"]) == {"a": "one", "b": "two"}


def test_cfn_signal_failure_fails_the_condition(heat: Any) -> None:
    url = waiting(heat, "cfnfail", AWS_WAIT)["url"]
    with cfntools.system_paths():
        done = cfntools.run("cfn-signal", "-i", "x", "-e", "3", "-r", "disk full", url)
    assert done.returncode == 0, done.stderr
    stack = wait_for_stack_status(heat, "cfnfail")
    assert stack.stack_status == "CREATE_FAILED"
    assert "WaitConditionFailure: resources.Wait: disk full" in stack.stack_status_reason


def test_curl_to_the_presigned_url(heat: Any) -> None:
    url = waiting(heat, "curlput", AWS_WAIT)["url"]
    body = json.dumps({"Status": "SUCCESS", "Reason": "ok", "UniqueId": "1", "Data": "d"})
    done = subprocess.run(["curl", "-sS", "-f", "-X", "PUT", "-H", "Content-Type:",
                           "--data-binary", body, url], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "<resource>Handle</resource>"
    assert wait_for_stack_status(heat, "curlput").stack_status == "CREATE_COMPLETE"


def test_curl_cli_runs_as_printed(heat: Any) -> None:
    found = waiting(heat, "curlcli", heat_wait("TOKEN_SIGNAL"))
    assert found["endpoint"].startswith("http://127.0.0.1:")
    assert found["token"] and found["token"] in found["curl_cli"]
    done = subprocess.run(["bash", "-c", found["curl_cli"] +
                           """ --data-binary '{"status": "SUCCESS", "data": "up"}'"""],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert " 200 " in done.stdout.splitlines()[0]
    assert wait_for_stack_status(heat, "curlcli").stack_status == "CREATE_COMPLETE"


@pytest.mark.parametrize(("transport", "method"), [("CFN_SIGNAL", "PUT"),
                                                   ("HEAT_SIGNAL", "POST")])
def test_signal_transports(heat: Any, transport: str, method: str) -> None:
    name = f"via-{transport.lower().replace('_', '-')}"
    signal = json.loads(waiting(heat, name, heat_wait(transport))["signal"])
    assert signal["alarm_url"].startswith("http://127.0.0.1:")
    answer = httpx.request(method, signal["alarm_url"], json={"status": "SUCCESS"},
                           timeout=HTTP_TIMEOUT)
    assert answer.status_code == 200, answer.text
    assert wait_for_stack_status(heat, name).stack_status == "CREATE_COMPLETE"


def test_no_signal_and_zaqar(heat: Any) -> None:
    heat.stacks.create(stack_name="nosig", template={
        "heat_template_version": "2018-08-31", "resources": {"h": {
            "type": "OS::Heat::WaitConditionHandle",
            "properties": {"signal_transport": "NO_SIGNAL"}}},
        "outputs": {"signal": {"value": {"get_attr": ["h", "signal"]}}}})
    assert wait_for_stack_status(heat, "nosig").stack_status == "CREATE_COMPLETE"
    assert json.loads(outputs(heat, "nosig")["signal"]) == {}
    heat.stacks.create(stack_name="zaqar", template=heat_wait("ZAQAR_SIGNAL"))
    stack = wait_for_stack_status(heat, "zaqar")
    assert stack.stack_status == "CREATE_FAILED"
    assert stack.stack_status_reason == (
        "Resource CREATE failed: NotSupported: resources.handle: signal_transport "
        "ZAQAR_SIGNAL needs a messaging service (Zaqar), and none is configured")


def _with(url: str, **changes: str) -> str:
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    query.update(changes)
    return parts._replace(query=urlencode(query)).geturl()


def aws_error(answer: httpx.Response) -> tuple[int, str]:
    text = answer.text
    return answer.status_code, text[text.index("<Code>") + 6:text.index("</Code>")]


def test_forged_misdirected_repeated_and_malformed_signals(heat: Any) -> None:
    found = waiting(heat, "hostile", AWS_WAIT, Count=2)
    url = found["url"]
    ok = {"Status": "SUCCESS", "Reason": "r", "UniqueId": "same", "Data": "d"}

    forged = httpx.put(_with(url, Signature="AAAA" + url[-20:]), json=ok, timeout=HTTP_TIMEOUT)
    assert aws_error(forged) == (403, "SignatureDoesNotMatch")
    # the signature covers the path: it cannot be moved to another resource
    moved = httpx.put(url.replace("/resources/Handle", "/resources/Wait"), json=ok,
                      timeout=HTTP_TIMEOUT)
    assert aws_error(moved) == (403, "SignatureDoesNotMatch")
    # ... nor the verb: the wait-condition URL is signed for PUT
    assert httpx.post(url.replace("/waitcondition/", "/signal/"), json=ok,
                      timeout=HTTP_TIMEOUT).status_code == 403
    unknown = httpx.put(_with(url, AWSAccessKeyId="AKNOBODY"), json=ok, timeout=HTTP_TIMEOUT)
    assert aws_error(unknown) == (403, "InvalidClientTokenId")
    unsigned = httpx.put(url.split("?")[0], json=ok, timeout=HTTP_TIMEOUT)
    assert aws_error(unsigned) == (400, "IncompleteSignature")

    assert aws_error(httpx.put(url, content=b"not json",
                               timeout=HTTP_TIMEOUT)) == (400, "InvalidParameterValue")
    wrong = httpx.put(url, json={"Status": "MAYBE", "Reason": "r", "UniqueId": "1",
                                 "Data": "d"}, timeout=HTTP_TIMEOUT)
    assert aws_error(wrong) == (400, "InvalidParameterValue")
    assert "Metadata format invalid" in wrong.text
    huge = httpx.put(url, json={**ok, "Data": "x" * 2_000_000}, timeout=HTTP_TIMEOUT)
    assert aws_error(huge) == (400, "RequestLimitExceeded")

    # the same signal twice counts once: the condition still waits for a second id
    for _ in range(2):
        assert httpx.put(url, json=ok, timeout=HTTP_TIMEOUT).status_code == 200
    assert resource_status(heat, "hostile", "Wait") == "CREATE_IN_PROGRESS"
    metadata = heat.resources.metadata("hostile", "Handle")
    assert metadata == {"same": {"Data": "d", "Reason": "r", "Status": "SUCCESS"}}

    delete(heat, "hostile")
    # the handle's keypair went with the stack: the URL is refused at once (the key
    # cache of the process that deleted it is emptied by the delete)
    replay = httpx.put(url, json={**ok, "UniqueId": "late"}, timeout=HTTP_TIMEOUT)
    assert aws_error(replay) == (403, "InvalidClientTokenId")


def test_signal_tokens_are_checked(heat: Any, kiln: KilnProcess) -> None:
    first = waiting(heat, "tok1", heat_wait("TOKEN_SIGNAL"))
    second = waiting(heat, "tok2", heat_wait("TOKEN_SIGNAL"))
    body = {"status": "SUCCESS"}
    # a token is good for its own handle only
    misdirected = httpx.post(first["endpoint"], json=body,
                             headers={"X-Auth-Token": second["token"]}, timeout=HTTP_TIMEOUT)
    assert misdirected.status_code == 401
    assert misdirected.json()["error"]["type"] == "NotAuthenticated"
    forged = first["token"][:-4] + ("AAAA" if not first["token"].endswith("AAAA") else "BBBB")
    assert httpx.post(first["endpoint"], json=body,
                      headers={"X-Auth-Token": forged}, timeout=HTTP_TIMEOUT).status_code == 401
    assert resource_status(heat, "tok1", "wait") == "CREATE_IN_PROGRESS"
    good = httpx.post(first["endpoint"], json=body, headers={"X-Auth-Token": first["token"]},
                      timeout=HTTP_TIMEOUT)
    assert good.status_code == 200
    assert wait_for_stack_status(heat, "tok1").stack_status == "CREATE_COMPLETE"
    delete(heat, "tok1")
    delete(heat, "tok2")
    gone = httpx.post(first["endpoint"], json=body, headers={"X-Auth-Token": first["token"]},
                      timeout=HTTP_TIMEOUT)
    assert gone.status_code == 404


def test_urls_follow_the_configured_server_urls(tmp_path: Any) -> None:
    proc = start_kiln(tmp_path / "configured", options={"DEFAULT": {
        "heat_waitcondition_server_url": "http://kiln.example.com:8000/v1/waitcondition",
        "heat_metadata_server_url": "http://meta.example.com:8000"}})
    try:
        client = heat_client(proc.endpoint("demo"))
        url = waiting(client, "conf", AWS_WAIT)["url"]
        assert url.startswith("http://kiln.example.com:8000/v1/waitcondition/arn%3A")
        delete(client, "conf")
    finally:
        assert proc.stop() == 0
