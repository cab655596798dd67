"""Numbers and times CloudWatch refuses (issue 22, finding 4), against a real
``kiln api-cloudwatch``: NaN, infinities and absurd times are a 400
``InvalidParameterValue`` in each protocol the client spoke (query/XML, JSON,
rpc-v2-cbor), and never reach the buffer that holds every project's points, so another
project's data survives and GetMetricStatistics keeps answering."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from tests.support.server import HTTP_TIMEOUT, KilnProcess, kiln_command, start_kiln

TARGET = "GraniteServiceVersion20100801"


@pytest.fixture(scope="module")
def kiln(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    proc = start_kiln(tmp_path_factory.mktemp("kiln"), command="api-cloudwatch")
    yield proc
    assert proc.stop() == 0, proc.logs()


def keys_for(kiln: KilnProcess, project: str) -> dict[str, str]:
    made = subprocess.run([*kiln_command(), "ec2-credentials", "create", "--config-file",
                           str(kiln.config_file), "--project", project],
                          capture_output=True, text=True, check=True, timeout=60)
    return dict(json.loads(made.stdout))


@pytest.fixture(scope="module")
def keys(kiln: KilnProcess) -> dict[str, str]:
    return keys_for(kiln, "mallory")


def send(kiln: KilnProcess, keys: dict[str, str], protocol: str, action: str,
         params: dict[str, Any]) -> httpx.Response:
    """``params`` in ``protocol``'s wire form as written here (no client would send
    these values), SigV4-signed by botocore."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    url = kiln.cloudwatch_url + "/"
    body: bytes
    if protocol == "query":
        body = urlencode({"Action": action, "Version": "2010-08-01", **params}).encode()
        headers = {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"}
    elif protocol == "json":
        body = json.dumps(params).encode()   # NaN and Infinity as Python writes them
        headers = {"Content-Type": "application/x-amz-json-1.0",
                   "X-Amz-Target": f"{TARGET}.{action}"}
    else:
        import cbor2

        body = cbor2.dumps(params)
        url = f"{kiln.cloudwatch_url}/service/{TARGET}/operation/{action}"
        headers = {"Content-Type": "application/cbor", "Smithy-Protocol": "rpc-v2-cbor"}
    request = AWSRequest("POST", url, data=body, headers=headers)
    SigV4Auth(Credentials(keys["access"], keys["secret"]), "monitoring",
              "RegionOne").add_auth(request)
    return httpx.post(url, content=body, headers=dict(request.headers.items()),
                      timeout=HTTP_TIMEOUT)


def error_of(answer: httpx.Response) -> tuple[int, str, str]:
    if answer.status_code < 400:
        return answer.status_code, "", answer.text
    kind = answer.headers.get("content-type", "")
    if "cbor" in kind:
        import cbor2

        found = cbor2.loads(answer.content)
    elif "json" in kind:
        found = answer.json()
    else:
        text = answer.text
        code = text[text.index("<Code>") + 6:text.index("</Code>")]
        return answer.status_code, code, text
    return answer.status_code, str(found["__type"]).rsplit("#", 1)[-1], str(found["message"])


def datum(protocol: str, **fields: Any) -> dict[str, Any]:
    if protocol == "query":
        return {"Namespace": "bad", **{f"MetricData.member.1.{k}": v
                                       for k, v in fields.items()}}
    return {"Namespace": "bad", "MetricData": [fields]}


@pytest.mark.parametrize("protocol", ["query", "json", "cbor"])
def test_non_finite_and_absurd_numbers_are_refused(kiln: KilnProcess, keys: dict[str, str],
                                                   protocol: str) -> None:
    nan, inf = float("nan"), float("inf")
    cases: list[tuple[str, Any]] = [("Timestamp", nan), ("Timestamp", inf),
                                    ("Timestamp", -inf), ("Timestamp", 1e300),
                                    ("Value", nan), ("Value", inf), ("Value", 2.0 ** 400)]
    if protocol == "query":
        cases = [(k, "nan" if v != v else str(v)) for k, v in cases] + [
            ("Timestamp", "NaN"), ("Timestamp", "1e400"), ("Timestamp", "9" * 5000)]
    for field, value in cases:
        fields = {"MetricName": "m", "Value": 1.0, field: value}
        answer = send(kiln, keys, protocol, "PutMetricData", datum(protocol, **fields))
        status, code, message = error_of(answer)
        assert (status, code) == (400, "InvalidParameterValue"), (field, value, answer.text)
        assert f"MetricData.member.1.{field}" in message, message
    now = dt.datetime.now(dt.UTC).timestamp()
    for start in ("nan", "-inf") if protocol == "query" else (nan, -inf):
        answer = send(kiln, keys, protocol, "GetMetricStatistics", {
            "Namespace": "bad", "MetricName": "m", "StartTime": start, "EndTime": now,
            "Period": 60, **({"Statistics.member.1": "Sum"} if protocol == "query"
                             else {"Statistics": ["Sum"]})})
        status, code, message = error_of(answer)
        assert (status, code) == (400, "InvalidParameterValue"), answer.text
        assert "StartTime" in message


def test_a_bad_point_costs_no_other_project_its_data(kiln: KilnProcess,
                                                     keys: dict[str, str]) -> None:
    victim = keys_for(kiln, "victim")
    ns = f"ns-{uuid.uuid4().hex[:6]}"
    now = dt.datetime.now(dt.UTC).timestamp()
    # within one flush interval: the victim's point and the bad one in the same buffer
    good = send(kiln, victim, "query", "PutMetricData", {
        "Namespace": ns, "MetricData.member.1.MetricName": "load",
        "MetricData.member.1.Value": "7"})
    bad = send(kiln, keys, "query", "PutMetricData", {
        "Namespace": ns, "MetricData.member.1.MetricName": "load",
        "MetricData.member.1.Value": "1", "MetricData.member.1.Timestamp": "nan"})
    assert good.status_code == 200, good.text
    assert error_of(bad)[:2] == (400, "InvalidParameterValue")
    stats = send(kiln, victim, "json", "GetMetricStatistics", {
        "Namespace": ns, "MetricName": "load", "StartTime": now - 300,
        "EndTime": now + 300, "Period": 600, "Statistics": ["Sum", "SampleCount"]})
    assert stats.status_code == 200, stats.text
    (point,) = stats.json()["Datapoints"]
    assert (point["Sum"], point["SampleCount"]) == (7.0, 1.0)
