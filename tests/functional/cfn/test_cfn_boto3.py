"""boto3's CloudFormation client drives a real ``kiln serve``'s CFN API end to end:
create, describe, update, delete, events, resources, template, validate, and AWS's errors
for what a user gets wrong. Requests are SigV4-signed with a keypair the ``kiln`` CLI
issued; the server checks every signature."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from tests.support.aws import Keypair, cfn_client, issue_keypair
from tests.support.server import HTTP_TIMEOUT, KilnProcess, start_kiln

TEMPLATE = {
    "AWSTemplateFormatVersion": "2010-09-09",
    "Description": "boto3 test",
    "Parameters": {"Length": {"Type": "Number", "Default": 8, "Description": "how long"},
                   "Secret": {"Type": "String", "NoEcho": "true", "Default": "x"}},
    "Resources": {"Rand": {"Type": "OS::Heat::RandomString",
                           "Properties": {"length": {"Ref": "Length"}},
                           "Metadata": {"role": "web", "ports": [80, 443]}}},
    "Outputs": {"Value": {"Value": {"Fn::GetAtt": ["Rand", "value"]},
                          "Description": "the string"}},
}


@pytest.fixture(scope="module")
def kiln(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    proc = start_kiln(tmp_path_factory.mktemp("cfn"))
    yield proc
    assert proc.stop() == 0, proc.logs()


@pytest.fixture(scope="module")
def keypair(kiln: KilnProcess) -> Keypair:
    return issue_keypair(kiln, "demo")


@pytest.fixture
def cfn(kiln: KilnProcess, keypair: Keypair) -> Any:
    return cfn_client(kiln, keypair)


def settle(cfn: Any, name: str, timeout: float = 60.0) -> dict[str, Any]:
    """Poll DescribeStacks until the stack's action is over (bounded by ``timeout``)."""
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        stack: dict[str, Any] = cfn.describe_stacks(StackName=name)["Stacks"][0]
        if not stack["StackStatus"].endswith("_IN_PROGRESS"):
            return stack
        if time.monotonic() > deadline:
            raise AssertionError(f"{name} still {stack['StackStatus']} after {timeout}s")
        time.sleep(delay)  # status poll with backoff, bounded by the deadline
        delay = min(delay * 2, 0.5)


def code(caught: pytest.ExceptionInfo[ClientError]) -> tuple[int, str, str]:
    error = caught.value.response
    return (error["ResponseMetadata"]["HTTPStatusCode"], error["Error"]["Code"],
            error["Error"]["Message"])


def test_stack_life_through_boto3(cfn: Any) -> None:
    created = cfn.create_stack(
        StackName="life", TemplateBody=json.dumps(TEMPLATE), TimeoutInMinutes=5,
        Parameters=[{"ParameterKey": "Length", "ParameterValue": "12"}],
        Tags=[{"Key": "team", "Value": "blue"}])
    stack_id = created["StackId"]
    assert stack_id.startswith("arn:openstack:heat::demo:stacks/life/")

    stack = settle(cfn, "life")
    assert stack["StackStatus"] == "CREATE_COMPLETE"
    assert stack["StackId"] == stack_id
    assert stack["Description"] == "boto3 test"
    assert stack["TimeoutInMinutes"] == 5
    params = {p["ParameterKey"]: p["ParameterValue"] for p in stack["Parameters"]}
    assert params["Length"] == "12"
    assert params["Secret"] == "******"
    (output,) = stack["Outputs"]
    assert output["OutputKey"] == "Value" and output["Description"] == "the string"
    assert len(output["OutputValue"]) == 12

    # the ARN names the stack as well as its name does
    assert cfn.describe_stacks(StackName=stack_id)["Stacks"][0]["StackName"] == "life"
    summaries = {s["StackName"]: s for s in cfn.list_stacks()["StackSummaries"]}
    assert summaries["life"]["StackStatus"] == "CREATE_COMPLETE"
    assert summaries["life"]["StackId"] == stack_id

    cfn.update_stack(StackName="life", TemplateBody=json.dumps(TEMPLATE),
                     Parameters=[{"ParameterKey": "Length", "ParameterValue": "20"}])
    updated = settle(cfn, "life")
    assert updated["StackStatus"] == "UPDATE_COMPLETE"
    assert "LastUpdatedTime" in updated
    assert len(updated["Outputs"][0]["OutputValue"]) == 20

    cfn.delete_stack(StackName="life")
    # boto3's own waiter: a deleted stack is AWS's ValidationError, its "deleted" answer
    cfn.get_waiter("stack_delete_complete").wait(
        StackName="life", WaiterConfig={"Delay": 1, "MaxAttempts": 60})
    assert not any(s["StackName"] == "life" for s in cfn.list_stacks()["StackSummaries"])
    with pytest.raises(ClientError) as caught:
        cfn.describe_stacks(StackName="life")
    assert code(caught) == (400, "ValidationError", "Stack with id life does not exist")


