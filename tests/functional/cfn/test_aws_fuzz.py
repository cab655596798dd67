"""Hypothesis throws arbitrary query strings, bodies and headers at the CFN and CloudWatch
listeners of a real ``kiln serve`` (issue 22, finding 9): unsigned, signed with a bad
signature, and correctly signed by botocore (so the parsing after authentication is
reached too). Every answer is below 500 and carries no traceback, and after each request
both listeners answer another within 1 s.

The default number of examples is a fast subset fit for CI (seconds); set
``KILN_FUZZ_EXAMPLES`` (e.g. 5000) for a deeper run."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.aws import Keypair, issue_keypair
from tests.support.server import KilnProcess, start_kiln

EXAMPLES = int(os.environ.get("KILN_FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=not os.environ.get(
    "KILN_FUZZ_EXAMPLES"), suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example,
    HealthCheck.filter_too_much])
TARGET = "GraniteServiceVersion20100801"
CFN_ACTIONS = ["ListStacks", "DescribeStacks", "DescribeStackEvents", "DescribeStackResource",
               "DescribeStackResources", "ListStackResources", "GetTemplate",
               "ValidateTemplate", "EstimateTemplateCost", "CreateStack", "UpdateStack",
               "DeleteStack", "CancelUpdateStack", "Frobnicate"]
CW_ACTIONS = ["PutMetricData", "ListMetrics", "GetMetricStatistics", "PutMetricAlarm",
              "DescribeAlarms", "DescribeAlarmsForMetric", "DescribeAlarmHistory",
              "EnableAlarmActions", "DisableAlarmActions", "SetAlarmState", "DeleteAlarms",
              "Frobnicate"]
NAMES = ["Action", "Version", "Signature", "AWSAccessKeyId", "SignatureVersion",
         "SignatureMethod", "Timestamp", "Expires", "X-Amz-Algorithm", "X-Amz-Credential",
         "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders", "X-Amz-Signature",
         "ContentType", "StackName", "TemplateBody", "TemplateURL", "LogicalResourceId",
         "PhysicalResourceId", "Namespace", "MetricName", "StartTime", "EndTime", "Period",
         "Statistic", "Unit", "NextToken", "MaxRecords", "AlarmName", "AlarmNamePrefix",
         "StateValue", "StateReason", "StateReasonData", "Threshold", "EvaluationPeriods",
         "ComparisonOperator", "HistoryItemType", "StartDate", "EndDate", "TimeoutInMinutes"]
LISTS = ["MetricData", "Dimensions", "Parameters", "Tags", "AlarmNames", "Statistics",
         "MetricData.member.1.Dimensions", "NotificationARNs", "Capabilities",
         "AlarmActions", "StackStatusFilter"]
FIELDS = ["", ".Name", ".Value", ".MetricName", ".Timestamp", ".Unit", ".ParameterKey",
          ".ParameterValue", ".StatisticValues.Sum", ".StatisticValues.SampleCount",
          ".Key", ".UsePreviousValue"]
ODD = ["nan", "NaN", "inf", "-Infinity", "1e400", "-1e300", "9" * 5000, "", "true", "0",
       "-1", "2147483648", "2026-01-01T00:00:00Z", "99991231T235959Z", "00010101T000000Z",
       "604800", "HmacSHA256", "HmacSHA1", "2", "4", "JSON", "Count", "Sum", "ALARM",
       "AWS4-HMAC-SHA256", "AK/20260101/RegionOne/monitoring/aws4_request", "{}", "[]",
       '{"AWSTemplateFormatVersion": "2010-09-09", "Resources": {}}', "arn:openstack:x"]


def _member(prefix: str, index: str, field: str) -> str:
    return f"{prefix}.member.{index}{field}"


indexes = st.one_of(st.integers(-3, 10 ** 12).map(str), st.text("0123456789", max_size=14),
                    st.sampled_from(["9" * 5000, "٣", "²", "1e3"]))
keys = st.one_of(st.sampled_from(NAMES),
                 st.builds(_member, st.sampled_from(LISTS), indexes, st.sampled_from(FIELDS)),
                 st.integers(0, 3000).map(lambda n: "MetricData" + "." * n + "x"),
                 st.text(max_size=24))
values = st.one_of(st.sampled_from(ODD), st.text(max_size=40), st.integers().map(str),
                   st.floats().map(repr))
pairs = st.lists(st.tuples(keys, values), max_size=10)
json_values = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(NAMES + LISTS) | st.text(max_size=8), inner, max_size=4),
    max_leaves=30)
# what HTTP lets a header value be (an HTTP client refuses to send anything else)
header_text = st.text(st.characters(codec="latin-1", exclude_categories=["Cc"]),
                      max_size=80).map(str.strip)


def _form(items: list[tuple[str, str]]) -> str:
    return "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in items)


@st.composite
def bodies(draw: st.DrawFn) -> tuple[bytes, str]:
    """(body, content type) in one of the shapes the listeners read, or garbage."""
    kind = draw(st.sampled_from(["form", "json", "cbor", "deep", "bytes", "none"]))
    if kind == "form":
        return _form(draw(pairs)).encode(), "application/x-www-form-urlencoded"
    if kind == "json":
        return json.dumps(draw(json_values)).encode(), "application/x-amz-json-1.0"
    if kind == "cbor":
        import cbor2

        if draw(st.booleans()):
            return draw(st.binary(max_size=64)), "application/cbor"
        return cbor2.dumps(draw(json_values)), "application/cbor"
    if kind == "deep":
        depth = draw(st.sampled_from([17, 1000, 100000]))
        opener = draw(st.sampled_from(["[", '{"a":']))
        return (opener * depth).encode(), draw(st.sampled_from(
            ["application/x-amz-json-1.0", "application/json", ""]))
    if kind == "bytes":
        return draw(st.binary(max_size=200)), draw(header_text)
    return b"", ""


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    listener = draw(st.sampled_from(["cfn", "cloudwatch"]))
    path = draw(st.sampled_from(
        ["/", "/v1", "/v1/", f"/service/{TARGET}/operation/ListMetrics",
         f"/service/{TARGET}/operation/PutMetricData", "/service/x/operation/%00",
         "/v1/waitcondition/arn%3Aopenstack%3Aheat%3A%3Ademo%3Astacks%2Fs%2F1%2Fresources%2Fh",
         "/v1/signal/arn:openstack:heat::demo:stacks/s/1/resources/h", "/v1/signal/x"]))
    query = _form(draw(pairs)) if draw(st.booleans()) else draw(
        st.text("abcAZ09%&=.+;_-~!$'()*,/?:@[]", max_size=60))
    body, content_type = draw(bodies())
    headers: dict[str, str] = {}
    if content_type:
        headers["content-type"] = content_type
    extra = draw(st.dictionaries(
        st.sampled_from(["x-amz-target", "smithy-protocol", "authorization", "x-amz-date",
                         "date", "x-amz-content-sha256", "content-type", "host"]),
        st.one_of(header_text, st.sampled_from([
            f"{TARGET}.PutMetricData", f"{TARGET}.", "rpc-v2-cbor", "UNSIGNED-PAYLOAD",
            "AWS4-HMAC-SHA256 Credential=AK/20260101/RegionOne/monitoring/aws4_request, "
            "SignedHeaders=host;x-amz-date, Signature=00",
            "AWS4-HMAC-SHA256 Credential=AK, SignedHeaders=, Signature=x",
            "20260101T000000Z", "99991231T235959Z", "Mon, 01 Jan 99999 00:00:00 GMT"])),
        max_size=4))
    headers.update({k: v for k, v in extra.items() if k != "host" or v.strip()})
    return {"listener": listener, "method": draw(st.sampled_from(["GET", "POST", "PUT",
                                                                  "DELETE"])),
            "path": path, "query": query, "body": body, "headers": headers}


@st.composite
def signed_calls(draw: st.DrawFn) -> dict[str, Any]:
    """A correctly signed call with arbitrary parameters: reaches the actions' parsing."""
    listener = draw(st.sampled_from(["cfn", "cloudwatch"]))
    actions = CFN_ACTIONS if listener == "cfn" else CW_ACTIONS
    action = draw(st.sampled_from(actions))
    protocol = "query" if listener == "cfn" else draw(st.sampled_from(
        ["query", "json", "cbor"]))
    if protocol == "query":
        items = [("Action", action), *draw(pairs)]
        if listener == "cloudwatch":
            items.append(("Version", "2010-08-01"))
        return {"listener": listener, "protocol": protocol, "action": action,
                "body": _form(items).encode()}
    params = draw(st.dictionaries(st.sampled_from(NAMES + LISTS) | st.text(max_size=8),
                                  json_values, max_size=6))
    if protocol == "json":
        body = json.dumps(params).encode()
    else:
        import cbor2

        body = cbor2.dumps(params)
    return {"listener": listener, "protocol": protocol, "action": action, "body": body}


