"""Drift detection through the real clients, without a cloud: boto3's CloudFormation
client (DetectStackDrift, DescribeStackDriftDetectionStatus, DescribeStackResourceDrifts,
DetectStackResourceDrift, DriftInformation on the describe actions), the native routes
over httpx, and ``kiln stack drift`` as a subprocess, against a real ``kiln serve``.

Every type here lives in Kiln alone (nothing outside can change a random string), so a
detection finds the stack IN_SYNC with its resources NOT_CHECKED; nested stacks are
walked (unlike CloudFormation) and listed under their own StackId. The cloud tests
(tests/cloud/test_drift_cloud.py) make real drift."""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from botocore.exceptions import ClientError

from tests.functional.cfn.test_cfn_boto3 import cfn, keypair, kiln
from tests.support.server import HTTP_TIMEOUT, KilnProcess, clean_env, kiln_command

__all__ = ["cfn", "keypair", "kiln"]  # the fixtures, shared with test_cfn_boto3

CHILD = {"heat_template_version": "2018-08-31",
         "resources": {"inner": {"type": "OS::Heat::RandomString",
                                 "properties": {"length": 6}}}}
TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "rand": {"type": "OS::Heat::RandomString", "properties": {"length": 8}},
        "child": {"type": "OS::Heat::Stack",
                  "properties": {"template": json.dumps(CHILD)}},
    },
}
WAITING = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "handle": {"type": "OS::Heat::WaitConditionHandle"},
        "wait": {"type": "OS::Heat::WaitCondition",
                 "properties": {"handle": {"get_resource": "handle"}, "timeout": 600}},
    },
}
DEADLINE = 60.0


def until(check: Any, what: str, timeout: float = DEADLINE) -> Any:
    """Poll *check* (an API read) until it answers something, within *timeout*."""
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout}s")
        time.sleep(delay)  # the API's own way to follow an action: poll its status
        delay = min(delay * 2, 0.5)


def created(cfn: Any, name: str, template: dict[str, Any]) -> str:
    stack_id: str = cfn.create_stack(StackName=name,
                                     TemplateBody=json.dumps(template))["StackId"]
    stack = until(lambda: next((s for s in cfn.describe_stacks(StackName=name)["Stacks"]
                                if not s["StackStatus"].endswith("IN_PROGRESS")), None),
                  f"{name} created")
    assert stack["StackStatus"] == "CREATE_COMPLETE", stack
    return stack_id


def detected(cfn: Any, name: str, timeout: float = DEADLINE) -> dict[str, Any]:
    """DetectStackDrift, followed with DescribeStackDriftDetectionStatus to its end."""
    detection = cfn.detect_stack_drift(StackName=name)["StackDriftDetectionId"]
    return until(lambda: next(
        (s for s in [cfn.describe_stack_drift_detection_status(
            StackDriftDetectionId=detection)]
         if s["DetectionStatus"] != "DETECTION_IN_PROGRESS"), None), "the detection",
        timeout)


def error(caught: pytest.ExceptionInfo[ClientError]) -> tuple[int, str, str]:
    found = caught.value.response
    return (found["ResponseMetadata"]["HTTPStatusCode"], found["Error"]["Code"],
            found["Error"]["Message"])


def test_a_stack_of_unchecked_types_is_in_sync_nested_stacks_included(cfn: Any) -> None:
    name = f"drift-{uuid.uuid4().hex[:8]}"
    stack_id = created(cfn, name, TEMPLATE)
    before = cfn.describe_stacks(StackName=name)["Stacks"][0]["DriftInformation"]
    assert before == {"StackDriftStatus": "NOT_CHECKED"}

    status = detected(cfn, name)
    assert status["DetectionStatus"] == "DETECTION_COMPLETE"
    assert status["StackDriftStatus"] == "IN_SYNC"
    assert status["DriftedStackResourceCount"] == 0
    assert status["StackId"] == stack_id
    assert status["Timestamp"].year >= 2024

    drifts = cfn.describe_stack_resource_drifts(StackName=name)["StackResourceDrifts"]
    by_name = {d["LogicalResourceId"]: d for d in drifts}
    assert set(by_name) == {"rand", "child", "inner"}
    assert by_name["rand"]["StackResourceDriftStatus"] == "NOT_CHECKED"
    assert by_name["rand"]["StackId"] == stack_id
    assert by_name["child"]["StackResourceDriftStatus"] == "IN_SYNC"
    inner = by_name["inner"]
    assert inner["StackResourceDriftStatus"] == "NOT_CHECKED"
    assert inner["StackId"] != stack_id and f"/{name}-child-" in inner["StackId"]
    assert "PropertyDifferences" not in inner

    after = cfn.describe_stacks(StackName=name)["Stacks"][0]["DriftInformation"]
    assert after["StackDriftStatus"] == "IN_SYNC"
    listed = {s["StackName"]: s["DriftInformation"]
              for s in cfn.list_stacks()["StackSummaries"]}
    assert listed[name] == after
    assert after["LastCheckTimestamp"] == status["Timestamp"]
    resources = cfn.describe_stack_resources(StackName=name)["StackResources"]
    infos = {r["LogicalResourceId"]: r["DriftInformation"] for r in resources}
    assert infos["rand"]["StackResourceDriftStatus"] == "NOT_CHECKED"
    assert infos["child"]["StackResourceDriftStatus"] == "IN_SYNC"
    summaries = cfn.list_stack_resources(StackName=name)["StackResourceSummaries"]
    assert {s["DriftInformation"]["StackResourceDriftStatus"] for s in summaries} == {
        "NOT_CHECKED", "IN_SYNC"}
    one = cfn.describe_stack_resource(StackName=name, LogicalResourceId="child")
    assert one["StackResourceDetail"]["DriftInformation"]["StackResourceDriftStatus"] == \
        "IN_SYNC"

    filtered = cfn.describe_stack_resource_drifts(
        StackName=name, StackResourceDriftStatusFilters=["IN_SYNC"])["StackResourceDrifts"]
    assert [d["LogicalResourceId"] for d in filtered] == ["child"]
    page = cfn.describe_stack_resource_drifts(StackName=name, MaxResults=2)
    assert len(page["StackResourceDrifts"]) == 2
    rest = cfn.describe_stack_resource_drifts(StackName=name, MaxResults=2,
                                              NextToken=page["NextToken"])
    assert len(rest["StackResourceDrifts"]) == 1 and "NextToken" not in rest

    single = cfn.detect_stack_resource_drift(StackName=name, LogicalResourceId="rand")
    assert single["StackResourceDrift"]["StackResourceDriftStatus"] == "NOT_CHECKED"
    assert single["StackResourceDrift"]["LogicalResourceId"] == "rand"


