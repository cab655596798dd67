"""boto3's CloudFormation client on a real ``kiln serve``: a stack in review among
ListStacks and DescribeStacks, IMPORT change sets adopting existing objects, and
DescribeChangeSetHooks."""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.functional.cfn.test_cfn_boto3 import cfn, keypair, kiln, settle
from tests.functional.cfn.test_cfn_changesets import TEMPLATE, error, wait_created

__all__ = ["cfn", "keypair", "kiln"]  # the fixtures, shared with test_cfn_boto3


def test_a_stack_in_review_is_listed_as_aws_lists_it(cfn: Any) -> None:
    made = cfn.create_change_set(
        StackName="cs-listed",
        ChangeSetName="pending",
        ChangeSetType="CREATE",
        TemplateBody=json.dumps(TEMPLATE),
    )
    wait_created(cfn, "pending", "cs-listed")
    cfn.create_stack(StackName="cs-made", TemplateBody=json.dumps(TEMPLATE))
    settle(cfn, "cs-made")

    listed = {s["StackName"]: s for s in cfn.list_stacks()["StackSummaries"]}
    assert listed["cs-listed"]["StackStatus"] == "REVIEW_IN_PROGRESS"
    assert listed["cs-listed"]["StackId"] == made["StackId"]
    assert listed["cs-made"]["StackStatus"] == "CREATE_COMPLETE"
    only = cfn.list_stacks(StackStatusFilter=["REVIEW_IN_PROGRESS"])["StackSummaries"]
    assert [s["StackName"] for s in only] == ["cs-listed"]
    done = cfn.list_stacks(StackStatusFilter=["CREATE_COMPLETE"])["StackSummaries"]
    assert "cs-listed" not in {s["StackName"] for s in done}
    described = {s["StackName"]: s for s in cfn.describe_stacks()["Stacks"]}
    assert described["cs-listed"]["StackStatus"] == "REVIEW_IN_PROGRESS"
    assert described["cs-made"]["StackStatus"] == "CREATE_COMPLETE"
    paginated = cfn.get_paginator("list_stacks").paginate(StackStatusFilter=["REVIEW_IN_PROGRESS"])
    assert [s["StackName"] for page in paginated for s in page["StackSummaries"]] == ["cs-listed"]

    cfn.execute_change_set(ChangeSetName="pending", StackName="cs-listed")
    assert settle(cfn, "cs-listed")["StackStatus"] == "CREATE_COMPLETE"
    statuses = [
        s["StackStatus"]
        for s in cfn.list_stacks()["StackSummaries"]
        if s["StackName"] == "cs-listed"
    ]
    assert statuses == ["CREATE_COMPLETE"]
    assert cfn.list_stacks(StackStatusFilter=["REVIEW_IN_PROGRESS"])["StackSummaries"] == []


def _kept(*names: str) -> dict[str, Any]:
    """A template of OS::Heat::None resources kept on delete (AWS asks a DeletionPolicy
    of every resource to import)."""
    return {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Resources": {n: {"Type": "OS::Heat::None", "DeletionPolicy": "Retain"} for n in names},
    }


def _to_import(name: str, ident: str) -> dict[str, Any]:
    return {
        "ResourceType": "OS::Heat::None",
        "LogicalResourceId": name,
        "ResourceIdentifier": {"Id": ident},
    }


def test_import_into_a_new_stack_adopts_the_objects(cfn: Any) -> None:
    made = cfn.create_change_set(
        StackName="cs-imp-new",
        ChangeSetName="adopt",
        ChangeSetType="IMPORT",
        TemplateBody=json.dumps(_kept("Old")),
        ResourcesToImport=[_to_import("Old", "obj-1234")],
    )
    shown = wait_created(cfn, "adopt", "cs-imp-new")
    assert (shown["Status"], shown["ExecutionStatus"]) == ("CREATE_COMPLETE", "AVAILABLE")
    (change,) = [c["ResourceChange"] for c in shown["Changes"]]
    assert (change["Action"], change["LogicalResourceId"], change["PhysicalResourceId"]) == (
        "Import", "Old", "obj-1234"
    )
    review = cfn.describe_stacks(StackName="cs-imp-new")["Stacks"][0]
    assert review["StackStatus"] == "REVIEW_IN_PROGRESS"
    cfn.execute_change_set(ChangeSetName="adopt", StackName="cs-imp-new")
    stack = settle(cfn, "cs-imp-new")
    assert (stack["StackStatus"], stack["StackId"]) == ("CREATE_COMPLETE", made["StackId"])
    (res,) = cfn.describe_stack_resources(StackName="cs-imp-new")["StackResources"]
    assert (res["LogicalResourceId"], res["PhysicalResourceId"]) == ("Old", "obj-1234")


