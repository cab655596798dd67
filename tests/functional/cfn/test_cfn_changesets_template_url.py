"""Nested change sets of ``AWS::CloudFormation::Stack`` resources (issue 28), with boto3
on a real ``kiln serve`` that fetches each child template from its ``TemplateURL``, served
by the test over HTTP on 127.0.0.1 (allowed by ``template_url_allowed_hosts``): a child
change set for a modified and for an added nested stack, the root running the whole
tree, and ``OBSOLETE`` once a nested stack was updated alone (as ``OS::Heat::Stack``'s in
test_cfn_changesets_extra.py)."""

from __future__ import annotations

import http.server
import json
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.functional.cfn.test_cfn_boto3 import settle
from tests.functional.cfn.test_cfn_changesets import error, wait_created
from tests.support.aws import cfn_client, issue_keypair
from tests.support.local_http import local_http_server
from tests.support.server import KilnProcess, start_kiln


def _child(*, more: bool = False) -> dict[str, Any]:
    resources: dict[str, Any] = {
        "Inner": {"Type": "OS::Heat::RandomString", "Properties": {"length": {"Ref": "Length"}}}
    }
    if more:
        resources["More"] = {"Type": "OS::Heat::None"}
    return {"AWSTemplateFormatVersion": "2010-09-09",
            "Parameters": {"Length": {"Type": "Number"}},
            "Resources": resources,
            "Outputs": {"Value": {"Value": {"Fn::GetAtt": ["Inner", "value"]}}}}


#: what the test's template server answers, by path
TEMPLATES = {
    "/child-v1.json": _child(),
    "/child-v2.json": _child(more=True),
    "/extra.json": {"AWSTemplateFormatVersion": "2010-09-09",
                    "Resources": {"Flag": {"Type": "OS::Heat::None"}}},
}


