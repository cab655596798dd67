"""Turn EngineService dicts into Heat's REST views.

The engine may hand back Heat's engine-side shape (``stack_identity``,
``stack_action`` + ``stack_status``, ``resource_identity``, ``event_identity``) or the
REST shape (``id``, joined status); both are rendered as Heat's API does: identities
become ``id`` + ``links``, action and status are joined, internal keys are dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request

from kiln.api import identity as ident

STACK_SUMMARY_KEYS = frozenset({
    "stack_identity", "id", "stack_name", "description", "stack_status",
    "stack_status_reason", "creation_time", "deletion_time", "updated_time",
    "stack_owner", "parent", "stack_user_project_id", "tags"})

EVENT_SUMMARY_KEYS = frozenset({
    "event_identity", "id", "event_time", "resource_name", "resource_status",
    "resource_status_reason", "physical_resource_id"})


def _joined_status(item: Mapping[str, Any], action_key: str, status_key: str) -> Any:
    status = item.get(status_key)
    action = item.get(action_key)
    if action and isinstance(status, str) and not status.startswith(f"{action}_"):
        return f"{action}_{status}"
    return status


_STACK_SKIP = frozenset({"stack_identity", "id", "stack_action", "links", "project",
                         "outputs_live"})


def format_stack(api_root: str, tenant: str, stack: Mapping[str, Any], *,
                 keys: frozenset[str] | None = None,
                 include_project: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {}
    identity = ident.coerce(stack.get("stack_identity"), tenant, stack.get("stack_name"))
    if identity is None:
        identity = ident.coerce(stack.get("id"), tenant, stack.get("stack_name"))
    if identity is not None:
        out["id"] = identity["stack_id"]
        if identity["stack_name"]:
            out["links"] = [ident.link(api_root, identity)]
        if include_project:
            out["project"] = identity["tenant"]
    for key, value in stack.items():
        if key in _STACK_SKIP or (keys is not None and key not in keys):
            continue
        out[key] = (_joined_status(stack, "stack_action", "stack_status")
                    if key == "stack_status" else value)
    return out


def format_resource(api_root: str, stack_identity: Mapping[str, str],
                    res: Mapping[str, Any]) -> dict[str, Any]:
    tenant = stack_identity["tenant"]
    owner = ident.coerce(res.get("stack_identity"), tenant, res.get("stack_name"))
    if owner is None:
        owner = ident.make_identity(tenant, stack_identity["stack_name"],
                                    stack_identity["stack_id"])
    rid = res.get("resource_identity")
    name = str(res.get("resource_name", ""))
    if isinstance(rid, Mapping) and "stack_id" in rid:
        res_identity = ident.coerce(rid, tenant) or owner
        stack_of_res = ident.strip_path(res_identity, 2)
    else:
        res_identity = ident.make_identity(owner["tenant"], owner["stack_name"],
                                           owner["stack_id"], f"/resources/{name}")
        stack_of_res = owner
    links = [ident.link(api_root, res_identity), ident.link(api_root, stack_of_res, "stack")]
    nested = res.get("nested_stack_id")
    nested_identity = ident.coerce(nested, tenant) if nested else None
    if nested_identity is not None and nested_identity["stack_name"]:
        links.append(ident.link(api_root, nested_identity, "nested"))
    out: dict[str, Any] = {}
    for key, value in res.items():
        if key in ("stack_identity", "stack_name", "resource_action", "nested_stack_id",
                   "metadata", "links", "resource_identity"):
            continue
        if key == "resource_status":
            out[key] = _joined_status(res, "resource_action", "resource_status")
        elif key == "resource_name":
            out["logical_resource_id"] = value
            out[key] = value
        else:
            out[key] = value
    out["links"] = links
    return out


def format_event(api_root: str, stack_identity: Mapping[str, str], event: Mapping[str, Any],
                 *, detail: bool) -> dict[str, Any]:
    tenant = stack_identity["tenant"]
    eid = event.get("event_identity")
    ev_identity = ident.coerce(eid, tenant) if isinstance(eid, Mapping) else None
    if ev_identity is None:
        owner = ident.coerce(event.get("stack_identity"), tenant, event.get("stack_name"))
        owner = owner or ident.make_identity(tenant, stack_identity["stack_name"],
                                             stack_identity["stack_id"])
        ev_identity = ident.make_identity(
            owner["tenant"], owner["stack_name"], owner["stack_id"],
            f"/resources/{event.get('resource_name', '')}/events/{event.get('id', '')}")
    event_id = (ev_identity.get("path") or "").rsplit("/", 1)[-1]
    res_identity = ident.strip_path(ev_identity, 2)
    out: dict[str, Any] = {}
    for key, value in event.items():
        if not detail and key not in EVENT_SUMMARY_KEYS:
            continue
        if key in ("event_identity", "id"):
            out["id"] = event_id
            out["links"] = [ident.link(api_root, ev_identity),
                            ident.link(api_root, res_identity, "resource"),
                            ident.link(api_root, ident.strip_path(res_identity, 2), "stack")]
        elif key in ("stack_identity", "stack_name", "resource_action", "root_stack_id",
                     "links"):
            continue
        elif key == "resource_status":
            out[key] = _joined_status(event, "resource_action", "resource_status")
        elif key == "resource_name":
            out["logical_resource_id"] = value
            out[key] = value
        else:
            out[key] = value
    root = event.get("root_stack_id")
    root_identity = ident.coerce(root, tenant) if isinstance(root, Mapping) else None
    if root_identity is not None and "links" in out:
        out["links"].append(ident.link(api_root, root_identity, "root_stack"))
    return out


def engine_resource(res: Any) -> Any:
    """Previews show resources in Heat's engine shape: action and status apart.

    Nested stacks' resources come as nested lists; anything else passes unchanged.
    """
    if isinstance(res, list):
        return [engine_resource(r) for r in res]
    if not isinstance(res, Mapping):
        return res
    action, status = res.get("resource_action"), res.get("resource_status")
    if isinstance(action, str) and isinstance(status, str) and status.startswith(action + "_"):
        return {**res, "resource_status": status[len(action) + 1:]}
    return res


def next_links(request: Request, items: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """Heat's ``next`` link: present when a positive ``limit`` was filled exactly."""
    try:
        limit = int(request.query_params.get("limit") or 0)
    except ValueError:
        limit = 0
    if limit <= 0 or limit != len(items) or not items:
        return []
    params: list[tuple[str, str]] = [
        (k, v) for k, v in request.query_params.multi_items() if k != "marker"]
    params.append(("marker", str(items[-1].get("id", ""))))
    href = str(request.url.replace(query=None)) + "?" + urlencode(params)
    return [{"rel": "next", "href": href}]


