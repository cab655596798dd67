"""One function per CloudFormation ``Action``: AWS parameters in, Heat's result tree out.

Each action takes a ``CfnCall`` and returns the ``{Action}Result`` content as plain
data (``render`` writes it as XML or JSON). Field names and their order are Heat's
(heat/api/cfn/v1/stacks.py), so the clients that parse Heat's answers parse Kiln's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from oslo_config import cfg

from kiln import errors as kiln_errors
from kiln.api import identity as ident
from kiln.api.aws import errors
from kiln.api.aws.credentials import Ec2Identity
from kiln.api.cfn import params as p
from kiln.api.faults import HTTPError
from kiln.api.instantiation import (
    check_stack_name,
    check_template_size,
    default_for_missing,
    fetch_template,
    simple_parse,
)
from kiln.engine.service.interface import RequestContext

#: Heat's answer to EstimateTemplateCost, which it never implemented: no price, a page
#: saying so. Kiln gives the same (no pricing exists for a private cloud).
COST_URL = "http://en.wikipedia.org/wiki/Gratis"

#: The one action a keypair issued to a stack's resource (a server's agent) may call,
#: on its own stack (Heat's policy denies stack users everything else).
STACK_USER_ACTIONS = frozenset({"DescribeStackResource"})


@dataclass
class CfnCall:
    action: str
    params: Mapping[str, str]
    service: Any
    conf: cfg.ConfigOpts
    ctx: RequestContext
    caller: Ec2Identity


Action = Callable[[CfnCall], Awaitable[Any]]


def authorize(call: CfnCall) -> None:
    if call.caller.stack_id is not None and call.action not in STACK_USER_ACTIONS:
        raise errors.AccessDenied(f"Action {call.action} not allowed for user")


async def stack_identity(call: CfnCall, name_or_arn: str) -> dict[str, str]:
    """The stack named by a name, an id or an ARN, in the caller's project."""
    found = ident.from_arn(name_or_arn) if name_or_arn.startswith("arn:") else None
    if found is not None:
        identity = {k: v for k, v in found.items() if k != "path"}
        identity["path"] = ""
    else:
        identity = dict(await call.service.identify_stack(call.ctx, name_or_arn))
    if call.caller.stack_id is not None and identity.get("stack_id") != call.caller.stack_id:
        raise errors.AccessDenied("this keypair may only reach its own stack")
    return identity


def arn(identity: Mapping[str, Any] | None) -> str | None:
    if not isinstance(identity, Mapping) or "stack_id" not in identity:
        return None
    return ident.to_arn({"tenant": str(identity.get("tenant", "")),
                         "stack_name": str(identity.get("stack_name", "")),
                         "stack_id": str(identity["stack_id"]), "path": ""})


def _status(item: Mapping[str, Any], prefix: str) -> str:
    status = str(item.get(f"{prefix}_status") or "")
    action = item.get(f"{prefix}_action")
    if action and not status.startswith(f"{action}_"):
        return f"{action}_{status}"
    return status


# -- templates and parameters ----------------------------------------------------------

async def template_of(call: CfnCall) -> dict[str, Any] | None:
    """``TemplateBody`` or the template at ``TemplateURL`` (Heat: ``TemplateUrl``)."""
    conf = call.conf
    limit = int(conf.max_template_size)
    if "TemplateBody" in call.params:
        text: str | bytes = call.params["TemplateBody"]
    else:
        url = call.params.get("TemplateURL", call.params.get("TemplateUrl"))
        if url is None:
            return None
        try:
            text = await fetch_template(url, allowed_schemes=list(
                conf.template_url_allowed_schemes), timeout=float(conf.template_url_timeout),
                limit=limit, allowed_hosts=list(conf.template_url_allowed_hosts))
        except kiln_errors.KilnError as exc:
            raise errors.InvalidParameterValue(f"Failed to fetch template: {exc}") from None
    try:
        check_template_size(text if isinstance(text, str) else text.decode("utf-8", "replace"),
                            limit)
    except kiln_errors.RequestLimitExceeded as exc:
        raise errors.RequestLimitExceeded(str(exc)) from None
    try:
        return simple_parse(text)
    except ValueError:
        raise errors.InvalidParameterValue(
            "The Template must be a JSON or YAML document.") from None


async def required_template(call: CfnCall) -> dict[str, Any]:
    template = await template_of(call)
    if template is None:
        raise errors.MissingParameter("TemplateBody or TemplateUrl were not given.")
    return template


