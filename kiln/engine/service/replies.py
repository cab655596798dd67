"""What EngineService returns, built here from records and live stacks: one TypedDict per
reply, defined in :mod:`.shapes` (which the APIs read without reaching the database).

Keys are Heat's REST field names (no links: the API adds them). Identities are Heat's
engine-side dicts (``stack_identity``, ``resource_identity``, ``event_identity``) so the
API can build links without another lookup; the joined ``*_status`` and the separate
``*_action`` are both present. Each call has one shape (never "a dict or a one-element
list"); keys marked ``NotRequired`` are present only where Heat shows them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, cast

from kiln.db.records import EventRecord, StackRecord
from kiln.engine.model.live_stack import Slot, StackInfo
from kiln.engine.model.shapes import OutputReply, StackIdentityReply
from kiln.engine.model.shapes import isotime as isotime
from kiln.engine.service.shapes import (
    EventReply,
    PreviewResourceReply,
    ResourceReply,
    StackDetailReply,
    StackSummaryReply,
)


def identity(rec: StackRecord, path: str = "") -> StackIdentityReply:
    return {"stack_name": rec.name, "stack_id": rec.id, "tenant": rec.project_id,
            "path": path}


def stack_summary(rec: StackRecord, description: str = "") -> StackSummaryReply:
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


def stack_summary_row(row: tuple[Any, ...]) -> StackSummaryReply:
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
                 outputs: Sequence[OutputReply] | None) -> StackDetailReply:
    # mypy asks a ** item to carry the NotRequired "outputs" too: the literal is checked
    # key by key all the same, and "outputs" is added below
    out = cast(StackDetailReply, {
        **stack_summary(rec, description),
        "notification_topics": [],
        "parameters": dict(parameters),
        "template_description": description,
        "capabilities": [],
        "disable_rollback": rec.disable_rollback,
        "timeout_mins": rec.timeout,
        "tags": list(rec.tags),
    })
    if outputs is not None and not (rec.action == "DELETE" and rec.status == "COMPLETE"):
        out["outputs"] = [OutputReply(**o) for o in outputs]
    return out


class ShownColumns(Protocol):
    """The columns a resource reply shows: a ``ResourceRecord`` has them, and so has
    the narrower row agents' polls read (``kiln.db.agent_view.AgentRow``)."""

    @property
    def name(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def physical_resource_id(self) -> str | None: ...
    @property
    def action(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def status_reason(self) -> str: ...
    @property
    def metadata(self) -> Any: ...
    def shown_metadata(self) -> Any: ...
    @property
    def created_at(self) -> dt.datetime: ...
    @property
    def updated_at(self) -> dt.datetime | None: ...


def resource(rec: ShownColumns, stack: StackRecord, *, required_by: Sequence[str],
             detail: bool = False, description: str = "",
             attributes: Mapping[str, Any] | None = None,
             nested_stack: StackRecord | None = None) -> ResourceReply:
    out: ResourceReply = {
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
        out["metadata"] = rec.shown_metadata() or {}
        out["attributes"] = dict(attributes or {})
    return out


def event(rec: EventRecord, stack: StackRecord) -> EventReply:
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


def slot_resource(slot: Slot, info: StackInfo, *, required_by: Sequence[str],
                  properties: Mapping[str, Any] | None = None,
                  attributes: Mapping[str, Any] | None = None,
                  as_new: bool = False) -> PreviewResourceReply:
    """A resource of a live (possibly unsaved) stack, as preview shows it; ``as_new``
    shows it as the INIT resource an action would create."""
    state = slot.state
    action, status = ("INIT", "COMPLETE") if as_new else (state.action, state.status)
    ident = StackIdentityReply(stack_name=info.name, stack_id=info.id,
                               tenant=info.project_id, path="")
    out: PreviewResourceReply = {
        "resource_identity": {**ident, "path": f"/resources/{slot.name}"},
        "stack_identity": ident,
        "stack_name": info.name,
        "resource_name": slot.name,
        "physical_resource_id": "" if as_new else (slot.physical_id or ""),
        "resource_action": action,
        "resource_status": f"{action}_{status}",
        "resource_status_reason": "" if as_new else state.status_reason,
        "resource_type": slot.definition.type,
        "creation_time": None if as_new else isotime(slot.created_at),
        "updated_time": None if as_new else isotime(slot.updated_at or slot.created_at),
        "required_by": list(required_by),
        "description": "",
        "metadata": {} if as_new else state.shown_metadata(),
        "attributes": dict(attributes or {}),
    }
    if properties is not None:
        out["properties"] = dict(properties)
    if info.parent_resource_name:
        out["parent_resource"] = info.parent_resource_name
    return out