def stack_collection(request: Request, api_root: str, tenant: str,
                     stacks: Iterable[Mapping[str, Any]], *, count: int | None,
                     include_project: bool) -> dict[str, Any]:
    prefixes: dict[str, str] = {}
    formatted = [_summary(api_root, tenant, s, include_project, prefixes) for s in stacks]
    result: dict[str, Any] = {"stacks": formatted}
    links = next_links(request, formatted)
    if links:
        result["links"] = links
    if count is not None:
        result["count"] = count
    return result


_SUMMARY_SHOWN = STACK_SUMMARY_KEYS - _STACK_SKIP


def _summary(api_root: str, tenant: str, stack: Mapping[str, Any], include_project: bool,
             prefixes: dict[str, str]) -> dict[str, Any]:
    """``format_stack`` with the summary keys, cheaper for the usual engine shape (a plain
    identity dict with no path): a list of hundreds builds each link from a per-tenant
    URL prefix instead of quoting and checking every part of every identity again."""
    found = stack.get("stack_identity")
    if type(found) is not dict or found.get("path") or not found.get("stack_name") \
            or "stack_id" not in found:
        return format_stack(api_root, tenant, stack, keys=STACK_SUMMARY_KEYS,
                            include_project=include_project)
    owner = str(found.get("tenant") or tenant)
    name, sid = str(found["stack_name"]), str(found["stack_id"])
    prefix = prefixes.get(owner)
    if prefix is None:
        prefix = prefixes[owner] = f"{api_root}{ident.segment(owner)}/stacks/"
    if "/" in name:
        ident.make_url(api_root, found)  # raises Heat's 400, as format_stack would
    out: dict[str, Any] = {"id": sid, "links": [
        {"href": f"{prefix}{ident.segment(name)}/{ident.segment(sid)}", "rel": "self"}]}
    if include_project:
        out["project"] = owner
    for key, value in stack.items():
        if key in _SUMMARY_SHOWN:
            out[key] = (_joined_status(stack, "stack_action", "stack_status")
                        if key == "stack_status" else value)
    return out