def test_resources_events_template(cfn: Any) -> None:
    cfn.create_stack(StackName="looks", TemplateBody=json.dumps(TEMPLATE))
    settle(cfn, "looks")

    detail = cfn.describe_stack_resource(StackName="looks",
                                         LogicalResourceId="Rand")["StackResourceDetail"]
    assert detail["ResourceType"] == "OS::Heat::RandomString"
    assert detail["ResourceStatus"] == "CREATE_COMPLETE"
    assert json.loads(detail["Metadata"]) == {"role": "web", "ports": [80, 443]}
    assert detail["PhysicalResourceId"]

    (listed,) = cfn.describe_stack_resources(StackName="looks")["StackResources"]
    assert listed["LogicalResourceId"] == "Rand"
    assert listed["PhysicalResourceId"] == detail["PhysicalResourceId"]
    (summary,) = cfn.list_stack_resources(StackName="looks")["StackResourceSummaries"]
    assert summary["ResourceStatus"] == "CREATE_COMPLETE"

    events = cfn.describe_stack_events(StackName="looks")["StackEvents"]
    rand = [(e["ResourceStatus"], e["ResourceType"]) for e in events
            if e["LogicalResourceId"] == "Rand"]
    assert ("CREATE_IN_PROGRESS", "OS::Heat::RandomString") in rand
    assert ("CREATE_COMPLETE", "OS::Heat::RandomString") in rand

    assert cfn.get_template(StackName="looks")["TemplateBody"] == TEMPLATE
    cfn.delete_stack(StackName="looks")


def test_resources_found_by_physical_id(cfn: Any, kiln: KilnProcess) -> None:
    """DescribeStackResources with PhysicalResourceId: the stack holding that resource,
    described whole (LogicalResourceId still narrows it), as Heat's CFN API does."""
    two = {**TEMPLATE, "Resources": {**TEMPLATE["Resources"],
                                     "Other": {"Type": "OS::Heat::RandomString"}}}
    cfn.create_stack(StackName="physical", TemplateBody=json.dumps(two))
    settle(cfn, "physical")
    rand = cfn.describe_stack_resource(StackName="physical", LogicalResourceId="Rand")[
        "StackResourceDetail"]

    found = cfn.describe_stack_resources(PhysicalResourceId=rand["PhysicalResourceId"])[
        "StackResources"]
    assert sorted(r["LogicalResourceId"] for r in found) == ["Other", "Rand"]
    assert {r["StackName"] for r in found} == {"physical"}
    assert {r["StackId"] for r in found} == {rand["StackId"]}
    (only,) = cfn.describe_stack_resources(PhysicalResourceId=rand["PhysicalResourceId"],
                                           LogicalResourceId="Other")["StackResources"]
    assert only["LogicalResourceId"] == "Other"

    with pytest.raises(ClientError) as caught:
        cfn.describe_stack_resources(PhysicalResourceId="no-such-physical-id")
    assert code(caught)[:2] == (400, "InvalidParameterValue")
    assert "no-such-physical-id" in code(caught)[2]
    # another project's resource is not found by its physical id
    other = cfn_client(kiln, issue_keypair(kiln, "someone-else"))
    with pytest.raises(ClientError) as caught:
        other.describe_stack_resources(PhysicalResourceId=rand["PhysicalResourceId"])
    assert code(caught)[:2] == (400, "InvalidParameterValue")
    with pytest.raises(ClientError) as caught:
        cfn.describe_stack_resources(PhysicalResourceId=rand["PhysicalResourceId"],
                                     StackName="physical")
    assert code(caught)[:2] == (400, "InvalidParameterCombination")


def test_validate_and_estimate(cfn: Any) -> None:
    valid = cfn.validate_template(TemplateBody=json.dumps(TEMPLATE))
    assert valid["Description"] == "boto3 test"
    params = {p["ParameterKey"]: p for p in valid["Parameters"]}
    assert params["Length"]["DefaultValue"] == "8"
    assert params["Length"]["Description"] == "how long"
    assert params["Secret"]["NoEcho"] is True
    assert cfn.estimate_template_cost(TemplateBody=json.dumps(TEMPLATE))["Url"] == \
        "http://en.wikipedia.org/wiki/Gratis"


