"""Resource, event and action routes of one stack."""

from __future__ import annotations

from typing import Any

from kiln import signal_tokens
from kiln.api import params as p
from kiln.api import views
from kiln.api.faults import HTTPError, bad_request, not_found
from kiln.api.openstack_v1.common import Call
from kiln.api.openstack_v1.event_stream import stream_events

_RESOURCE_FILTERS: dict[str, p.ParamKind] = {
    k: "mixed" for k in ("type", "status", "name", "action", "id", "physical_resource_id")}
_EVENT_KEYS: dict[str, p.ParamKind] = {
    "limit": "single", "marker": "single", "sort_dir": "single", "sort_keys": "multi",
    "nested_depth": "single"}
_EVENT_FILTERS: dict[str, p.ParamKind] = {
    k: "mixed" for k in ("resource_status", "resource_action", "resource_name",
                         "resource_type")}
ACTIONS = ("suspend", "resume", "check", "cancel_update", "cancel_without_rollback")


async def list_resources(call: Call) -> Any:
    query = call.query
    known = set(_RESOURCE_FILTERS) | {"nested_depth", "with_detail"}
    invalid = [k for k in dict.fromkeys(query.keys()) if k not in known]
    if invalid:
        raise bad_request(f"Invalid filter parameters {invalid}")
    nested_depth = 0
    if "nested_depth" in query:
        nested_depth = p.extract_int("nested_depth", query["nested_depth"]) or 0
    with_detail = False
    if "with_detail" in query:
        with_detail = p.extract_bool("with_detail", query["with_detail"])
    filters = p.allowed(query, _RESOURCE_FILTERS)
    identity = call.identity()
    resources = await call.service.list_stack_resources(
        call.ctx, stack_identity=identity, nested_depth=nested_depth,
        with_detail=with_detail, filters=filters)
    return {"resources": [views.format_resource(call.api_root, identity, r)
                          for r in resources]}


async def show_resource(call: Call) -> Any:
    with_attr = call.query.getlist("with_attr") or None
    identity = call.identity()
    res = await call.service.describe_stack_resource(
        call.ctx, stack_identity=identity, resource_name=call.path("resource_name"),
        with_attr=with_attr)
    return {"resource": views.format_resource(call.api_root, identity, res)}


async def resource_metadata(call: Call) -> Any:
    call.limit("metadata", f"{call.path('stack_id')}/{call.path('resource_name')}")
    res = await call.service.resource_for_agent(
        call.ctx, stack_identity=call.identity(), resource_name=call.path("resource_name"))
    return {"metadata": res.get("metadata", {})}


def check_signal_token(call: Call) -> None:
    """A signal token Kiln issued (TOKEN_SIGNAL without an identity service) is good for
    the one resource it names; a forged or misdirected one is refused. Other tokens are
    the API's authentication's business."""
    token = call.request.headers.get("x-auth-token")
    if not signal_tokens.is_signal_token(token):
        return
    grant = signal_tokens.verify(str(call.conf.auth_encryption_key), str(token))
    identity = call.identity()
    if grant is None or (grant.project_id, grant.stack_id, grant.resource_name) != (
            call.tenant, identity["stack_id"], call.path("resource_name")):
        raise HTTPError(401, "The signal token is not valid for this resource.",
                        error_type="NotAuthenticated")


async def signal(call: Call) -> Any:
    check_signal_token(call)
    call.limit("signal", f"{call.path('stack_id')}/{call.path('resource_name')}")
    details = await call.optional_body()
    await call.service.resource_signal(
        call.ctx, stack_identity=call.identity(), resource_name=call.path("resource_name"),
        details=details)
    return None


async def mark_unhealthy(call: Call) -> Any:
    body = await call.body()
    valid = ("mark_unhealthy", "resource_status_reason")
    invalid = set(body) - set(valid)
    if invalid:
        raise bad_request(f"Invalid keys in resource mark unhealthy {invalid}")
    if "mark_unhealthy" not in body:
        raise bad_request("Missing mandatory (mark_unhealthy) key from mark unhealthy "
                          "request")
    mark = p.extract_bool("mark_unhealthy", body["mark_unhealthy"])
    reason = body.get("resource_status_reason", "")
    if not isinstance(reason, str):
        raise bad_request("resource_status_reason must be a string")
    await call.service.resource_mark_unhealthy(
        call.ctx, stack_identity=call.identity(), resource_name=call.path("resource_name"),
        mark_unhealthy=mark, resource_status_reason=reason)
    return None


async def _events(call: Call, *, filters: dict[str, Any] | None, detail: bool,
                  **params: Any) -> list[dict[str, Any]]:
    identity = call.identity()
    events = await call.service.list_events(call.ctx, stack_identity=identity,
                                            filters=filters, **params)
    return [views.format_event(call.api_root, identity, e, detail=detail) for e in events]


async def list_events(call: Call) -> Any:
    query = call.query
    params = p.allowed(query, _EVENT_KEYS)
    filters: dict[str, Any] | None = p.allowed(query, _EVENT_FILTERS)
    for key in ("limit", "nested_depth"):
        if key in params:
            params[key] = p.extract_int(key, params[key])
    if "sort_dir" in params:
        params["sort_dir"] = p.extract_sort_dir(params["sort_dir"])
    resource_name = call.request.path_params.get("resource_name")
    if resource_name is None:
        filters = filters or None
    else:
        assert filters is not None
        filters["resource_name"] = str(resource_name)
    if "stream" in query and p.extract_bool("stream", query["stream"]):
        return await stream_events(call, filters, params.get("nested_depth") or 0)
    events = await _events(call, filters=filters, detail=False, **params)
    if not events and resource_name is not None:
        raise not_found(f"No events found for resource {resource_name}")
    return {"events": events}


async def show_event(call: Call) -> Any:
    identity = call.identity()
    event = await call.service.show_event(call.ctx, stack_identity=identity,
                                          resource_name=call.path("resource_name"),
                                          event_id=call.path("event_id"))
    return {"event": views.format_event(call.api_root, identity, event, detail=True)}


async def action(call: Call) -> Any:
    body = await call.optional_body() or {}
    if len(body) < 1:
        raise bad_request("No action specified")
    if len(body) > 1:
        raise bad_request("Multiple actions specified")
    name = next(iter(body))
    if name not in ACTIONS:
        raise bad_request(f"Invalid action {name} specified")
    call.enforce(f"actions:{name}")
    identity = call.identity()
    svc = call.service
    if name == "suspend":
        await svc.stack_suspend(call.ctx, stack_identity=identity)
    elif name == "resume":
        await svc.stack_resume(call.ctx, stack_identity=identity)
    elif name == "check":
        await svc.stack_check(call.ctx, stack_identity=identity)
    else:
        await svc.stack_cancel_update(call.ctx, stack_identity=identity,
                                      cancel_with_rollback=name == "cancel_update")
    return None


