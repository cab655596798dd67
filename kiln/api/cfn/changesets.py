"""CloudFormation's change set actions (CreateChangeSet, DescribeChangeSet,
ExecuteChangeSet, ListChangeSets, DeleteChangeSet, DescribeChangeSetHooks) over the
engine's change sets (:mod:`kiln.engine.service.changesets`), with AWS's names, shapes
and errors, as boto3 sends and parses them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from kiln import errors as kiln_errors
from kiln.api.aws import errors
from kiln.api.cfn import actions
from kiln.api.cfn import params as p
from kiln.api.cfn.actions import (
    Action,
    CfnCall,
    arn,
    environment,
    required_template,
    stack_args,
)


class ChangeSetNotFound(errors.AwsError):
    status = 404
    code = "ChangeSetNotFound"
    explanation = "The specified change set name or ID doesn't exist"

    @property
    def message(self) -> str:
        return self.detail or self.explanation


class InvalidChangeSetStatus(errors.AwsError):
    code = "InvalidChangeSetStatus"
    explanation = "The specified change set can't be used to update the stack"

    @property
    def message(self) -> str:
        return self.detail or self.explanation


class AlreadyExistsException(errors.AwsError):
    code = "AlreadyExistsException"
    explanation = "The resource with the name requested already exists"

    @property
    def message(self) -> str:
        return self.detail or self.explanation


def change_set_arn(shown: Mapping[str, Any]) -> str:
    return "arn:openstack:heat::{}:changeSet/{}/{}".format(
        quote(str(shown["tenant"]), ""), quote(str(shown["name"]), ""), quote(str(shown["id"]), "")
    )


def _stack_arn(shown: Mapping[str, Any]) -> str | None:
    return arn(
        {
            "tenant": shown["tenant"],
            "stack_name": shown["stack_name"],
            "stack_id": shown["stack_id"],
        }
    )


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value)


def _detail(detail: Mapping[str, Any]) -> dict[str, Any]:
    target = detail.get("target") or {}
    return {
        "Target": {
            "Attribute": target.get("attribute"),
            "Name": target.get("name"),
            "RequiresRecreation": target.get("requires_recreation"),
            "BeforeValue": _text(detail.get("before")),
            "AfterValue": _text(detail.get("after")),
        },
        "Evaluation": detail.get("evaluation"),
        "ChangeSource": detail.get("change_source"),
    }


def _change(change: Mapping[str, Any], tenant: str) -> dict[str, Any]:
    nested = {}
    if change.get("change_set_id"):
        nested["ChangeSetId"] = change_set_arn(
            {"tenant": tenant, "name": change.get("change_set_name"), "id": change["change_set_id"]}
        )
    return {
        "Type": "Resource",
        "ResourceChange": {
            **nested,
            "Action": change.get("action"),
            "LogicalResourceId": change.get("logical_resource_id"),
            "PhysicalResourceId": change.get("physical_resource_id"),
            "ResourceType": change.get("resource_type"),
            "Replacement": change.get("replacement"),
            "Scope": list(change.get("scope") or []),
            "Details": [_detail(d) for d in change.get("details") or []],
        },
    }


def _summary(shown: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "StackId": _stack_arn(shown),
        "StackName": shown["stack_name"],
        "ChangeSetId": change_set_arn(shown),
        "ChangeSetName": shown["name"],
        "ExecutionStatus": shown["execution_status"],
        "Status": shown["status"],
        "StatusReason": shown.get("status_reason"),
        "CreationTime": shown["creation_time"],
        "Description": shown.get("description"),
        "IncludeNestedStacks": bool(shown.get("include_nested_stacks")),
        **(
            {
                "ParentChangeSetId": change_set_arn(
                    {"tenant": shown["tenant"], **shown["parent_change_set"]}
                ),
                "RootChangeSetId": change_set_arn(
                    {"tenant": shown["tenant"], **shown["root_change_set"]}
                ),
            }
            if shown.get("parent_change_set") and shown.get("root_change_set")
            else {}
        ),
    }


def _target(call: CfnCall) -> tuple[str | None, str]:
    return call.params.get("StackName") or None, p.required(call.params, "ChangeSetName")


def _aws(exc: kiln_errors.KilnError, call: CfnCall) -> errors.AwsError | None:
    """The change set errors as CloudFormation names them (others as the API maps)."""
    if isinstance(exc, kiln_errors.ChangeSetNotFound):
        return ChangeSetNotFound(str(exc))
    if isinstance(exc, kiln_errors.InvalidChangeSetStatus):
        return InvalidChangeSetStatus(str(exc))
    if isinstance(exc, kiln_errors.StackExists):
        if str(exc).startswith("ChangeSet ["):
            return AlreadyExistsException(str(exc))
        return errors.ValidationError(str(exc))
    if isinstance(exc, kiln_errors.EntityNotFound) and call.action == "CreateChangeSet":
        return errors.ValidationError(f"Stack [{call.params.get('StackName')}] does not exist")
    if isinstance(exc, kiln_errors.ActionInProgress) and call.action == "ExecuteChangeSet":
        return InvalidChangeSetStatus(str(exc))
    if isinstance(exc, kiln_errors.InvalidInput | kiln_errors.Conflict):
        return errors.ValidationError(str(exc))
    return None


def _translated(action: Action) -> Action:
    async def run(call: CfnCall) -> Any:
        try:
            return await action(call)
        except kiln_errors.KilnError as exc:
            mapped = _aws(exc, call)
            if mapped is None:
                raise
            raise mapped from None

    run.__doc__ = action.__doc__
    return run


async def create_change_set(call: CfnCall) -> Any:
    params = call.params
    stack_name = p.required(params, "StackName")
    name = p.required(params, "ChangeSetName")
    change_type = params.get("ChangeSetType", "UPDATE")
    args = stack_args(call)
    template: dict[str, Any] | None
    if p.boolean(params, "UsePreviousTemplate"):
        if change_type != "UPDATE":
            raise errors.ValidationError(
                "UsePreviousTemplate can only be used with ChangeSetType UPDATE"
            )
        template = None
        args["existing"] = True
    else:
        template = await required_template(call)
    use_previous = [
        m["ParameterKey"]
        for m in p.member_list(params, "Parameters")
        if m.get("ParameterKey") and str(m.get("UsePreviousValue", "")).lower() == "true"
    ]
    imports = _imports(params)
    if imports and change_type != "IMPORT":
        raise errors.ValidationError("ResourcesToImport is only for ChangeSetType IMPORT")
    shown = await call.service.create_change_set(
        call.ctx,
        stack_name,
        name,
        change_type,
        template,
        environment(call),
        {},
        args,
        use_previous=use_previous,
        description=params.get("Description"),
        imports=imports,
        include_nested=bool(p.boolean(params, "IncludeNestedStacks")),
    )
    return {"Id": change_set_arn(shown), "StackId": _stack_arn(shown)}


def _imports(params: Mapping[str, str]) -> list[dict[str, Any]]:
    """``ResourcesToImport.member.N`` (``ResourceType``, ``LogicalResourceId`` and the
    ``ResourceIdentifier`` map) as the engine takes them."""
    out = []
    for member in p.member_list(params, "ResourcesToImport"):
        entries = p.pairs(
            {f"I.member.{k.split('.')[-2]}.{k.split('.')[-1]}": v
             for k, v in member.items() if k.startswith("ResourceIdentifier.entry.")},
            "I", "key", "value",
        )
        if not member.get("LogicalResourceId") or not member.get("ResourceType") or not entries:
            raise errors.ValidationError(
                "Each of ResourcesToImport needs ResourceType, LogicalResourceId and "
                "ResourceIdentifier"
            )
        out.append({
            "logical_id": member["LogicalResourceId"],
            "resource_type": member["ResourceType"],
            "identifier": entries,
        })
    return out


async def describe_change_set(call: CfnCall) -> Any:
    stack_name, name = _target(call)
    shown = await call.service.describe_change_set(call.ctx, stack_name, name)
    out = _summary(shown)
    out.pop("IncludeNestedStacks")
    out.update(
        {
            "Parameters": [
                {"ParameterKey": k, "ParameterValue": _text(v)}
                for k, v in (shown.get("parameters") or {}).items()
            ],
            "NotificationARNs": [],
            "Capabilities": [],
            "Tags": [],
            "Changes": [_change(c, shown["tenant"]) for c in shown.get("changes") or []],
            "IncludeNestedStacks": bool(shown.get("include_nested_stacks")),
        }
    )
    for key, field in (("ParentChangeSetId", "parent_change_set"),
                       ("RootChangeSetId", "root_change_set")):
        if shown.get(field):
            out[key] = change_set_arn({"tenant": shown["tenant"], **shown[field]})
    return out


async def execute_change_set(call: CfnCall) -> Any:
    stack_name, name = _target(call)
    token = call.params.get("ClientRequestToken") or None
    await call.service.execute_change_set(call.ctx, stack_name, name, token)
    return {}


async def describe_change_set_hooks(call: CfnCall) -> Any:
    """No hooks run in this cloud: AWS's answer for a change set without any (an empty
    ``Hooks`` list, ``Status`` UNAVAILABLE)."""
    stack_name, name = _target(call)
    shown = await call.service.describe_change_set(call.ctx, stack_name, name)
    return {
        "ChangeSetId": change_set_arn(shown),
        "ChangeSetName": shown["name"],
        "Hooks": [],
        "Status": "UNAVAILABLE",
        "StackId": _stack_arn(shown),
        "StackName": shown["stack_name"],
    }


async def list_change_sets(call: CfnCall) -> Any:
    stack_name = p.required(call.params, "StackName")
    if stack_name.startswith("arn:"):
        stack_name = stack_name.rsplit("/", 1)[-1]
    found = await call.service.list_change_sets(call.ctx, stack_name)
    return {"Summaries": [_summary(s) for s in found]}


async def delete_change_set(call: CfnCall) -> Any:
    stack_name, name = _target(call)
    await call.service.delete_change_set(call.ctx, stack_name, name)
    return {}


def _review_described(shown: Mapping[str, Any]) -> dict[str, Any]:
    """A stack in review as DescribeStacks shows it (AWS: REVIEW_IN_PROGRESS)."""
    return {
        "Capabilities": [],
        "CreationTime": shown["creation_time"],
        "Description": shown.get("description"),
        "DisableRollback": False,
        "NotificationARNs": [],
        "Parameters": [],
        "StackId": _stack_arn(shown),
        "StackName": shown["stack_name"],
        "StackStatusReason": "User Initiated",
        "StackStatus": "REVIEW_IN_PROGRESS",
        "Outputs": [],
        "DriftInformation": {"StackDriftStatus": "NOT_CHECKED"},
    }


async def describe_stacks(call: CfnCall) -> Any:
    """DescribeStacks, plus a stack that exists only as a CREATE change set: AWS shows
    it ``REVIEW_IN_PROGRESS`` until the change set is executed (named, or among all
    the project's stacks when no name is given)."""
    if not call.params.get("StackName"):
        described = await actions.describe_stacks(call)
        reviews = await call.service.review_stacks(call.ctx)
        described["Stacks"] += [_review_described(s) for s in reviews]
        return described
    try:
        return await actions.describe_stacks(call)
    except (kiln_errors.EntityNotFound, errors.ValidationError):
        name = call.params.get("StackName") or ""
        shown = None if name.startswith("arn:") else await call.service.review_stack(call.ctx, name)
        if shown is None:
            raise
    return {"Stacks": [_review_described(shown)]}


async def list_stacks(call: CfnCall) -> Any:
    """ListStacks, with the stacks in review among them (StackStatus
    ``REVIEW_IN_PROGRESS``, which ``StackStatusFilter`` can ask for)."""
    listed = await actions.list_stacks(call)
    wanted = set(p.member_values(call.params, "StackStatusFilter"))
    if not wanted or "REVIEW_IN_PROGRESS" in wanted:
        listed["StackSummaries"] += [
            {
                "CreationTime": shown["creation_time"],
                "StackId": _stack_arn(shown),
                "StackName": shown["stack_name"],
                "StackStatus": "REVIEW_IN_PROGRESS",
                "StackStatusReason": "User Initiated",
                "DriftInformation": {"StackDriftStatus": "NOT_CHECKED"},
            }
            for shown in await call.service.review_stacks(call.ctx)
        ]
    return listed


async def delete_stack(call: CfnCall) -> Any:
    """DeleteStack, also of a stack still in review (its CREATE change sets go)."""
    name = p.required(call.params, "StackName")
    if not name.startswith("arn:") and await call.service.delete_review_stack(call.ctx, name):
        return ""
    return await actions.delete_stack(call)


ACTIONS: dict[str, Action] = {
    "CreateChangeSet": _translated(create_change_set),
    "DescribeChangeSet": _translated(describe_change_set),
    "ExecuteChangeSet": _translated(execute_change_set),
    "ListChangeSets": _translated(list_change_sets),
    "DeleteChangeSet": _translated(delete_change_set),
    "DescribeChangeSetHooks": _translated(describe_change_set_hooks),
    "DescribeStacks": describe_stacks,
    "ListStacks": list_stacks,
    "DeleteStack": delete_stack,
}
