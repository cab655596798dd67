"""CloudFormation's drift actions, in AWS's shapes as boto3 sends and parses them:
DetectStackDrift, DescribeStackDriftDetectionStatus, DescribeStackResourceDrifts,
DetectStackResourceDrift, and the ``DriftInformation`` the describe actions add.

Unlike CloudFormation, a stack's detection descends into its nested stacks: their
resources are listed with the parent's, each under its own ``StackId``. Errors are
AWS's ``ValidationError`` (an unknown stack, resource or detection id; a stack with an
action in progress), never a 5xx.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kiln import errors as kiln_errors
from kiln.api.aws import errors
from kiln.api.cfn import params as p
from kiln.api.cfn.actions import CfnCall, arn, stack_identity

#: AWS's bounds of MaxResults
MAX_RESULTS = 100
STATUSES = ("IN_SYNC", "MODIFIED", "DELETED", "NOT_CHECKED", "UNKNOWN", "UNSUPPORTED")
NOT_CHECKED = "NOT_CHECKED"


def _refused(exc: kiln_errors.KilnError) -> errors.AwsError:
    """The engine's refusals as AWS words them for these actions."""
    if isinstance(exc, kiln_errors.ActionInProgress):
        return errors.ValidationError(f"{exc} Drift detection needs a stack whose last "
                                      "action has ended.")
    if isinstance(exc, kiln_errors.EntityNotFound):
        text = str(exc)
        if text.startswith("The Stack ("):
            name = text[len("The Stack ("):].split(") could not be found", 1)[0]
            return errors.ValidationError(f"Stack with id {name} does not exist")
        return errors.ValidationError(text)
    return errors.ValidationError(str(exc))


async def detect_stack_drift(call: CfnCall) -> Any:
    identity = await stack_identity(call, p.required(call.params, "StackName"))
    try:
        run = await call.service.detect_stack_drift(call.ctx, identity)
    except kiln_errors.KilnError as exc:
        raise _refused(exc) from None
    return {"StackDriftDetectionId": run["detection_id"]}


async def describe_stack_drift_detection_status(call: CfnCall) -> Any:
    detection_id = p.required(call.params, "StackDriftDetectionId")
    if not 1 <= len(detection_id) <= 36:
        raise errors.ValidationError("StackDriftDetectionId must be 1 to 36 characters")
    try:
        run = await call.service.drift_detection(call.ctx, detection_id)
    except kiln_errors.EntityNotFound:
        raise errors.ValidationError(
            f"Drift detection with id {detection_id} does not exist") from None
    out: dict[str, Any] = {
        "StackId": _arn(call, run["stack_id"], run["stack_name"]),
        "StackDriftDetectionId": run["detection_id"],
        "StackDriftStatus": run["stack_drift_status"],
        "DetectionStatus": run["detection_status"],
        "DetectionStatusReason": run["detection_status_reason"] or None,
        "DriftedStackResourceCount": run["drifted_resource_count"]
        if run["detection_status"] == "DETECTION_COMPLETE" else None,
        "Timestamp": run["timestamp"],
    }
    return out


def _arn(call: CfnCall, stack_id: str, stack_name: str) -> str | None:
    return arn({"tenant": call.ctx.project_id, "stack_name": stack_name,
                "stack_id": stack_id})


def resource_drift(call: CfnCall, entry: Mapping[str, Any]) -> dict[str, Any]:
    """One resource's result as AWS's ``StackResourceDrift``."""
    status = str(entry.get("status") or NOT_CHECKED)
    out: dict[str, Any] = {
        "StackId": _arn(call, str(entry.get("stack_id")), str(entry.get("stack_name"))),
        "LogicalResourceId": entry.get("resource_name"),
        "PhysicalResourceId": entry.get("physical_resource_id"),
        "ResourceType": entry.get("resource_type"),
    }
    if status not in (NOT_CHECKED, "UNKNOWN") and entry.get("expected") is not None:
        out["ExpectedProperties"] = json.dumps(entry["expected"], sort_keys=True,
                                               default=str)
    if status in ("IN_SYNC", "MODIFIED") and entry.get("actual") is not None:
        out["ActualProperties"] = json.dumps(entry["actual"], sort_keys=True, default=str)
    if status == "MODIFIED":
        out["PropertyDifferences"] = [
            {"PropertyPath": d["path"], "ExpectedValue": _shown(d["expected"]),
             "ActualValue": _shown(d["actual"]), "DifferenceType": d["type"]}
            for d in entry.get("differences") or []]
    out["StackResourceDriftStatus"] = status
    out["Timestamp"] = entry.get("timestamp")
    if entry.get("reason"):
        out["DriftStatusReason"] = entry["reason"]
    return out


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, default=str)


async def describe_stack_resource_drifts(call: CfnCall) -> Any:
    identity = await stack_identity(call, p.required(call.params, "StackName"))
    wanted = p.member_values(call.params, "StackResourceDriftStatusFilters")
    for status in wanted:
        if status not in STATUSES:
            raise errors.ValidationError(
                f"StackResourceDriftStatusFilters: {status!r} is not one of "
                f"{', '.join(STATUSES)}")
    limit = p.integer(call.params, "MaxResults", minimum=1, maximum=MAX_RESULTS)
    start = _token(call.params.get("NextToken"))
    latest = await call.service.latest_drift(call.ctx, identity)
    drifts = [resource_drift(call, e) for e in latest["resources"]]
    if wanted:
        drifts = [d for d in drifts if d["StackResourceDriftStatus"] in wanted]
    end = len(drifts) if limit is None else start + limit
    out: dict[str, Any] = {"StackResourceDrifts": drifts[start:end]}
    if end < len(drifts):
        out["NextToken"] = str(end)
    return out


def _token(text: str | None) -> int:
    if text is None:
        return 0
    if not text.isdigit() or len(text) > 9:
        raise errors.ValidationError("NextToken is not one this API gave")
    return int(text)


async def detect_stack_resource_drift(call: CfnCall) -> Any:
    identity = await stack_identity(call, p.required(call.params, "StackName"))
    name = p.required(call.params, "LogicalResourceId")
    try:
        entry = await call.service.detect_resource_drift(call.ctx, identity, name)
    except kiln_errors.EntityNotFound as exc:
        text = str(exc)
        if text.startswith("The Resource ("):
            raise errors.ValidationError(
                f"Resource {name} does not exist for stack "
                f"{identity.get('stack_name') or identity.get('stack_id')}") from None
        raise _refused(exc) from None
    except kiln_errors.KilnError as exc:
        raise _refused(exc) from None
    return {"StackResourceDrift": resource_drift(call, entry)}


ACTIONS = {
    "DetectStackDrift": detect_stack_drift,
    "DescribeStackDriftDetectionStatus": describe_stack_drift_detection_status,
    "DescribeStackResourceDrifts": describe_stack_resource_drifts,
    "DetectStackResourceDrift": detect_stack_resource_drift,
}

#: Heat has no rules for these actions: they read like DescribeStackResources (a
#: detection changes nothing), so they are guarded by its rule
POLICY_RULES = {name: "cloudformation:DescribeStackResources" for name in ACTIONS}
