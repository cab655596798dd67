"""Malformed and under-signed requests to the AWS-style listeners (CFN, CloudWatch) of a
real ``kiln serve`` (issue 22, findings 9 and 10), and the wait-condition curl
example run as written. Every refusal is a 4xx in AWS's format with no traceback; the
requests are built and signed by botocore's own signers (SigV2, SigV4), or by hand where
no client would send them."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from tests.support import docs
from tests.support.aws import Keypair, issue_keypair
from tests.support.clients import heat_client, wait_for_stack_status
from tests.support.server import HTTP_TIMEOUT, KilnProcess, start_kiln

SIGNALS = docs.page("signals.md")
CW_TARGET = "GraniteServiceVersion20100801"
CBOR_PATH = f"/service/{CW_TARGET}/operation/ListMetrics"


@pytest.fixture(scope="module")
def kiln(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    proc = start_kiln(tmp_path_factory.mktemp("hostile"))
    yield proc
    assert proc.stop() == 0, proc.logs()


@pytest.fixture(scope="module")
def keypair(kiln: KilnProcess) -> Keypair:
    return issue_keypair(kiln)


def sigv4(url: str, keypair: Keypair, service: str, body: bytes | str,
          headers: dict[str, str], *, sign_host: bool = True) -> httpx.Response:
    """A POST signed by botocore's SigV4Auth (``sign_host=False``: with ``host`` left out
    of the signed headers, which botocore itself never does)."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    class Signer(SigV4Auth):  # type: ignore[misc]
        def headers_to_sign(self, request: Any) -> Any:
            names = super().headers_to_sign(request)
            if not sign_host:
                del names["host"]
            return names

    request = AWSRequest("POST", url, data=body, headers=headers)
    Signer(Credentials(keypair.access, keypair.secret), service, "RegionOne").add_auth(request)
    return httpx.post(url, content=body, headers=dict(request.headers.items()),
                      timeout=HTTP_TIMEOUT)


def sigv2(url: str, keypair: Keypair, params: dict[str, str], *,
          timestamp: bool = True) -> httpx.Response:
    """A GET signed by botocore's SigV2 (``timestamp=False``: without ``Timestamp`` or
    ``Expires``, which AWS requires one of)."""
    import time

    from botocore.auth import ISO8601, SigV2Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    signed = {**params, "AWSAccessKeyId": keypair.access, "SignatureVersion": "2",
              "SignatureMethod": "HmacSHA256"}
    if timestamp:
        signed["Timestamp"] = time.strftime(ISO8601, time.gmtime())
    _, signed["Signature"] = SigV2Auth(Credentials(keypair.access, keypair.secret)
                                       ).calc_signature(AWSRequest("GET", url), signed)
    return httpx.get(url, params=signed, timeout=HTTP_TIMEOUT)


def aws_code(answer: httpx.Response) -> str:
    """The error code of an XML, JSON or CBOR error answer."""
    kind = answer.headers.get("content-type", "")
    if "cbor" in kind:
        import cbor2

        return str(cbor2.loads(answer.content)["__type"]).rsplit("#", 1)[-1]
    if "json" in kind:
        return str(answer.json()["__type"]).rsplit("#", 1)[-1]
    found = re.search(r"<Code>([^<]*)</Code>", answer.text)
    assert found, answer.text
    return found.group(1)


def assert_refused(answer: httpx.Response, status: int, code: str) -> None:
    assert (answer.status_code, aws_code(answer)) == (status, code), answer.text
    assert "Traceback" not in answer.text


