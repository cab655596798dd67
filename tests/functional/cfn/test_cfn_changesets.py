"""boto3's CloudFormation client drives change sets on a real ``kiln serve``: create
(UPDATE and CREATE), describe with property-level changes, the waiter, execute exactly
once, list, delete, OBSOLETE after the stack changed, FAILED for a bad template, and
AWS's errors for the rest."""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.exceptions import ClientError, WaiterError

from tests.functional.cfn.test_cfn_boto3 import cfn, keypair, kiln, settle

TEMPLATE: dict[str, Any] = {
    "AWSTemplateFormatVersion": "2010-09-09",
    "Parameters": {
        "Length": {"Type": "Number", "Default": 8},
        "Secret": {"Type": "String", "NoEcho": "true", "Default": "s3cret-old"},
    },
    "Resources": {
        "Rand": {"Type": "OS::Heat::RandomString", "Properties": {"length": {"Ref": "Length"}}},
        "Note": {"Type": "OS::Heat::Value", "Properties": {"value": {"Ref": "Secret"}}},
        "Gone": {"Type": "OS::Heat::None"},
    },
}


def _changed(length: int = 12) -> dict[str, Any]:
    body = json.loads(json.dumps(TEMPLATE))
    body["Parameters"]["Length"]["Default"] = length
    del body["Resources"]["Gone"]
    body["Resources"]["Extra"] = {"Type": "OS::Heat::None"}
    body["Resources"]["Note"]["Properties"]["value"] = {"Fn::Join": ["-", [{"Ref": "Secret"}, "x"]]}
    return body


def wait_created(cfn: Any, name: str, stack: str) -> dict[str, Any]:
    waiter = cfn.get_waiter("change_set_create_complete")
    waiter.wait(ChangeSetName=name, StackName=stack, WaiterConfig={"Delay": 1, "MaxAttempts": 30})
    described: dict[str, Any] = cfn.describe_change_set(ChangeSetName=name, StackName=stack)
    return described


__all__ = ["cfn", "keypair", "kiln"]  # the fixtures, shared with test_cfn_boto3


def error(caught: pytest.ExceptionInfo[ClientError]) -> tuple[int, str, str]:
    response = caught.value.response
    return (
        response["ResponseMetadata"]["HTTPStatusCode"],
        response["Error"]["Code"],
        response["Error"]["Message"],
    )


def _stack(cfn: Any, name: str) -> None:
    cfn.create_stack(StackName=name, TemplateBody=json.dumps(TEMPLATE))
    assert settle(cfn, name)["StackStatus"] == "CREATE_COMPLETE"