def test_import_into_an_existing_stack_changes_nothing_else(cfn: Any) -> None:
    cfn.create_stack(StackName="cs-imp-old", TemplateBody=json.dumps(_kept("Keep")))
    assert settle(cfn, "cs-imp-old")["StackStatus"] == "CREATE_COMPLETE"
    cfn.create_change_set(
        StackName="cs-imp-old",
        ChangeSetName="take",
        ChangeSetType="IMPORT",
        TemplateBody=json.dumps(_kept("Keep", "Taken")),
        ResourcesToImport=[_to_import("Taken", "obj-5678")],
    )
    shown = wait_created(cfn, "take", "cs-imp-old")
    assert [
        (c["ResourceChange"]["Action"], c["ResourceChange"]["LogicalResourceId"])
        for c in shown["Changes"]
    ] == [("Import", "Taken")]
    cfn.execute_change_set(ChangeSetName="take", StackName="cs-imp-old")
    assert settle(cfn, "cs-imp-old")["StackStatus"] == "UPDATE_COMPLETE"
    found = {
        r["LogicalResourceId"]: r["PhysicalResourceId"]
        for r in cfn.describe_stack_resources(StackName="cs-imp-old")["StackResources"]
    }
    assert found["Taken"] == "obj-5678" and set(found) == {"Keep", "Taken"}
    assert cfn.describe_change_set(ChangeSetName="take", StackName="cs-imp-old")[
        "ExecutionStatus"
    ] == "EXECUTE_COMPLETE"
    # the stored template names the object (Kiln's mark, which a user's CFN template
    # never carries: Heat ignores the key there); a later update is an ordinary one, and
    # the imported resource stays the stack's, as in CloudFormation
    stored = cfn.get_template(StackName="cs-imp-old")["TemplateBody"]
    assert stored["Resources"]["Taken"]["ExternalId"] == "obj-5678"
    cfn.update_stack(StackName="cs-imp-old",
                     TemplateBody=json.dumps(_kept("Keep", "Taken", "Added")))
    assert settle(cfn, "cs-imp-old")["StackStatus"] == "UPDATE_COMPLETE"
    found = {
        r["LogicalResourceId"]: r["PhysicalResourceId"]
        for r in cfn.describe_stack_resources(StackName="cs-imp-old")["StackResources"]
    }
    assert found["Taken"] == "obj-5678" and set(found) == {"Keep", "Taken", "Added"}
    stored = cfn.get_template(StackName="cs-imp-old")["TemplateBody"]
    assert "ExternalId" not in stored["Resources"]["Taken"]


@pytest.mark.parametrize(
    ("template", "imports", "says"),
    [
        (_kept("A"), [_to_import("Nope", "x")], "missing from the template"),
        (
            {"Resources": {"A": {"Type": "OS::Heat::None"}}},
            [_to_import("A", "x")],
            "The following resources to import [A] must have DeletionPolicy",
        ),
        (_kept("A", "B"), [_to_import("A", "x")], "not in ResourcesToImport"),
        (_kept("A"), [{**_to_import("A", "x"), "ResourceType": "OS::Heat::Value"}], "ResourceType"),
        (_kept("A"), [], "ResourcesToImport must be given"),
    ],
)
def test_import_refusals_are_validation_errors(
    cfn: Any, template: dict[str, Any], imports: list[dict[str, Any]], says: str
) -> None:
    with pytest.raises(ClientError) as refused:
        cfn.create_change_set(
            StackName="cs-imp-bad",
            ChangeSetName="bad",
            ChangeSetType="IMPORT",
            TemplateBody=json.dumps(template),
            **({"ResourcesToImport": imports} if imports else {}),
        )
    status, code, message = error(refused)
    assert (status, code) == (400, "ValidationError") and says in message