def test_errors_a_user_meets(cfn: Any) -> None:
    with pytest.raises(ClientError) as caught:
        cfn.describe_stacks(StackName="nothing-here")
    assert code(caught) == (400, "ValidationError",
                            "Stack with id nothing-here does not exist")

    cfn.create_stack(StackName="twice", TemplateBody=json.dumps(TEMPLATE))
    with pytest.raises(ClientError) as caught:
        cfn.create_stack(StackName="twice", TemplateBody=json.dumps(TEMPLATE))
    assert code(caught)[:2] == (400, "AlreadyExists")

    with pytest.raises(ClientError) as caught:
        cfn.create_stack(StackName="none")
    assert code(caught) == (400, "MissingParameter", "A mandatory input parameter is missing:"
                            "TemplateBody or TemplateUrl were not given.")

    with pytest.raises(ClientError) as caught:
        cfn.create_stack(StackName="bad", TemplateBody="{: [")
    assert code(caught)[:2] == (400, "InvalidParameterValue")

    with pytest.raises(ClientError) as caught:
        cfn.create_stack(StackName="both", TemplateBody=json.dumps(TEMPLATE),
                         DisableRollback=True, OnFailure="DELETE")
    assert code(caught)[:2] == (400, "InvalidParameterCombination")

    with pytest.raises(ClientError) as caught:
        cfn.create_stack(StackName="badparam", TemplateBody=json.dumps(TEMPLATE),
                         Parameters=[{"ParameterKey": "Length", "ParameterValue": "lots"}])
    assert code(caught)[:2] == (400, "InvalidParameterValue")

    with pytest.raises(ClientError) as caught:
        cfn.cancel_update_stack(StackName="twice")
    assert code(caught)[:2] == (400, "InvalidParameterValue")
    cfn.delete_stack(StackName="twice")


def test_wrong_secret_and_unknown_key_are_refused(kiln: KilnProcess,
                                                  keypair: Keypair) -> None:
    with pytest.raises(ClientError) as caught:
        cfn_client(kiln, keypair, secret="not-the-secret").list_stacks()
    assert code(caught)[:2] == (403, "SignatureDoesNotMatch")
    stranger = Keypair("AKNOBODY0000000000", keypair.secret, "demo")
    with pytest.raises(ClientError) as caught:
        cfn_client(kiln, stranger).list_stacks()
    assert code(caught)[:2] == (403, "InvalidClientTokenId")


def _signed(kiln: KilnProcess, keypair: Keypair, body: str) -> httpx.Response:
    req = AWSRequest(method="POST", url=kiln.cfn_url, data=body, headers={
        "Content-Type": "application/x-www-form-urlencoded; charset=utf-8"})
    SigV4Auth(Credentials(keypair.access, keypair.secret), "cloudformation",
              "RegionOne").add_auth(req)
    prepared = req.prepare()
    return httpx.post(kiln.cfn_url, content=body, headers=dict(prepared.headers.items()),
                      timeout=HTTP_TIMEOUT)


def test_raw_answers_unknown_action_json_and_unsigned(kiln: KilnProcess,
                                                      keypair: Keypair) -> None:
    unknown = _signed(kiln, keypair, "Action=Frobnicate&Version=2010-05-15")
    assert unknown.status_code == 400
    assert unknown.text == ("<ErrorResponse><Error><Type>Sender</Type><Code>InvalidAction"
                            "</Code><Message>The action or operation requested is invalid"
                            "</Message></Error></ErrorResponse>")
    as_json = _signed(kiln, keypair, "Action=ListStacks&ContentType=JSON")
    assert as_json.headers["content-type"] == "application/json"
    assert "StackSummaries" in as_json.json()["ListStacksResponse"]["ListStacksResult"]
    unsigned = httpx.get(kiln.cfn_url, params={"Action": "ListStacks"}, timeout=HTTP_TIMEOUT)
    assert unsigned.status_code == 400
    assert "<Code>IncompleteSignature</Code>" in unsigned.text


def test_api_cfn_alone(tmp_path: Path) -> None:
    proc = start_kiln(tmp_path / "cfn-only", command="api-cfn")
    try:
        keypair = issue_keypair(proc, "other")
        assert cfn_client(proc, keypair).list_stacks()["StackSummaries"] == []
        native = httpx.get(f"{proc.url}/", timeout=HTTP_TIMEOUT)
        # one listener: the CFN API's root answers its version document
        assert native.json()["versions"][0]["links"][0]["href"] == proc.cfn_url
    finally:
        assert proc.stop() == 0