def test_update_change_set_shows_then_executes_exactly(cfn: Any) -> None:
    _stack(cfn, "cs-upd")
    made = cfn.create_change_set(
        StackName="cs-upd",
        ChangeSetName="grow",
        TemplateBody=json.dumps(_changed()),
        Description="longer string",
        Parameters=[{"ParameterKey": "Secret", "UsePreviousValue": True}],
    )
    assert made["Id"].startswith("arn:") and made["StackId"].startswith("arn:")
    shown = wait_created(cfn, "grow", "cs-upd")
    assert (shown["Status"], shown["ExecutionStatus"]) == ("CREATE_COMPLETE", "AVAILABLE")
    assert shown["Description"] == "longer string"
    changes = {
        c["ResourceChange"]["LogicalResourceId"]: c["ResourceChange"] for c in shown["Changes"]
    }
    assert changes["Extra"]["Action"] == "Add"
    assert changes["Gone"]["Action"] == "Remove"
    assert changes["Gone"]["PhysicalResourceId"]
    rand = changes["Rand"]
    assert (rand["Action"], rand["Replacement"], rand["Scope"]) == (
        "Modify",
        "True",
        ["Properties"],
    )
    target = rand["Details"][0]["Target"]
    assert (target["Attribute"], target["Name"], target["RequiresRecreation"]) == (
        "Properties",
        "length",
        "Always",
    )
    assert (target["BeforeValue"], target["AfterValue"]) == ("8", "12")
    note = changes["Note"]["Details"][0]["Target"]
    assert note["BeforeValue"] == note["AfterValue"] == "******"
    assert "s3cret" not in json.dumps(shown, default=str)
    by_arn = cfn.describe_change_set(ChangeSetName="grow", StackName=made["StackId"])
    assert by_arn["ChangeSetId"] == made["Id"]
    listed = cfn.list_change_sets(StackName="cs-upd")["Summaries"]
    assert [(s["ChangeSetName"], s["ExecutionStatus"]) for s in listed] == [("grow", "AVAILABLE")]
    # executed by its ARN alone, as a second person would from a link
    cfn.execute_change_set(ChangeSetName=made["Id"])
    stack = settle(cfn, "cs-upd")
    assert stack["StackStatus"] == "UPDATE_COMPLETE"
    resources = {
        r["LogicalResourceId"]
        for r in cfn.list_stack_resources(StackName="cs-upd")["StackResourceSummaries"]
    }
    assert resources == {"Rand", "Note", "Extra"}
    after = cfn.describe_change_set(ChangeSetName="grow", StackName="cs-upd")
    assert after["ExecutionStatus"] == "EXECUTE_COMPLETE"
    with pytest.raises(ClientError) as twice:
        cfn.execute_change_set(ChangeSetName="grow", StackName="cs-upd")
    assert error(twice)[:2] == (400, "InvalidChangeSetStatus")


def test_change_set_of_a_changed_stack_is_obsolete(cfn: Any) -> None:
    _stack(cfn, "cs-obs")
    cfn.create_change_set(
        StackName="cs-obs", ChangeSetName="one", TemplateBody=json.dumps(_changed(10))
    )
    wait_created(cfn, "one", "cs-obs")
    cfn.update_stack(StackName="cs-obs", TemplateBody=json.dumps(_changed(20)))
    assert settle(cfn, "cs-obs")["StackStatus"] == "UPDATE_COMPLETE"
    shown = cfn.describe_change_set(ChangeSetName="one", StackName="cs-obs")
    assert shown["ExecutionStatus"] == "OBSOLETE"
    with pytest.raises(ClientError) as refused:
        cfn.execute_change_set(ChangeSetName="one", StackName="cs-obs")
    assert error(refused)[:2] == (400, "InvalidChangeSetStatus")
    params = {p["ParameterKey"]: p["ParameterValue"] for p in settle(cfn, "cs-obs")["Parameters"]}
    assert params["Length"] == "20"


def test_create_change_set_makes_the_stack_on_execute(cfn: Any) -> None:
    made = cfn.create_change_set(
        StackName="cs-new",
        ChangeSetName="first",
        ChangeSetType="CREATE",
        TemplateBody=json.dumps(TEMPLATE),
    )
    shown = wait_created(cfn, "first", "cs-new")
    (review,) = cfn.describe_stacks(StackName="cs-new")["Stacks"]
    assert (review["StackStatus"], review["StackId"]) == ("REVIEW_IN_PROGRESS", made["StackId"])
    assert sorted(c["ResourceChange"]["Action"] for c in shown["Changes"]) == ["Add"] * 3
    assert shown["StackId"] == made["StackId"]
    cfn.execute_change_set(ChangeSetName="first", StackName="cs-new")
    stack = settle(cfn, "cs-new")
    assert stack["StackStatus"] == "CREATE_COMPLETE"
    assert stack["StackId"] == made["StackId"]
    with pytest.raises(ClientError) as again:
        cfn.create_change_set(
            StackName="cs-new",
            ChangeSetName="second",
            ChangeSetType="CREATE",
            TemplateBody=json.dumps(TEMPLATE),
        )
    assert error(again)[:2] == (400, "ValidationError")