def test_import_into_an_existing_stack_refuses_other_changes(cfn: Any) -> None:
    cfn.create_stack(StackName="cs-imp-mix", TemplateBody=json.dumps(_kept("Keep")))
    settle(cfn, "cs-imp-mix")
    for template, imports, says in [
        (_kept("Keep", "New", "Also"), [_to_import("New", "o-1")], "cannot modify or add"),
        (_kept("Keep"), [_to_import("Keep", "o-2")], "already exist in the stack"),
    ]:
        with pytest.raises(ClientError) as refused:
            cfn.create_change_set(
                StackName="cs-imp-mix",
                ChangeSetName="mixed",
                ChangeSetType="IMPORT",
                TemplateBody=json.dumps(template),
                ResourcesToImport=imports,
            )
        status, code, message = error(refused)
        assert (status, code) == (400, "ValidationError") and says in message


def _child(length: int, extra: bool) -> str:
    resources: dict[str, Any] = {
        "Inner": {"type": "OS::Heat::RandomString", "properties": {"length": length}}
    }
    if extra:
        resources["More"] = {"type": "OS::Heat::None"}
    return json.dumps({"heat_template_version": "2018-08-31", "resources": resources})


def _parent(length: int, extra: bool = False) -> dict[str, Any]:
    return {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Resources": {
            "Kid": {"Type": "OS::Heat::Stack", "Properties": {"template": _child(length, extra)}},
            "Plain": {"Type": "OS::Heat::None"},
        },
    }


def test_nested_change_sets_show_the_child_and_run_from_the_root(cfn: Any) -> None:
    cfn.create_stack(StackName="cs-nest", TemplateBody=json.dumps(_parent(8)))
    assert settle(cfn, "cs-nest")["StackStatus"] == "CREATE_COMPLETE"
    kid_id = cfn.describe_stack_resource(StackName="cs-nest", LogicalResourceId="Kid")[
        "StackResourceDetail"
    ]["PhysicalResourceId"]
    root_arn = cfn.create_change_set(
        StackName="cs-nest",
        ChangeSetName="deep",
        TemplateBody=json.dumps(_parent(12, extra=True)),
        IncludeNestedStacks=True,
    )["Id"]
    root = wait_created(cfn, "deep", "cs-nest")
    assert root["IncludeNestedStacks"] is True
    assert "ParentChangeSetId" not in root and "RootChangeSetId" not in root
    (kid,) = [c["ResourceChange"] for c in root["Changes"]]
    assert (kid["LogicalResourceId"], kid["Action"]) == ("Kid", "Modify")
    child_arn = kid["ChangeSetId"]
    assert child_arn.startswith("arn:") and child_arn != root_arn

    child = cfn.describe_change_set(ChangeSetName=child_arn)
    assert (child["ParentChangeSetId"], child["RootChangeSetId"]) == (root_arn, root_arn)
    assert child["StackId"].endswith(kid_id)
    inner = {
        c["ResourceChange"]["LogicalResourceId"]: c["ResourceChange"] for c in child["Changes"]
    }
    assert inner["More"]["Action"] == "Add"
    assert inner["Inner"]["Action"] == "Modify"
    assert "length" in {d["Target"]["Name"] for d in inner["Inner"]["Details"]}
    assert child["ExecutionStatus"] == "AVAILABLE"

    for refused_call in (cfn.execute_change_set, cfn.delete_change_set):
        with pytest.raises(ClientError) as refused:
            refused_call(ChangeSetName=child_arn)
        assert error(refused)[:2] == (400, "InvalidChangeSetStatus")

    cfn.execute_change_set(ChangeSetName="deep", StackName="cs-nest")
    assert settle(cfn, "cs-nest")["StackStatus"] == "UPDATE_COMPLETE"
    names = {
        r["LogicalResourceId"]
        for r in cfn.describe_stack_resources(StackName=kid_id)["StackResources"]
    }
    assert names == {"Inner", "More"}
    assert cfn.describe_change_set(ChangeSetName=child_arn)["ExecutionStatus"] == (
        "EXECUTE_COMPLETE"
    )


