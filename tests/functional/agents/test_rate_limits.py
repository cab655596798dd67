"""Per-credential rate limits on the endpoints servers' agents call (issue 22), against a
real ``kiln serve`` with tiny budgets (``[kiln_api] agent_*_rate = 0.5``, ``_burst = 3``).

On every agent endpoint one credential flooding is refused with a 429 and
``Retry-After``, in the API's own error format (Heat's fault body on the native listener
and the temp URLs, AWS's XML ``Throttling`` on the CFN and CloudWatch listeners), the
refused calls change nothing, another tenant's credential on the same server is served
meanwhile, and the flooder is served again once its bucket refills (observed: polled
until answered, within the Retry-After the server gave plus a margin).

Clients are the real ones' wire forms: signed URLs as Kiln hands them out, SigV2 as
os-collect-config's cfn collector signs, SigV4 as botocore signs.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.functional.agents.deploying import (
    create,
    deployment_template,
    metadata_url,
    server_collector,
    settled,
    wait_deployment,
)
from tests.functional.agents.test_cfn_faults import _poll
from tests.functional.cfn.test_wait_conditions import AWS_WAIT, waiting
from tests.functional.scaling.test_cloudwatch_bad_numbers import error_of, keys_for, send
from tests.support.clients import heat_client
from tests.support.fixtures import report_errors
from tests.support.server import HTTP_TIMEOUT, KilnProcess, start_kiln

RATE, BURST = 0.5, 3
SLOW_RATE = 0.1
#: what a loaded machine may add to the wait the server announced
MARGIN = 15.0


@pytest.fixture(scope="module")
def kiln(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    limits = {f"agent_{kind}_{term}": value for kind in ("signal", "metadata", "metric")
              for term, value in (("rate", RATE), ("burst", BURST))}
    proc = start_kiln(tmp_path_factory.mktemp("ratelimit"),
                      options={"DEFAULT": {"graceful_shutdown_timeout": 2},
                               "kiln_api": limits})
    yield proc
    status = proc.stop()
    report_errors(proc)
    assert status == 0, f"kiln serve exited {status} on SIGTERM:\n{proc.logs()}"


def flood(call: Callable[[int], httpx.Response], n: int = 12, *, spent: int = 0,
          ) -> tuple[int, httpx.Response]:
    """``n`` calls as fast as they go: how many were answered (not 429), and the last
    429. The bucket allows BURST at once plus RATE per second of the flood, less what
    the credential ``spent`` before (and has perhaps got back since)."""
    started = time.monotonic()
    answered, refused = 0, None
    for i in range(n):
        answer = call(i)
        assert answer.status_code < 500, answer.text
        if answer.status_code == 429:
            refused = answer
        else:
            answered += 1
    elapsed = time.monotonic() - started
    assert refused is not None, f"{n} calls in {elapsed:.1f} s were never limited"
    assert BURST - spent <= answered <= BURST + int(elapsed * RATE) + 1, (answered,
                                                                          elapsed)
    return answered, refused


def retry_after(answer: httpx.Response, rate: float = RATE) -> int:
    value = int(answer.headers["retry-after"])
    # the wait for one token at the rate, rounded up to whole seconds
    assert 1 <= value <= int(1 / rate) + 1, value
    return value


def recovers(call: Callable[[], httpx.Response], refused: httpx.Response,
             rate: float = RATE) -> httpx.Response:
    """Poll until the flooder is served again; it must be within the announced wait (a
    refused call spends no token, so polling does not delay it)."""
    wait = retry_after(refused, rate)
    started = time.monotonic()
    while True:
        answer = call()
        if answer.status_code != 429:
            assert time.monotonic() - started <= wait + MARGIN
            return answer
        assert time.monotonic() - started <= wait + MARGIN, "the budget never refilled"
        time.sleep(0.1)  # polling for the refill; refused calls cost no token


def heat_fault(answer: httpx.Response) -> str:
    assert answer.status_code == 429, answer.text
    body = answer.json()
    assert body["code"] == 429 and body["title"] == "Too Many Requests", body
    assert body["error"]["type"] == "HTTPTooManyRequests", body
    assert body["error"]["traceback"] is None
    return str(body["error"]["message"])


def aws_throttling(answer: httpx.Response) -> str:
    assert answer.status_code == 429, answer.text
    text = answer.text
    assert text.startswith("<ErrorResponse") and "<Type>Sender</Type>" in text, text
    assert "<Code>Throttling</Code>" in text, text
    assert "<Message>Rate exceeded:" in text, text
    return text


# -- CFN pre-signed wait-condition URLs (cfn-signal, curl) ------------------------------------

def test_wait_condition_signals_are_limited_per_handle(kiln: KilnProcess) -> None:
    flooder = waiting(heat_client(kiln.endpoint("alpha")), "rl-wait", AWS_WAIT, Count=99)
    other = waiting(heat_client(kiln.endpoint("beta")), "rl-wait", AWS_WAIT, Count=99)

    def put(url: str, uid: str) -> httpx.Response:
        return httpx.put(url, json={"Status": "SUCCESS", "Reason": "r", "UniqueId": uid,
                                    "Data": uid}, timeout=HTTP_TIMEOUT)

    answered, refused = flood(lambda i: put(flooder["url"], f"f{i}"))
    message = aws_throttling(refused)
    assert "signals" in message and "0.5 per second" in message
    # another tenant's handle on the same server: served in full
    assert [put(other["url"], f"o{i}").status_code for i in range(BURST)] == [200] * BURST
    # the refused signals were not kept
    kept = heat_client(kiln.endpoint("alpha")).resources.metadata("rl-wait", "Handle")
    assert len(kept) == answered, kept
    assert recovers(lambda: put(flooder["url"], "late"), refused).status_code == 200


# -- native signals and metadata (noauth: keyed by the resource the call names) ---------------

HOT_WAIT = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "handle": {"type": "OS::Heat::WaitConditionHandle"},
        "wait": {"type": "OS::Heat::WaitCondition",
                 "properties": {"handle": {"get_resource": "handle"}, "count": 99,
                                "timeout": 300}}},
}


def test_native_signals_and_metadata_reads_are_limited(kiln: KilnProcess) -> None:
    stacks = {}
    for project in ("alpha", "beta"):
        hc = heat_client(kiln.endpoint(project))
        sid = create(hc, "rl-native", HOT_WAIT)
        stacks[project] = f"{kiln.endpoint(project)}/stacks/rl-native/{sid}/resources/handle"
        waiting_for = time.monotonic() + 90
        while hc.resources.get(sid, "handle").resource_status != "CREATE_COMPLETE":
            assert time.monotonic() < waiting_for
            time.sleep(0.05)  # the handle's create, bounded

    def signal(project: str, i: int) -> httpx.Response:
        return httpx.post(stacks[project] + "/signal", timeout=HTTP_TIMEOUT,
                          json={"status": "SUCCESS", "id": f"{project}{i}", "data": "d"})

    def read(project: str) -> httpx.Response:
        return httpx.get(stacks[project] + "/metadata", timeout=HTTP_TIMEOUT)

    answered, refused = flood(lambda i: signal("alpha", i))
    assert "Too many signals" in heat_fault(refused)
    assert [signal("beta", i).status_code for i in range(BURST)] == [200] * BURST
    # metadata reads have a budget of their own, spent here by the flood of reads
    _, refused_read = flood(lambda i: read("alpha"))
    assert "Too many metadata reads" in heat_fault(refused_read)
    assert read("beta").status_code == 200
    kept = recovers(lambda: read("alpha"), refused_read).json()["metadata"]
    assert len(kept) == answered, kept
    assert recovers(lambda: signal("alpha", 99), refused).status_code == 200


def test_deployment_metadata_polls_are_limited_per_server(kiln: KilnProcess) -> None:
    """``software_deployments/metadata/{server}``: what a server's agent polls for its
    deployments (keyed by the server in noauth mode)."""
    server = str(uuid.uuid4())

    def poll(project: str) -> httpx.Response:
        return httpx.get(f"{kiln.endpoint(project)}/software_deployments/metadata/{server}",
                         timeout=HTTP_TIMEOUT)

    _, refused = flood(lambda i: poll("alpha"))
    assert "Too many metadata reads" in heat_fault(refused)
    assert poll("beta").status_code == 200
    assert recovers(lambda: poll("alpha"), refused).json() == {"metadata": []}


# -- temp URLs (POLL_TEMP_URL's polls, TEMP_URL_SIGNAL's PUT) ------------------------------------

def _temp_url_server(kiln: KilnProcess, project: str) -> tuple[str, str]:
    hc = heat_client(kiln.endpoint(project))
    sid = create(hc, "rl-temp", deployment_template())
    # the server publishes its collector settings once it exists (a create answers first)
    wait_deployment(hc, sid, "CREATE")
    url = metadata_url(server_collector(hc, sid))
    # as the server's agent reads it: one of this temp URL's metadata tokens
    (deployment,) = httpx.get(url, timeout=HTTP_TIMEOUT).json()["deployments"]
    inputs = {i["name"]: i["value"] for i in deployment["inputs"]}
    return url, str(inputs["deploy_signal_id"])


def test_temp_url_polls_and_signals_are_limited_per_resource(kiln: KilnProcess) -> None:
    poll_url, signal_url = _temp_url_server(kiln, "alpha")
    other_poll, _ = _temp_url_server(kiln, "beta")

    def poll(i: int) -> httpx.Response:
        # the request collector's HEAD then GET: both spend a token
        method = "HEAD" if i % 2 else "GET"
        return httpx.request(method, poll_url, timeout=HTTP_TIMEOUT)

    _, refused = flood(poll, spent=1)
    if refused.request.method == "HEAD":
        refused = httpx.get(poll_url, timeout=HTTP_TIMEOUT)
    assert "Too many metadata reads" in heat_fault(refused)
    assert httpx.get(other_poll, timeout=HTTP_TIMEOUT).status_code == 200
    assert recovers(lambda: httpx.get(poll_url, timeout=HTTP_TIMEOUT),
                    refused).status_code == 200

    def put(i: int) -> httpx.Response:
        return httpx.put(signal_url, timeout=HTTP_TIMEOUT,
                         json={"deploy_stdout": str(i), "deploy_status_code": 0})

    _, refused_put = flood(put)
    assert "Too many signals" in heat_fault(refused_put)


# -- CFN DescribeStackResource (os-collect-config's cfn collector, cfn-hup) ---------------------

def _cfn_keys(kiln: KilnProcess, project: str) -> dict[str, str]:
    hc = heat_client(kiln.endpoint(project))
    sid = create(hc, "rl-cfn", deployment_template(transport="POLL_SERVER_CFN",
                                                   signal="NO_SIGNAL"))
    assert settled(hc, sid).stack_status == "CREATE_COMPLETE"
    return dict(hc.resources.get(sid, "server").attributes["os_collect_config"]["cfn"])


def test_cfn_metadata_polls_are_limited_per_keypair(kiln: KilnProcess) -> None:
    flooder, other = _cfn_keys(kiln, "alpha"), _cfn_keys(kiln, "beta")
    _, refused = flood(lambda i: _poll(flooder))
    assert "metadata reads" in aws_throttling(refused)
    served = _poll(other)
    assert served.status_code == 200 and "<LogicalResourceId>server<" in served.text
    assert recovers(lambda: _poll(flooder), refused).status_code == 200


# -- CloudWatch PutMetricData (cfn-push-stats) -----------------------------------------------------

def _statistics(kiln: KilnProcess, keys: dict[str, str], namespace: str) -> float:
    now = time.time()
    answer = send(kiln, keys, "json", "GetMetricStatistics", {
        "Namespace": namespace, "MetricName": "load", "StartTime": now - 600,
        "EndTime": now + 600, "Period": 3600, "Statistics": ["SampleCount"]})
    assert answer.status_code == 200, answer.text
    return float(sum(p["SampleCount"] for p in answer.json()["Datapoints"]))


def test_put_metric_data_is_throttled_in_aws_format(kiln: KilnProcess) -> None:
    flooder, other = keys_for(kiln, "alpha"), keys_for(kiln, "beta")
    namespace = f"rl-{uuid.uuid4().hex[:8]}"

    def push(keys: dict[str, str], protocol: str = "query") -> httpx.Response:
        params: dict[str, Any] = (
            {"Namespace": namespace, "MetricData.member.1.MetricName": "load",
             "MetricData.member.1.Value": "1"} if protocol == "query" else
            {"Namespace": namespace, "MetricData": [{"MetricName": "load", "Value": 1.0}]})
        return send(kiln, keys, protocol, "PutMetricData", params)

    answered, refused = flood(lambda i: push(flooder))
    aws_throttling(refused)
    assert "PutMetricData" in refused.text
    assert refused.headers["x-amzn-query-error"] == "Throttling;Sender"
    # JSON and CBOR clients get the same error in their protocol
    for protocol in ("json", "cbor"):
        answer = push(flooder, protocol)
        assert error_of(answer)[:2] == (429, "Throttling"), answer.content
        assert int(answer.headers["retry-after"]) >= 1
    assert [push(other).status_code for _ in range(BURST)] == [200] * BURST
    # what was refused was not stored (the flooder's statistics call is no PutMetricData)
    assert _statistics(kiln, flooder, namespace) == answered
    assert _statistics(kiln, other, namespace) == BURST
    assert recovers(lambda: push(flooder), refused).status_code == 200


# -- with authentication: the budget is the token's user's, whatever it signals ---------------

TWO_HANDLES = {
    "heat_template_version": "2018-08-31",
    "resources": {name: {"type": "OS::Heat::WaitConditionHandle"}
                  for name in ("first", "second")},
}


def test_with_tokens_the_budget_belongs_to_the_user(start_kiln_factory: Any,
                                                    tmp_path: Any) -> None:
    import yaml

    tokens = tmp_path / "tokens.yaml"
    tokens.write_text(yaml.safe_dump([
        {"token": f"{who}-secret", "user_id": who, "project_id": project,
         "roles": ["member", "reader"]}
        for who, project in (("mallory", "alpha"), ("bob", "beta"))]))
    kiln = start_kiln_factory(options={
        "DEFAULT": {"graceful_shutdown_timeout": 2},
        "paste_deploy": {"flavor": "custombackend"},
        "kiln_auth": {"backend": "tokens_file", "tokens_file": tokens},
        # one token per 10 s: a loaded machine cannot refill the bucket between the
        # flood's last refusal and the next signal, which must be refused too
        "kiln_api": {"agent_signal_rate": SLOW_RATE, "agent_signal_burst": BURST}})
    urls = {}
    for who, project in (("mallory", "alpha"), ("bob", "beta")):
        headers = {"X-Auth-Token": f"{who}-secret"}
        made = httpx.post(kiln.endpoint(project) + "/stacks", headers=headers,
                          json={"stack_name": "rl-users", "template": TWO_HANDLES},
                          timeout=HTTP_TIMEOUT)
        assert made.status_code == 201, made.text
        stack = made.json()["stack"]["links"][0]["href"]
        deadline = time.monotonic() + 90
        while True:
            shown = httpx.get(stack, headers=headers, timeout=HTTP_TIMEOUT)
            assert shown.status_code == 200, shown.text
            if shown.json()["stack"]["stack_status"] == "CREATE_COMPLETE":
                break
            assert time.monotonic() < deadline
            time.sleep(0.05)  # the stack's create, bounded
        urls[who] = stack

    def signal(who: str, handle: str, i: int) -> httpx.Response:
        return httpx.post(f"{urls[who]}/resources/{handle}/signal",
                          headers={"X-Auth-Token": f"{who}-secret"},
                          json={"status": "SUCCESS", "id": str(i)}, timeout=HTTP_TIMEOUT)

    _, refused = flood(lambda i: signal("mallory", "first", i))
    assert "Too many signals" in heat_fault(refused)
    # another resource is no way around it: the budget is the credential's
    assert signal("mallory", "second", 0).status_code == 429
    assert [signal("bob", "first", i).status_code for i in range(BURST)] == [200] * BURST
    assert recovers(lambda: signal("mallory", "second", 1), refused,
                    SLOW_RATE).status_code == 200