@pytest.fixture(scope="module")
def kiln(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    proc = start_kiln(tmp_path_factory.mktemp("fuzz"))
    yield proc
    assert proc.stop() == 0, proc.logs()


@pytest.fixture(scope="module")
def keypair(kiln: KilnProcess) -> Keypair:
    return issue_keypair(kiln, "fuzz")


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as http:
        yield http


def base(kiln: KilnProcess, listener: str) -> str:
    url = kiln.cfn_url if listener == "cfn" else kiln.cloudwatch_url
    return url.split("/v1")[0].rstrip("/")


def check(kiln: KilnProcess, client: httpx.Client, answer: httpx.Response) -> None:
    assert answer.status_code < 500, (answer.status_code, answer.text[:500])
    text = answer.content.decode("latin-1")
    assert "Traceback" not in text and 'File "' not in text, text[:500]
    for listener in ("cfn", "cloudwatch"):
        alive = client.get(base(kiln, listener) + "/", timeout=1.0)
        assert alive.status_code < 500


@FUZZ
@given(request=requests())
def test_arbitrary_requests_get_no_5xx(kiln: KilnProcess, client: httpx.Client,
                                       request: dict[str, Any]) -> None:
    url = base(kiln, request["listener"]) + request["path"]
    if request["query"]:
        url += "?" + request["query"]
    headers = [(k.encode(), v.encode("latin-1")) for k, v in request["headers"].items()]
    answer = client.request(request["method"], url, content=request["body"],
                            headers=headers)
    check(kiln, client, answer)


@FUZZ
@given(call=signed_calls())
def test_signed_arbitrary_parameters_get_no_5xx(kiln: KilnProcess, keypair: Keypair,
                                                client: httpx.Client,
                                                call: dict[str, Any]) -> None:
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    url = base(kiln, call["listener"]) + ("/v1/" if call["listener"] == "cfn" else "/")
    if call["protocol"] == "query":
        headers = {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"}
    elif call["protocol"] == "json":
        headers = {"Content-Type": "application/x-amz-json-1.0",
                   "X-Amz-Target": f"{TARGET}.{call['action']}"}
    else:
        url = base(kiln, "cloudwatch") + f"/service/{TARGET}/operation/{call['action']}"
        headers = {"Content-Type": "application/cbor", "Smithy-Protocol": "rpc-v2-cbor"}
    aws = AWSRequest("POST", url, data=call["body"], headers=headers)
    service = "cloudformation" if call["listener"] == "cfn" else "monitoring"
    SigV4Auth(Credentials(keypair.access, keypair.secret), service,
              "RegionOne").add_auth(aws)
    answer = client.post(url, content=call["body"], headers=dict(aws.headers.items()))
    assert answer.status_code not in (401, 403), answer.text[:300]   # the signature holds
    check(kiln, client, answer)