def test_aws_errors_for_what_a_user_gets_wrong(cfn: Any) -> None:
    with pytest.raises(ClientError) as caught:
        cfn.detect_stack_drift(StackName="no-such-stack")
    assert error(caught) == (400, "ValidationError", "Stack with id no-such-stack does not exist")
    with pytest.raises(ClientError) as caught:
        cfn.describe_stack_drift_detection_status(StackDriftDetectionId=str(uuid.uuid4()))
    assert error(caught)[:2] == (400, "ValidationError")
    with pytest.raises(ClientError) as caught:
        cfn.describe_stack_resource_drifts(StackName="no-such-stack")
    assert error(caught)[:2] == (400, "ValidationError")

    name = f"drift-{uuid.uuid4().hex[:8]}"
    created(cfn, name, TEMPLATE)
    with pytest.raises(ClientError) as caught:
        cfn.detect_stack_resource_drift(StackName=name, LogicalResourceId="nothere")
    assert error(caught) == (400, "ValidationError",
                             f"Resource nothere does not exist for stack {name}")
    with pytest.raises(ClientError) as caught:
        cfn.describe_stack_resource_drifts(StackName=name,
                                           StackResourceDriftStatusFilters=["WRONG"])
    assert error(caught)[:2] == (400, "ValidationError")


def test_a_stack_in_progress_is_refused(cfn: Any) -> None:
    name = f"drift-{uuid.uuid4().hex[:8]}"
    cfn.create_stack(StackName=name, TemplateBody=json.dumps(WAITING))
    assert cfn.describe_stacks(StackName=name)["Stacks"][0]["StackStatus"] == \
        "CREATE_IN_PROGRESS"
    with pytest.raises(ClientError) as caught:
        cfn.detect_stack_drift(StackName=name)
    status, code, message = error(caught)
    assert (status, code) == (400, "ValidationError")
    assert "in progress" in message
    cfn.delete_stack(StackName=name)


def test_native_routes_and_the_kiln_cli(kiln: KilnProcess, cfn: Any, tmp_path: Path) -> None:
    name = f"drift-{uuid.uuid4().hex[:8]}"
    stack_id = created(cfn, name, TEMPLATE).rsplit("/", 1)[1]
    base = f"{kiln.endpoint('demo')}/stacks/{name}/{stack_id}"
    with httpx.Client(timeout=HTTP_TIMEOUT) as http:
        never = http.get(f"{base}/drift")
        assert never.status_code == 200
        assert never.json()["drift"]["stack_drift_status"] == "NOT_CHECKED"
        started = http.post(f"{base}/drift")
        assert started.status_code == 202, started.text
        run = started.json()["drift"]
        assert run["detection_status"] in ("DETECTION_IN_PROGRESS", "DETECTION_COMPLETE")
        done = until(lambda: next(
            (d for d in [http.get(f"{base}/drift",
                                  params={"detection_id": run["detection_id"]}).json()["drift"]]
             if d["detection_status"] != "DETECTION_IN_PROGRESS"), None), "the detection")
        assert done["stack_drift_status"] == "IN_SYNC"
        assert {e["resource_name"]: e["status"] for e in done["resources"]} == {
            "rand": "NOT_CHECKED", "child": "IN_SYNC", "inner": "NOT_CHECKED"}
        one = http.post(f"{base}/resources/rand/drift")
        assert one.status_code == 200 and one.json()["resource_drift"]["status"] == \
            "NOT_CHECKED"
        missing = http.post(f"{base}/resources/nothere/drift")
        assert missing.status_code == 404
        assert missing.json()["error"]["type"] == "ResourceNotFound"
        bad = http.get(f"{base}/drift", params={"detection_id": "x" * 40})
        assert bad.status_code == 400

    env = {**clean_env(), "OS_ENDPOINT": kiln.endpoint("demo"), "NO_COLOR": "1"}
    shown = subprocess.run([*kiln_command(), "stack", "drift", name, "--all",
                            "--exit-code"], capture_output=True, text=True, cwd=tmp_path,
                           env=env, timeout=120, check=False)
    assert shown.returncode == 0, shown.stderr
    assert f"Stack {name}: IN_SYNC (0 resource(s) drifted)" in shown.stdout
    assert "NOT_CHECKED" in shown.stdout and "inner" in shown.stdout
    as_json = subprocess.run([*kiln_command(), "stack", "drift", name, "--no-detect",
                              "-f", "json"], capture_output=True, text=True, cwd=tmp_path,
                             env=env, timeout=120, check=False)
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)["stack_drift_status"] == "IN_SYNC"