def test_deleting_the_root_change_set_deletes_its_nested_ones(cfn: Any) -> None:
    cfn.create_stack(StackName="cs-nest-del", TemplateBody=json.dumps(_parent(8)))
    settle(cfn, "cs-nest-del")
    cfn.create_change_set(
        StackName="cs-nest-del",
        ChangeSetName="drop",
        TemplateBody=json.dumps(_parent(9)),
        IncludeNestedStacks=True,
    )
    (kid,) = [c["ResourceChange"] for c in wait_created(cfn, "drop", "cs-nest-del")["Changes"]]
    cfn.delete_change_set(ChangeSetName="drop", StackName="cs-nest-del")
    with pytest.raises(ClientError) as gone:
        cfn.describe_change_set(ChangeSetName=kid["ChangeSetId"])
    assert error(gone)[:2] == (404, "ChangeSetNotFound")


def test_without_include_nested_stacks_no_child_change_set(cfn: Any) -> None:
    cfn.create_stack(StackName="cs-nest-no", TemplateBody=json.dumps(_parent(8)))
    settle(cfn, "cs-nest-no")
    cfn.create_change_set(
        StackName="cs-nest-no", ChangeSetName="flat", TemplateBody=json.dumps(_parent(10))
    )
    shown = wait_created(cfn, "flat", "cs-nest-no")
    assert shown["IncludeNestedStacks"] is False
    assert all("ChangeSetId" not in c["ResourceChange"] for c in shown["Changes"])


def test_a_create_change_set_with_nested_stacks_shows_their_resources(cfn: Any) -> None:
    root_arn = cfn.create_change_set(
        StackName="cs-nest-new",
        ChangeSetName="born",
        ChangeSetType="CREATE",
        TemplateBody=json.dumps(_parent(8, extra=True)),
        IncludeNestedStacks=True,
    )["Id"]
    root = wait_created(cfn, "born", "cs-nest-new")
    kid = {c["ResourceChange"]["LogicalResourceId"]: c["ResourceChange"] for c in root["Changes"]}
    assert "ChangeSetId" not in kid["Plain"]
    child = cfn.describe_change_set(ChangeSetName=kid["Kid"]["ChangeSetId"])
    assert child["RootChangeSetId"] == root_arn
    assert sorted(
        (c["ResourceChange"]["Action"], c["ResourceChange"]["LogicalResourceId"])
        for c in child["Changes"]
    ) == [("Add", "Inner"), ("Add", "More")]
    review = cfn.list_stacks(StackStatusFilter=["REVIEW_IN_PROGRESS"])["StackSummaries"]
    assert [s["StackName"] for s in review] == ["cs-nest-new"]
    cfn.execute_change_set(ChangeSetName=root_arn)
    assert settle(cfn, "cs-nest-new")["StackStatus"] == "CREATE_COMPLETE"


def test_hooks_are_unavailable_and_a_retried_execute_with_its_token_succeeds(cfn: Any) -> None:
    cfn.create_stack(StackName="cs-hooks", TemplateBody=json.dumps(_kept("A")))
    settle(cfn, "cs-hooks")
    arn = cfn.create_change_set(
        StackName="cs-hooks", ChangeSetName="grow", TemplateBody=json.dumps(_kept("A", "B"))
    )["Id"]
    wait_created(cfn, "grow", "cs-hooks")
    hooks = cfn.describe_change_set_hooks(ChangeSetName="grow", StackName="cs-hooks")
    assert (hooks["Hooks"], hooks["Status"], hooks["ChangeSetId"]) == ([], "UNAVAILABLE", arn)
    assert hooks["StackName"] == "cs-hooks"
    with pytest.raises(ClientError) as unknown:
        cfn.describe_change_set_hooks(ChangeSetName="nope", StackName="cs-hooks")
    assert error(unknown)[:2] == (404, "ChangeSetNotFound")

    cfn.execute_change_set(ChangeSetName=arn, ClientRequestToken="tok-1")
    cfn.execute_change_set(ChangeSetName=arn, ClientRequestToken="tok-1")  # a retry
    assert settle(cfn, "cs-hooks")["StackStatus"] == "UPDATE_COMPLETE"
    for retry in ({"ClientRequestToken": "tok-2"}, {}):
        with pytest.raises(ClientError) as again:
            cfn.execute_change_set(ChangeSetName=arn, **retry)
        assert error(again)[:2] == (400, "InvalidChangeSetStatus")
    events = cfn.describe_stack_events(StackName="cs-hooks")["StackEvents"]
    updates = [e for e in events if e["LogicalResourceId"] == "cs-hooks"
               and e["ResourceStatus"] == "UPDATE_IN_PROGRESS"]
    assert len(updates) == 1