def stack_args(call: CfnCall) -> dict[str, Any]:
    """Heat's create/update ``args`` from ``TimeoutInMinutes``, ``DisableRollback``,
    ``OnFailure`` and ``Tags``."""
    params = call.params
    if "DisableRollback" in params and "OnFailure" in params:
        raise errors.InvalidParameterCombination(
            "DisableRollback and OnFailure may not be used together")
    args: dict[str, Any] = {}
    timeout = p.integer(params, "TimeoutInMinutes", minimum=1)
    if timeout is not None:
        args["timeout_mins"] = timeout
    rollback = p.boolean(params, "DisableRollback")
    if rollback is not None:
        args["disable_rollback"] = rollback
    if "OnFailure" in params:
        on_failure = params["OnFailure"]
        if on_failure not in ("DO_NOTHING", "ROLLBACK", "DELETE"):
            raise errors.InvalidParameterValue(
                f"OnFailure must be DO_NOTHING, ROLLBACK or DELETE, not {on_failure!r}")
        args["disable_rollback"] = on_failure == "DO_NOTHING"
    tags = [f"{t['Key']}={t['Value']}" if t.get("Value") else t["Key"]
            for t in p.member_list(params, "Tags") if t.get("Key")]
    if tags:
        args["tags"] = tags
    return args


def environment(call: CfnCall) -> dict[str, Any]:
    return default_for_missing({"parameters": p.pairs(call.params, "Parameters",
                                                      "ParameterKey", "ParameterValue")})


# -- stacks ---------------------------------------------------------------------------

def _summary(stack: Mapping[str, Any]) -> dict[str, Any]:
    return {"CreationTime": stack.get("creation_time"),
            "LastUpdatedTime": stack.get("updated_time"),
            "StackId": arn(stack.get("stack_identity")),
            "StackName": stack.get("stack_name"),
            "StackStatusReason": stack.get("stack_status_reason"),
            "StackStatus": _status(stack, "stack"),
            "DeletionTime": stack.get("deletion_time")}


async def list_stacks(call: CfnCall) -> Any:
    stacks = await call.service.list_stacks(call.ctx)
    wanted = set(p.member_values(call.params, "StackStatusFilter"))
    summaries = [_summary(s) for s in stacks]
    drift = await call.service.stacks_drift_status(
        [str(s["stack_identity"]["stack_id"]) for s in stacks])
    for stack, out in zip(stacks, summaries, strict=True):
        status, when = drift.get(str(stack["stack_identity"]["stack_id"]),
                                 ("NOT_CHECKED", None))
        out["DriftInformation"] = {"StackDriftStatus": status, "LastCheckTimestamp": when}
    if wanted:
        summaries = [s for s in summaries if s["StackStatus"] in wanted]
    return {"StackSummaries": summaries}


def _output_value(value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value)


def _described(stack: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "Capabilities": list(stack.get("capabilities") or []),
        "CreationTime": stack.get("creation_time"),
        "Description": stack.get("description"),
        "DisableRollback": bool(stack.get("disable_rollback")),
        "NotificationARNs": list(stack.get("notification_topics") or []),
        "Parameters": [{"ParameterKey": k, "ParameterValue": _output_value(v)}
                       for k, v in (stack.get("parameters") or {}).items()],
        "StackId": arn(stack.get("stack_identity")),
        "StackName": stack.get("stack_name"),
        "StackStatusReason": stack.get("stack_status_reason"),
        "TimeoutInMinutes": stack.get("timeout_mins"),
    }
    if stack.get("updated_time") is not None:
        out["LastUpdatedTime"] = stack["updated_time"]
    out["StackStatus"] = _status(stack, "stack")
    out["Outputs"] = [{"Description": o.get("description"), "OutputKey": o.get("output_key"),
                       "OutputValue": _output_value(o.get("output_value"))}
                      for o in stack.get("outputs") or []]
    return out


async def describe_stacks(call: CfnCall) -> Any:
    service, ctx = call.service, call.ctx
    if "StackName" in call.params:
        identities = [await stack_identity(call, call.params["StackName"])]
    else:
        identities = [s["stack_identity"] for s in await service.list_stacks(ctx)]
    stacks = []
    for identity in identities:
        shown = await service.show_stack(ctx, identity)
        stacks.append(_described(shown[0] if isinstance(shown, list) else shown))
    drift = await service.stacks_drift_status([str(i["stack_id"]) for i in identities])
    for identity, out in zip(identities, stacks, strict=True):
        status, when = drift.get(str(identity["stack_id"]), ("NOT_CHECKED", None))
        out["DriftInformation"] = {"StackDriftStatus": status, "LastCheckTimestamp": when}
    return {"Stacks": stacks}