class _Templates(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        found = TEMPLATES.get(self.path)
        body = json.dumps(found).encode() if found is not None else b"not found"
        self.send_response(200 if found is not None else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def templates() -> Iterator[str]:
    with local_http_server(_Templates) as url:
        yield url


@pytest.fixture(scope="module")
def kiln(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    proc = start_kiln(tmp_path_factory.mktemp("cfn-cs-url"),
                      options={"DEFAULT": {"template_url_allowed_hosts": "127.0.0.1"}})
    yield proc
    assert proc.stop() == 0, proc.logs()


@pytest.fixture(scope="module")
def cfn(kiln: KilnProcess) -> Any:
    return cfn_client(kiln, issue_keypair(kiln, "demo"))


def _parent(url: str, child: str, length: int, *, extra: bool = False) -> str:
    resources: dict[str, Any] = {
        "Kid": {"Type": "AWS::CloudFormation::Stack",
                "Properties": {"TemplateURL": f"{url}/{child}",
                               "Parameters": {"Length": str(length)}}},
        "Plain": {"Type": "OS::Heat::None"},
    }
    if extra:
        resources["Extra"] = {"Type": "AWS::CloudFormation::Stack",
                              "Properties": {"TemplateURL": f"{url}/extra.json"}}
    return json.dumps({"AWSTemplateFormatVersion": "2010-09-09", "Resources": resources,
                       "Outputs": {"Kid": {"Value": {"Fn::GetAtt": ["Kid", "Outputs.Value"]}}}})


def _changes(shown: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["ResourceChange"]["LogicalResourceId"]: c["ResourceChange"]
            for c in shown["Changes"]}


def test_template_url_nested_change_sets(cfn: Any, templates: str) -> None:
    cfn.create_stack(StackName="url-tree", TemplateBody=_parent(templates, "child-v1.json", 8))
    assert settle(cfn, "url-tree")["StackStatus"] == "CREATE_COMPLETE"
    kid_id = cfn.describe_stack_resource(StackName="url-tree", LogicalResourceId="Kid")[
        "StackResourceDetail"]["PhysicalResourceId"]
    grown = _parent(templates, "child-v2.json", 12, extra=True)

    # a plan of the whole tree, then the nested stack updated alone: OBSOLETE
    cfn.create_change_set(StackName="url-tree", ChangeSetName="stale", TemplateBody=grown,
                          IncludeNestedStacks=True)
    stale = _changes(wait_created(cfn, "stale", "url-tree"))
    assert "ChangeSetId" in stale["Kid"]
    cfn.update_stack(StackName=kid_id, TemplateBody=json.dumps(_child()),
                     Parameters=[{"ParameterKey": "Length", "ParameterValue": "9"}])
    assert settle(cfn, kid_id)["StackStatus"] == "UPDATE_COMPLETE"
    with pytest.raises(ClientError) as refused:
        cfn.execute_change_set(StackName="url-tree", ChangeSetName="stale")
    assert error(refused)[:2] == (400, "InvalidChangeSetStatus")
    assert "nested stack changed" in error(refused)[2]
    assert cfn.describe_change_set(StackName="url-tree", ChangeSetName="stale")[
        "ExecutionStatus"] == "OBSOLETE"
    assert cfn.describe_change_set(ChangeSetName=stale["Kid"]["ChangeSetId"])[
        "ExecutionStatus"] == "OBSOLETE"

    root_arn = cfn.create_change_set(StackName="url-tree", ChangeSetName="deep",
                                     TemplateBody=grown, IncludeNestedStacks=True)["Id"]
    root = wait_created(cfn, "deep", "url-tree")
    assert root["IncludeNestedStacks"] is True
    top = _changes(root)
    assert set(top) == {"Kid", "Extra"}
    assert (top["Kid"]["Action"], top["Kid"]["ResourceType"]) == (
        "Modify", "AWS::CloudFormation::Stack")
    assert {d["Target"]["Name"] for d in top["Kid"]["Details"]} == {"TemplateURL", "Parameters"}
    assert top["Extra"]["Action"] == "Add"

    child = cfn.describe_change_set(ChangeSetName=top["Kid"]["ChangeSetId"])
    assert (child["ParentChangeSetId"], child["RootChangeSetId"]) == (root_arn, root_arn)
    assert child["StackId"].endswith(kid_id)
    inner = _changes(child)
    assert inner["More"]["Action"] == "Add"
    assert inner["Inner"]["Action"] == "Modify"
    (length,) = [d["Target"] for d in inner["Inner"]["Details"]]
    assert (length["Name"], length["BeforeValue"], length["AfterValue"]) == ("length", "9", "12")
    added = cfn.describe_change_set(ChangeSetName=top["Extra"]["ChangeSetId"])
    assert added["RootChangeSetId"] == root_arn
    assert [(c["Action"], c["LogicalResourceId"]) for c in
            (c["ResourceChange"] for c in added["Changes"])] == [("Add", "Flag")]
    for refused_call in (cfn.execute_change_set, cfn.delete_change_set):
        with pytest.raises(ClientError) as alone:
            refused_call(ChangeSetName=top["Kid"]["ChangeSetId"])
        assert error(alone)[:2] == (400, "InvalidChangeSetStatus")

    cfn.execute_change_set(StackName="url-tree", ChangeSetName="deep")
    done = settle(cfn, "url-tree")
    assert done["StackStatus"] == "UPDATE_COMPLETE", done
    (output,) = done["Outputs"]
    assert len(output["OutputValue"]) == 12
    names = {r["LogicalResourceId"]
             for r in cfn.describe_stack_resources(StackName=kid_id)["StackResources"]}
    assert names == {"Inner", "More"}
    extra_id = cfn.describe_stack_resource(StackName="url-tree", LogicalResourceId="Extra")[
        "StackResourceDetail"]["PhysicalResourceId"]
    assert [r["LogicalResourceId"] for r in
            cfn.describe_stack_resources(StackName=extra_id)["StackResources"]] == ["Flag"]
    assert cfn.describe_change_set(ChangeSetName=top["Kid"]["ChangeSetId"])[
        "ExecutionStatus"] == "EXECUTE_COMPLETE"


def test_a_child_template_changed_at_its_url_makes_the_change_set_obsolete(
        cfn: Any, templates: str) -> None:
    """The nested stack's template is fetched again when the root runs: if what its URL
    serves changed since the change set showed the nested stack's changes, running it
    would do what it never showed, so it is OBSOLETE and nothing runs."""
    TEMPLATES["/moving.json"] = _child()
    cfn.create_stack(StackName="url-moving", TemplateBody=_parent(templates, "child-v1.json", 8))
    assert settle(cfn, "url-moving")["StackStatus"] == "CREATE_COMPLETE"
    kid_id = cfn.describe_stack_resource(StackName="url-moving", LogicalResourceId="Kid")[
        "StackResourceDetail"]["PhysicalResourceId"]
    cfn.create_change_set(StackName="url-moving", ChangeSetName="shown",
                          TemplateBody=_parent(templates, "moving.json", 10),
                          IncludeNestedStacks=True)
    (kid,) = _changes(wait_created(cfn, "shown", "url-moving")).values()
    assert set(_changes(cfn.describe_change_set(ChangeSetName=kid["ChangeSetId"]))) == {"Inner"}
    TEMPLATES["/moving.json"] = _child(more=True)  # "More" is not in the plan shown
    with pytest.raises(ClientError) as refused:
        cfn.execute_change_set(StackName="url-moving", ChangeSetName="shown")
    assert error(refused)[:2] == (400, "InvalidChangeSetStatus")
    assert "changes now differ" in error(refused)[2]
    assert cfn.describe_change_set(StackName="url-moving", ChangeSetName="shown")[
        "ExecutionStatus"] == "OBSOLETE"
    assert settle(cfn, "url-moving")["StackStatus"] == "CREATE_COMPLETE"
    assert [r["LogicalResourceId"] for r in
            cfn.describe_stack_resources(StackName=kid_id)["StackResources"]] == ["Inner"]
    # made again, it shows "More" and runs
    cfn.create_change_set(StackName="url-moving", ChangeSetName="again",
                          TemplateBody=_parent(templates, "moving.json", 10),
                          IncludeNestedStacks=True)
    (kid,) = [c for c in _changes(wait_created(cfn, "again", "url-moving")).values()]
    assert "More" in _changes(cfn.describe_change_set(ChangeSetName=kid["ChangeSetId"]))
    cfn.execute_change_set(StackName="url-moving", ChangeSetName="again")
    assert settle(cfn, "url-moving")["StackStatus"] == "UPDATE_COMPLETE"
    assert {r["LogicalResourceId"] for r in
            cfn.describe_stack_resources(StackName=kid_id)["StackResources"]} == {"Inner", "More"}


def test_a_create_change_set_is_obsolete_when_a_child_template_moved(
        cfn: Any, templates: str) -> None:
    TEMPLATES["/moving-new.json"] = _child()
    body = _parent(templates, "moving-new.json", 8)
    cfn.create_change_set(StackName="url-new", ChangeSetName="born", ChangeSetType="CREATE",
                          TemplateBody=body, IncludeNestedStacks=True)
    (kid, plain) = (_changes(wait_created(cfn, "born", "url-new"))[k] for k in ("Kid", "Plain"))
    assert "ChangeSetId" not in plain
    assert set(_changes(cfn.describe_change_set(ChangeSetName=kid["ChangeSetId"]))) == {"Inner"}
    TEMPLATES["/moving-new.json"] = _child(more=True)
    with pytest.raises(ClientError) as refused:
        cfn.execute_change_set(StackName="url-new", ChangeSetName="born")
    assert error(refused)[:2] == (400, "InvalidChangeSetStatus")
    with pytest.raises(ClientError) as missing:  # nothing was created
        cfn.describe_stacks(StackName="url-new")
    assert error(missing)[:2] == (400, "ValidationError")
    TEMPLATES["/moving-new.json"] = _child()  # as shown again: it runs
    cfn.create_change_set(StackName="url-new", ChangeSetName="reborn", ChangeSetType="CREATE",
                          TemplateBody=body, IncludeNestedStacks=True)
    wait_created(cfn, "reborn", "url-new")
    cfn.execute_change_set(StackName="url-new", ChangeSetName="reborn")
    assert settle(cfn, "url-new")["StackStatus"] == "CREATE_COMPLETE"