FORM = {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"}
DOTS = "MetricData" + "." * 10000 + "x"
BIG_INDEX = "MetricData.member." + "7" * 5000 + ".MetricName"


@pytest.mark.parametrize(("what", "body", "headers", "path"), [
    ("key of 10,000 dots", urlencode({"Action": "ListMetrics", DOTS: "1"}), FORM, "/"),
    ("5,000-digit index", urlencode({"Action": "PutMetricData", BIG_INDEX: "m"}), FORM, "/"),
    ("JSON 100,000 deep", "[" * 100000, {"Content-Type": "application/x-amz-json-1.0",
                                         "X-Amz-Target": f"{CW_TARGET}.ListMetrics"}, "/"),
    ("CBOR 100,000 deep", b"\x81" * 100000 + b"\x00",
     {"Content-Type": "application/cbor", "Smithy-Protocol": "rpc-v2-cbor"}, CBOR_PATH),
])
def test_cloudwatch_refuses_malformed_bodies_signed_or_not(
        kiln: KilnProcess, keypair: Keypair, what: str, body: str | bytes,
        headers: dict[str, str], path: str) -> None:
    url = kiln.cloudwatch_url + path
    unsigned = httpx.post(url, content=body, headers=headers, timeout=HTTP_TIMEOUT)
    assert 400 <= unsigned.status_code < 500, (what, unsigned.status_code, unsigned.text)
    assert "Traceback" not in unsigned.text and aws_code(unsigned)
    signed = sigv4(url, keypair, "monitoring", body, headers)
    assert_refused(signed, 400, "InvalidParameterValue")


def test_cloudwatch_checks_the_signature_before_decoding(kiln: KilnProcess) -> None:
    # a body that is valid JSON, unsigned: refused for its signature, not read
    answer = httpx.post(kiln.cloudwatch_url + "/", content=b"{not json", headers={
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": f"{CW_TARGET}.ListMetrics"}, timeout=HTTP_TIMEOUT)
    assert_refused(answer, 400, "IncompleteSignature")


@pytest.mark.parametrize(("what", "params", "place"), [
    ("10,001 parameters", {f"p{i}": "v" for i in range(10001)}, "cannot be read"),
    ("a 300-character name", {"MetricData.member.1." + "N" * 280: "v"}, "longer than 256"),
    ("a 17-part name", {"MetricData." + "a." * 15 + "b": "v"}, "more than 16 parts"),
    ("a 10-digit index", {"MetricData.member.1234567890.MetricName": "m"}, "member index"),
])
def test_cloudwatch_query_bounds(kiln: KilnProcess, keypair: Keypair, what: str,
                                 params: dict[str, str], place: str) -> None:
    body = urlencode({"Action": "PutMetricData", "Version": "2010-08-01",
                      "Namespace": "n", **params})
    answer = sigv4(kiln.cloudwatch_url + "/", keypair, "monitoring", body, FORM)
    assert_refused(answer, 400, "InvalidParameterValue")
    assert place in answer.text, (what, answer.text)


def test_cloudwatch_json_nesting_bound(kiln: KilnProcess, keypair: Keypair) -> None:
    headers = {"Content-Type": "application/x-amz-json-1.0",
               "X-Amz-Target": f"{CW_TARGET}.ListMetrics"}
    deep: object = "x"
    for _ in range(16):   # the top object and 16 more: 17 levels
        deep = {"a": deep}
    answer = sigv4(kiln.cloudwatch_url + "/", keypair, "monitoring",
                   json.dumps({"Namespace": deep}), headers)
    assert_refused(answer, 400, "InvalidParameterValue")
    assert "deeper than 16" in answer.text
    shallow = sigv4(kiln.cloudwatch_url + "/", keypair, "monitoring",
                    json.dumps({"Namespace": "n"}), headers)
    assert shallow.status_code == 200, shallow.text


def test_sigv4_query_expiry_over_seven_days(kiln: KilnProcess) -> None:
    query = {"Action": "ListStacks", "X-Amz-Algorithm": "AWS4-HMAC-SHA256",
             "X-Amz-Credential": "AK/20260101/RegionOne/cloudformation/aws4_request",
             "X-Amz-Date": "20260101T000000Z", "X-Amz-Expires": "604801",
             "X-Amz-SignedHeaders": "host", "X-Amz-Signature": "00"}
    answer = httpx.get(kiln.cfn_url, params=query, timeout=HTTP_TIMEOUT)
    assert_refused(answer, 400, "IncompleteSignature")
    assert "604800" in answer.text


def test_cfn_refuses_a_huge_member_index(kiln: KilnProcess, keypair: Keypair) -> None:
    template = json.dumps({"AWSTemplateFormatVersion": "2010-09-09", "Resources": {}})
    for digits in (5000, 12):
        body = urlencode({"Action": "CreateStack", "StackName": f"idx{digits}",
                          "TemplateBody": template,
                          "Parameters.member." + "9" * digits + ".ParameterKey": "k",
                          "Parameters.member." + "9" * digits + ".ParameterValue": "v"})
        answer = sigv4(kiln.cfn_url, keypair, "cloudformation", body, FORM)
        assert_refused(answer, 400, "InvalidParameterValue")
        assert ("member index" if digits == 12 else "parameter name longer") in answer.text
    long_key = sigv4(kiln.cfn_url, keypair, "cloudformation",
                     urlencode({"Action": "ListStacks", "K" * 100000: "v"}), FORM)
    assert_refused(long_key, 400, "InvalidParameterValue")


def test_sigv2_needs_a_timestamp_or_expires(kiln: KilnProcess, keypair: Keypair) -> None:
    """A project's keypair (not one issued to a stack) must date every SigV2 request,
    DescribeStackResource included."""
    read = {"Action": "DescribeStackResource", "StackName": "nothing-here",
            "LogicalResourceId": "x"}
    for url, params in ((kiln.cfn_url, {"Action": "ListStacks"}), (kiln.cfn_url, read),
                        (kiln.cloudwatch_url + "/", {"Action": "ListMetrics"})):
        timed = sigv2(url, keypair, params)
        assert timed.status_code == 200 or aws_code(timed) == "ValidationError", timed.text
        bare = sigv2(url, keypair, params, timestamp=False)
        assert_refused(bare, 400, "MissingParameter")
        assert "Timestamp" in bare.text and "Expires" in bare.text


KEYED = {
    "AWSTemplateFormatVersion": "2010-09-09",
    "Resources": {
        "Policy": {"Type": "OS::Heat::AccessPolicy",
                   "Properties": {"AllowedResources": ["Server"]}},
        "User": {"Type": "AWS::IAM::User", "Properties": {"Policies": [{"Ref": "Policy"}]}},
        "Key": {"Type": "AWS::IAM::AccessKey", "Properties": {"UserName": {"Ref": "User"}}},
        "Server": {"Type": "OS::Heat::RandomString", "Metadata": {"greeting": "hi"}}},
    "Outputs": {"access": {"Value": {"Ref": "Key"}},
                "secret": {"Value": {"Fn::GetAtt": ["Key", "SecretAccessKey"]}}}}


def test_a_stack_key_may_read_metadata_without_a_timestamp(kiln: KilnProcess) -> None:
    """os-collect-config's cfn collector signs DescribeStackResource with keystoneclient's
    Ec2Signer, which adds no Timestamp (Heat accepts it): a keypair Kiln issued to the
    stack may read so; nothing else may be signed without a time."""
    heat = heat_client(kiln.endpoint("demo"))
    heat.stacks.create(stack_name="keyed", template=KEYED)
    stack = wait_for_stack_status(heat, "keyed")
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    out = {o["output_key"]: o["output_value"] for o in stack.outputs}
    key = Keypair(out["access"], out["secret"], "demo")
    read = {"Action": "DescribeStackResource", "StackName": "keyed",
            "LogicalResourceId": "Server"}
    answer = sigv2(kiln.cfn_url, key, read, timestamp=False)
    assert answer.status_code == 200, answer.text
    assert "greeting" in answer.text
    assert_refused(sigv2(kiln.cfn_url, key, {"Action": "DescribeStacks",
                                             "StackName": "keyed"}, timestamp=False),
                   400, "MissingParameter")
    heat.stacks.delete(stack.id)


def test_sigv4_must_sign_the_host(kiln: KilnProcess, keypair: Keypair) -> None:
    for url, service, body in ((kiln.cfn_url, "cloudformation", "Action=ListStacks"),
                               (kiln.cloudwatch_url + "/", "monitoring",
                                "Action=ListMetrics&Version=2010-08-01")):
        assert sigv4(url, keypair, service, body, FORM).status_code == 200
        hostless = sigv4(url, keypair, service, body, FORM, sign_host=False)
        assert_refused(hostless, 400, "IncompleteSignature")
        assert "host" in hostless.text


def test_absurd_dates_in_a_signature_are_a_4xx(kiln: KilnProcess) -> None:
    query = {"Action": "ListStacks", "X-Amz-Algorithm": "AWS4-HMAC-SHA256",
             "X-Amz-Credential": "AK/99991231/RegionOne/cloudformation/aws4_request",
             "X-Amz-Date": "99991231T235959Z", "X-Amz-Expires": "604800",
             "X-Amz-SignedHeaders": "host", "X-Amz-Signature": "00"}
    answer = httpx.get(kiln.cfn_url, params=query, timeout=HTTP_TIMEOUT)
    assert_refused(answer, 400, "IncompleteSignature")


# -- the wait-condition curl example of docs/signals.md, as written ----------------------------

AWS_WAIT = {
    "AWSTemplateFormatVersion": "2010-09-09",
    "Resources": {
        "Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"},
        "Wait": {"Type": "AWS::CloudFormation::WaitCondition",
                 "Properties": {"Handle": {"Ref": "Handle"}, "Timeout": 300}}},
    "Outputs": {"url": {"Value": {"Ref": "Handle"}},
                "data": {"Value": {"Fn::GetAtt": ["Wait", "Data"]}}},
}


def readme_curl() -> str:
    """The curl command of the signals table (docs/signals.md) (its AWS handle row)."""
    (found,) = re.findall(r"`(curl -X PUT --data-binary '[^`]*' URL)`", SIGNALS)
    return str(found)


@pytest.mark.skipif(subprocess.run(["which", "curl"], capture_output=True,
                                   check=False).returncode != 0, reason="no curl")
def test_readme_wait_condition_curl_example(kiln: KilnProcess) -> None:
    import time

    from heatclient.exc import HTTPNotFound

    heat = heat_client(kiln.endpoint("demo"))
    heat.stacks.create(stack_name="readmecurl", template=AWS_WAIT)
    deadline = time.monotonic() + 90
    while True:
        try:
            status = heat.resources.get("readmecurl", "Handle").resource_status
        except HTTPNotFound:
            status = "INIT"
        if status == "CREATE_COMPLETE":
            break
        assert time.monotonic() < deadline, status
        time.sleep(0.05)  # poll for the handle's create, bounded by the deadline
    url = {o["output_key"]: o["output_value"]
           for o in heat.stacks.get("readmecurl").outputs}["url"]
    command = readme_curl().replace(" URL", " " + shlex.quote(url))
    done = subprocess.run(["bash", "-c", command], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "<resource>Handle</resource>"
    stack = wait_for_stack_status(heat, "readmecurl")
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    data = {o["output_key"]: o["output_value"] for o in stack.outputs}["data"]
    assert json.loads(data) == {"1": "..."}