async def resource_drift(call: CfnCall, identity: Mapping[str, Any],
                         ) -> Callable[[Any], dict[str, Any]]:
    """The ``DriftInformation`` of a resource of the stack, by its name (NOT_CHECKED
    for one never checked)."""
    found = await call.service.resources_drift_status(call.ctx, identity)

    def info(name: Any) -> dict[str, Any]:
        status, when = found.get(str(name), ("NOT_CHECKED", None))
        return {"StackResourceDriftStatus": status, "LastCheckTimestamp": when}
    return info


async def create_stack(call: CfnCall) -> Any:
    name = p.required(call.params, "StackName")
    args = stack_args(call)
    template = await required_template(call)
    check_stack_name(name)
    created = await call.service.create_stack(call.ctx, name, template, environment(call),
                                              {}, args)
    return {"StackId": arn(created)}


async def update_stack(call: CfnCall) -> Any:
    name = p.required(call.params, "StackName")
    args = stack_args(call)
    template: dict[str, Any] | None
    if p.boolean(call.params, "UsePreviousTemplate"):
        template = None
        args["existing"] = True
    else:
        template = await required_template(call)
    identity = await stack_identity(call, name)
    updated = await call.service.update_stack(call.ctx, identity, template, environment(call),
                                              {}, args)
    return {"StackId": arn(updated) or arn(identity)}


async def delete_stack(call: CfnCall) -> Any:
    identity = await stack_identity(call, p.required(call.params, "StackName"))
    await call.service.delete_stack(call.ctx, identity)
    return ""


async def cancel_update_stack(call: CfnCall) -> Any:
    identity = await stack_identity(call, p.required(call.params, "StackName"))
    await call.service.stack_cancel_update(call.ctx, identity, cancel_with_rollback=True)
    return {}


async def get_template(call: CfnCall) -> Any:
    identity = await stack_identity(call, p.required(call.params, "StackName"))
    return {"TemplateBody": await call.service.get_template(call.ctx, identity)}


async def validate_template(call: CfnCall) -> Any:
    template = await required_template(call)
    try:
        result = dict(await call.service.validate_template(call.ctx, template))
    except kiln_errors.StackValidationFailed as exc:
        # Heat's engine answers a template that fails validation with its message as
        # the whole result, not as an error
        return str(exc)
    result["Parameters"] = [
        {"ParameterKey": key, "DefaultValue": value.get("Default", ""),
         "Description": value.get("Description", ""),
         "NoEcho": value.get("NoEcho", "false")}
        for key, value in (result.get("Parameters") or {}).items()]
    return result


async def estimate_template_cost(call: CfnCall) -> Any:
    return {"Url": COST_URL}


# -- events and resources ---------------------------------------------------------------

def _event(event: Mapping[str, Any]) -> dict[str, Any]:
    return {"EventId": event.get("id"),
            "LogicalResourceId": event.get("resource_name"),
            "PhysicalResourceId": event.get("physical_resource_id"),
            "ResourceProperties": json.dumps(event.get("resource_properties")),
            "ResourceStatusReason": event.get("resource_status_reason"),
            "ResourceType": event.get("resource_type"),
            "StackId": arn(event.get("stack_identity")),
            "StackName": event.get("stack_name"),
            "Timestamp": event.get("event_time"),
            "ResourceStatus": _status(event, "resource")}


async def describe_stack_events(call: CfnCall) -> Any:
    service, ctx = call.service, call.ctx
    if call.params.get("StackName"):
        identities = [await stack_identity(call, call.params["StackName"])]
    else:
        identities = [s["stack_identity"] for s in await service.list_stacks(ctx)]
    events: list[dict[str, Any]] = []
    for identity in identities:
        events += [_event(e) for e in await service.list_events(ctx, identity)]
    return {"StackEvents": events}


async def describe_stack_resource(call: CfnCall) -> Any:
    """What every server's cfn collector and cfn-hup poll: one trip to the engine (the
    stack is found, and the server's keypair checked, in the same read)."""
    named = p.required(call.params, "StackName")
    found = ident.from_arn(named) if named.startswith("arn:") else None
    # a plain value is an id or a name (found as identify_stack finds it)
    identity: dict[str, str] = {"stack_id": named} if found is None else {
        "stack_name": str(found["stack_name"]), "stack_id": str(found["stack_id"])}
    name = p.required(call.params, "LogicalResourceId")
    res = await call.service.resource_for_agent(
        call.ctx, identity, name, agent_stack_id=call.caller.stack_id,
        agent_owner=call.caller.resource_name)
    # an agent's poll (a stack's own keypair) never reads the drift: it only wants metadata
    drift = None if call.caller.stack_id is not None else (
        await resource_drift(call, identity))(name)
    return {"StackResourceDetail": {
        "Description": res.get("description", ""),
        "LastUpdatedTimestamp": res.get("updated_time"),
        "LogicalResourceId": res.get("resource_name"),
        "Metadata": res.get("metadata") or {},
        "PhysicalResourceId": res.get("physical_resource_id"),
        "ResourceStatusReason": res.get("resource_status_reason"),
        "ResourceType": res.get("resource_type"),
        "StackId": arn(res.get("stack_identity")) or arn(identity),
        "StackName": res.get("stack_name") or identity.get("stack_name"),
        "ResourceStatus": _status(res, "resource"),
        "DriftInformation": drift}}


