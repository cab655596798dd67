"""Records → the dicts EngineService returns (Heat's REST field names, no links).

Identities are included as Heat's engine-side dicts (``stack_identity``,
``resource_identity``, ``event_identity``) so the API can build links without another
lookup; the joined ``*_status`` and the separate ``*_action`` are both present.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from kiln.db.records import EventRecord, ResourceRecord, StackRecord


def isotime(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    return value.replace(microsecond=0).isoformat() + "Z"


def identity(rec: StackRecord | Any, path: str = "") -> dict[str, str]:
    return {"stack_name": rec.name, "stack_id": rec.id, "tenant": rec.project_id,
            "path": path}


def stack_summary(rec: StackRecord, description: str = "") -> dict[str, Any]:
    return {
        "stack_identity": identity(rec),
        "id": rec.id,
        "stack_name": rec.name,
        "description": description,
        "stack_action": rec.action,
        "stack_status": f"{rec.action}_{rec.status}",
        "stack_status_reason": rec.status_reason,
        "creation_time": isotime(rec.created_at),
        "updated_time": isotime(rec.updated_at),
        "deletion_time": isotime(rec.deleted_at),
        "stack_owner": rec.username,
        "parent": rec.owner_id,
        "stack_user_project_id": rec.stack_user_project_id or rec.project_id,
        "tags": list(rec.tags) or None,
    }


def stack_summary_row(row: tuple[Any, ...]) -> dict[str, Any]:
    """``stack_summary`` of a ``db.stacks.list_stack_summaries`` tuple, which holds only
    what a listing shows; the listing's description is empty, as Heat's."""
    (sid, name, project, username, owner, action, status, reason, user_project,
     created, updated, deleted, tags) = row
    return {
        "stack_identity": {"stack_name": name, "stack_id": sid, "tenant": project,
                           "path": ""},
        "id": sid,
        "stack_name": name,
        "description": "",
        "stack_action": action,
        "stack_status": f"{action}_{status}",
        "stack_status_reason": reason,
        "creation_time": _naive_isotime(created),
        "updated_time": _naive_isotime(updated),
        "deletion_time": _naive_isotime(deleted),
        "stack_owner": username,
        "parent": owner,
        "stack_user_project_id": user_project or project,
        "tags": list(tags) or None,
    }


def _naive_isotime(value: dt.datetime | None) -> str | None:
    # the columns hold naive UTC; timespec="seconds" drops the microseconds as isotime does
    if value is None:
        return None
    if value.tzinfo is not None:
        return isotime(value)
    return value.isoformat(timespec="seconds") + "Z"


def stack_detail(rec: StackRecord, *, parameters: Mapping[str, Any], description: str,
                 outputs: Sequence[Mapping[str, Any]] | None) -> dict[str, Any]:
    out = stack_summary(rec, description)
    out.update({
        "notification_topics": [],
        "parameters": dict(parameters),
        "template_description": description,
        "capabilities": [],
        "disable_rollback": rec.disable_rollback,
        "timeout_mins": rec.timeout,
        "tags": list(rec.tags),
    })
    if outputs is not None and not (rec.action == "DELETE" and rec.status == "COMPLETE"):
        out["outputs"] = [dict(o) for o in outputs]
    return out


def resource(rec: ResourceRecord, stack: StackRecord, *, required_by: Sequence[str],
             detail: bool = False, description: str = "",
             attributes: Mapping[str, Any] | None = None,
             nested_stack: StackRecord | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "resource_identity": identity(stack, f"/resources/{rec.name}"),
        "stack_identity": identity(stack),
        "stack_name": stack.name,
        "resource_name": rec.name,
        "logical_resource_id": rec.name,
        "physical_resource_id": rec.physical_resource_id or "",
        "resource_action": rec.action,
        "resource_status": f"{rec.action}_{rec.status}",
        "resource_status_reason": rec.status_reason,
        "resource_type": rec.type,
        "creation_time": isotime(rec.created_at),
        "updated_time": isotime(rec.updated_at or rec.created_at),
        "required_by": list(required_by),
    }
    if nested_stack is not None:
        out["nested_stack_id"] = identity(nested_stack)
    if stack.parent_resource_name:
        out["parent_resource"] = stack.parent_resource_name
    if detail:
        out["description"] = description
        out["metadata"] = rec.metadata or {}
        out["attributes"] = dict(attributes or {})
    return out


def event(rec: EventRecord, stack: StackRecord) -> dict[str, Any]:
    return {
        "event_identity": identity(stack, f"/resources/{rec.resource_name}/events/{rec.uuid}"),
        "id": rec.uuid,
        "stack_identity": identity(stack),
        "stack_name": stack.name,
        "event_time": isotime(rec.created_at),
        "resource_name": rec.resource_name,
        "logical_resource_id": rec.resource_name,
        "physical_resource_id": rec.physical_resource_id,
        "resource_action": rec.resource_action,
        "resource_status": f"{rec.resource_action}_{rec.resource_status}",
        "resource_status_reason": rec.resource_status_reason,
        "resource_type": rec.resource_type,
        "resource_properties": rec.resource_properties,
    }


def slot_resource(slot: Any, info: Any, *, required_by: Sequence[str],
                  properties: Mapping[str, Any] | None = None,
                  attributes: Mapping[str, Any] | None = None,
                  as_new: bool = False) -> dict[str, Any]:
    """A resource of a live (possibly unsaved) stack, as preview shows it; ``as_new``
    shows it as the INIT resource an action would create."""
    state = slot.state
    action, status = ("INIT", "COMPLETE") if as_new else (state.action, state.status)
    ident = {"stack_name": info.name, "stack_id": info.id, "tenant": info.project_id,
             "path": ""}
    out: dict[str, Any] = {
        "resource_identity": {**ident, "path": f"/resources/{slot.name}"},
        "stack_identity": ident,
        "stack_name": info.name,
        "resource_name": slot.name,
        "logical_resource_id": slot.name,
        "physical_resource_id": "" if as_new else (slot.physical_id or ""),
        "resource_action": action,
        "resource_status": f"{action}_{status}",
        "resource_status_reason": "" if as_new else state.status_reason,
        "resource_type": slot.definition.type,
        "creation_time": None if as_new else isotime(slot.created_at),
        "updated_time": None if as_new else isotime(slot.updated_at or slot.created_at),
        "required_by": list(required_by),
        "description": "",
        "metadata": {} if as_new else dict(state.metadata or {}),
        "attributes": dict(attributes or {}),
    }
    if properties is not None:
        out["properties"] = dict(properties)
    return out