def test_a_failed_change_set_suggests_the_fix(cfn: Any) -> None:
    """The reason carries the did-you-mean Kiln gives on create and validate."""
    _stack(cfn, "cs-typo")
    bad = _changed()
    bad["Resources"]["Rand"]["Type"] = "OS::Heat::RandomStrin"
    cfn.create_change_set(StackName="cs-typo", ChangeSetName="typo", TemplateBody=json.dumps(bad))
    with pytest.raises(WaiterError):
        wait_created(cfn, "typo", "cs-typo")
    shown = cfn.describe_change_set(ChangeSetName="typo", StackName="cs-typo")
    assert shown["Status"] == "FAILED"
    assert "did you mean OS::Heat::RandomString?" in shown["StatusReason"], shown["StatusReason"]


def test_invalid_template_fails_the_change_set_not_the_request(cfn: Any) -> None:
    _stack(cfn, "cs-bad")
    bad = _changed()
    bad["Resources"]["Rand"]["Properties"]["length"] = {"Ref": "NoSuchParameter"}
    cfn.create_change_set(StackName="cs-bad", ChangeSetName="broken", TemplateBody=json.dumps(bad))
    with pytest.raises(WaiterError):
        wait_created(cfn, "broken", "cs-bad")
    shown = cfn.describe_change_set(ChangeSetName="broken", StackName="cs-bad")
    assert shown["Status"] == "FAILED"
    assert "NoSuchParameter" in shown["StatusReason"]
    assert shown["ExecutionStatus"] == "UNAVAILABLE"
    cfn.create_change_set(
        StackName="cs-bad", ChangeSetName="same", TemplateBody=json.dumps(TEMPLATE)
    )
    same = cfn.describe_change_set(ChangeSetName="same", StackName="cs-bad")
    assert same["Status"] == "FAILED" and "didn't contain changes" in same["StatusReason"]
    with pytest.raises(ClientError) as refused:
        cfn.execute_change_set(ChangeSetName="broken", StackName="cs-bad")
    assert error(refused)[:2] == (400, "InvalidChangeSetStatus")


def test_errors_a_user_meets(cfn: Any) -> None:
    _stack(cfn, "cs-err")
    with pytest.raises(ClientError) as missing:
        cfn.describe_change_set(ChangeSetName="nope", StackName="cs-err")
    assert error(missing)[:2] == (404, "ChangeSetNotFound")
    with pytest.raises(ClientError) as missing:
        cfn.execute_change_set(ChangeSetName="nope", StackName="cs-err")
    assert error(missing)[:2] == (404, "ChangeSetNotFound")
    with pytest.raises(ClientError) as no_stack:
        cfn.create_change_set(
            StackName="cs-none", ChangeSetName="x", TemplateBody=json.dumps(TEMPLATE)
        )
    assert error(no_stack)[:2] == (400, "ValidationError")
    with pytest.raises(ClientError) as bad_name:
        cfn.create_change_set(
            StackName="cs-err", ChangeSetName="1-bad", TemplateBody=json.dumps(TEMPLATE)
        )
    assert error(bad_name)[:2] == (400, "ValidationError")
    cfn.create_change_set(
        StackName="cs-err", ChangeSetName="dup", TemplateBody=json.dumps(_changed())
    )
    with pytest.raises(ClientError) as dup:
        cfn.create_change_set(
            StackName="cs-err", ChangeSetName="dup", TemplateBody=json.dumps(_changed())
        )
    assert error(dup)[:2] == (400, "AlreadyExistsException")
    cfn.delete_change_set(ChangeSetName="dup", StackName="cs-err")
    with pytest.raises(ClientError) as gone:
        cfn.describe_change_set(ChangeSetName="dup", StackName="cs-err")
    assert error(gone)[:2] == (404, "ChangeSetNotFound")
    # a deleted stack takes its change sets with it
    cfn.create_change_set(
        StackName="cs-err", ChangeSetName="pending", TemplateBody=json.dumps(_changed())
    )
    cfn.delete_stack(StackName="cs-err")
    waiter = cfn.get_waiter("stack_delete_complete")
    waiter.wait(StackName="cs-err", WaiterConfig={"Delay": 1, "MaxAttempts": 60})
    with pytest.raises(ClientError) as orphan:
        cfn.describe_change_set(ChangeSetName="pending", StackName="cs-err")
    assert error(orphan)[:2] == (404, "ChangeSetNotFound")