async def describe_stack_resources(call: CfnCall) -> Any:
    stack_name = call.params.get("StackName")
    physical = call.params.get("PhysicalResourceId")
    if stack_name and physical:
        raise errors.InvalidParameterCombination(
            "Use `StackName` or `PhysicalResourceId` but not both")
    if stack_name:
        identity = await stack_identity(call, stack_name)
    elif physical:
        identity = dict(await call.service.find_physical_resource(call.ctx, physical))
    else:
        raise errors.MissingParameter("StackName or PhysicalResourceId must be given")
    found = await call.service.describe_stack_resources(
        call.ctx, identity, call.params.get("LogicalResourceId"))
    drift = await resource_drift(call, identity)
    return {"StackResources": [{
        "Description": r.get("description", ""),
        "LogicalResourceId": r.get("resource_name"),
        "PhysicalResourceId": r.get("physical_resource_id"),
        "ResourceStatusReason": r.get("resource_status_reason"),
        "ResourceType": r.get("resource_type"),
        "StackId": arn(r.get("stack_identity")) or arn(identity),
        "StackName": r.get("stack_name") or identity.get("stack_name"),
        "Timestamp": r.get("updated_time"),
        "ResourceStatus": _status(r, "resource"),
        "DriftInformation": drift(r.get("resource_name"))} for r in found]}


async def list_stack_resources(call: CfnCall) -> Any:
    identity = await stack_identity(call, p.required(call.params, "StackName"))
    found = await call.service.list_stack_resources(call.ctx, identity)
    drift = await resource_drift(call, identity)
    return {"StackResourceSummaries": [{
        "LastUpdatedTimestamp": r.get("updated_time"),
        "LogicalResourceId": r.get("resource_name"),
        "PhysicalResourceId": r.get("physical_resource_id"),
        "ResourceStatusReason": r.get("resource_status_reason"),
        "ResourceType": r.get("resource_type"),
        "ResourceStatus": _status(r, "resource"),
        "DriftInformation": drift(r.get("resource_name"))} for r in found]}


ACTIONS: dict[str, Action] = {
    "ListStacks": list_stacks,
    "CreateStack": create_stack,
    "DescribeStacks": describe_stacks,
    "DeleteStack": delete_stack,
    "UpdateStack": update_stack,
    "CancelUpdateStack": cancel_update_stack,
    "DescribeStackEvents": describe_stack_events,
    "ValidateTemplate": validate_template,
    "GetTemplate": get_template,
    "EstimateTemplateCost": estimate_template_cost,
    "DescribeStackResource": describe_stack_resource,
    "DescribeStackResources": describe_stack_resources,
    "ListStackResources": list_stack_resources,
}


#: the engine's message for a stack it cannot find (Heat's wording)
_MISSING_STACK = re.compile(r"The Stack \((.*)\) could not be found\.")


def aws_error(exc: kiln_errors.KilnError | HTTPError) -> errors.AwsError:
    """An engine error as Heat's CFN API maps it (``map_remote_error``), with Heat's
    message as the detail. Where Heat answers 500 for a client's mistake (an error type
    missing from its table), Kiln answers 400 ``InvalidParameterValue``; a stack that
    does not exist is AWS's ``ValidationError`` ("Stack with id NAME does not exist"),
    what boto3's waiters and AWS tools expect (issue 27)."""
    detail = str(exc) or None
    if isinstance(exc, kiln_errors.EntityNotFound) and (
            missing := _MISSING_STACK.fullmatch(detail or "")) is not None:
        return errors.ValidationError(f"Stack with id {missing[1]} does not exist")
    if isinstance(exc, kiln_errors.StackExists):
        return errors.AlreadyExists(detail)
    if isinstance(exc, kiln_errors.ActionInProgress):
        return errors.ActionInProgress(detail)
    if isinstance(exc, kiln_errors.Forbidden):
        return errors.AccessDenied(detail)
    if isinstance(exc, kiln_errors.RequestLimitExceeded | kiln_errors.RequestEntityTooLarge):
        return errors.RequestLimitExceeded(detail)
    status = exc.status if isinstance(exc, HTTPError) else exc.http_status
    if status < 500:
        return errors.InvalidParameterValue(detail)
    return errors.InternalFailure(detail)