def test_hostile_input_is_a_4xx_never_a_5xx(cfn: Any) -> None:
    _stack(cfn, "cs-hostile")
    template = json.dumps(_changed())
    attempts: list[dict[str, Any]] = [
        {
            "StackName": "a" * 300,
            "ChangeSetName": "x",
            "ChangeSetType": "CREATE",
            "TemplateBody": template,
        },
        {
            "StackName": "bad name!",
            "ChangeSetName": "x",
            "ChangeSetType": "CREATE",
            "TemplateBody": template,
        },
        {"StackName": "cs-hostile", "ChangeSetName": "x" * 300, "TemplateBody": template},
        {
            "StackName": "cs-hostile",
            "ChangeSetName": "x",
            "ChangeSetType": "IMPORT",
            "TemplateBody": template,
        },
        {
            "StackName": "cs-hostile",
            "ChangeSetName": "x",
            "ChangeSetType": "DELETE",
            "TemplateBody": template,
        },
        {"StackName": "cs-hostile", "ChangeSetName": "x", "TemplateBody": "{not: [json"},
        {
            "StackName": "cs-hostile",
            "ChangeSetName": "x",
            "UsePreviousTemplate": True,
            "ChangeSetType": "CREATE",
        },
    ]
    for given in attempts:
        with pytest.raises(ClientError) as refused:
            cfn.create_change_set(**given)
        assert 400 <= error(refused)[0] < 500, (given, error(refused))
    for call in (
        lambda: cfn.describe_change_set(
            ChangeSetName="arn:aws:cloudformation:x:y:changeSet/a/" + "f" * 5000
        ),
        lambda: cfn.describe_change_set(ChangeSetName="nope"),
        lambda: cfn.execute_change_set(ChangeSetName="nope", StackName="no-such-stack"),
        lambda: cfn.delete_change_set(ChangeSetName="nope", StackName="cs-hostile"),
        lambda: cfn.list_change_sets(StackName="no-such-stack"),
    ):
        with pytest.raises(ClientError) as refused:
            call()
        assert 400 <= error(refused)[0] < 500, error(refused)
    # a template whose property cannot change in place is FAILED, with the reason
    frozen = json.loads(template)
    frozen["Resources"]["Rand"]["Type"] = "OS::Heat::None"
    cfn.create_change_set(
        StackName="cs-hostile", ChangeSetName="retype", TemplateBody=json.dumps(frozen)
    )
    shown = cfn.describe_change_set(ChangeSetName="retype", StackName="cs-hostile")
    assert shown["Status"] in ("CREATE_COMPLETE", "FAILED")


def test_a_stack_in_review_is_deleted_with_its_change_sets(cfn: Any) -> None:
    cfn.create_change_set(
        StackName="cs-review",
        ChangeSetName="maybe",
        ChangeSetType="CREATE",
        TemplateBody=json.dumps(TEMPLATE),
    )
    assert cfn.describe_stacks(StackName="cs-review")["Stacks"][0]["StackStatus"] == (
        "REVIEW_IN_PROGRESS"
    )
    cfn.delete_stack(StackName="cs-review")
    with pytest.raises(ClientError) as gone:
        cfn.describe_stacks(StackName="cs-review")
    assert error(gone)[:2] == (400, "ValidationError")
    with pytest.raises(ClientError) as gone:
        cfn.describe_change_set(ChangeSetName="maybe", StackName="cs-review")
    assert error(gone)[:2] == (404, "ChangeSetNotFound")
