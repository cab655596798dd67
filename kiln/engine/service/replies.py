"""What EngineService returns: one TypedDict per reply, built from records here.

Keys are Heat's REST field names (no links: the API adds them). Identities are Heat's
engine-side dicts (``stack_identity``, ``resource_identity``, ``event_identity``) so the
API can build links without another lookup; the joined ``*_status`` and the separate
``*_action`` are both present. Each call has one shape (never "a dict or a one-element
list"); keys marked ``NotRequired`` are present only where Heat shows them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, Protocol, TypedDict, cast

from kiln.db.records import EventRecord, StackRecord
from kiln.engine.model.live_stack import Slot, StackInfo
from kiln.engine.model.live_stack import StackIdentityReply as StackIdentityReply
from kiln.engine.model.outputs import OutputReply as OutputReply


class OutputSummaryReply(TypedDict):
    """An output as the output list names it (no value)."""

    output_key: str
    description: str


class StackSummaryReply(TypedDict):
    """A stack as the stack list shows it."""

    stack_identity: StackIdentityReply
    id: str
    stack_name: str
    description: str
    stack_action: str
    stack_status: str
    stack_status_reason: str
    creation_time: str | None
    updated_time: str | None
    deletion_time: str | None
    stack_owner: str | None
    parent: str | None
    stack_user_project_id: str
    tags: list[str] | None
    #: the listing with global_tenant shows each stack's project
    project: NotRequired[str]


class StackDetailReply(StackSummaryReply):
    """A stack as stack show gives it (outputs unless it is deleted)."""

    notification_topics: list[str]
    parameters: dict[str, Any]
    template_description: str
    capabilities: list[str]
    disable_rollback: bool
    timeout_mins: int | None
    outputs: NotRequired[list[OutputReply]]
    #: the outputs were resolved for this read (not shown to clients)
    outputs_live: NotRequired[bool]


class ResourceReply(TypedDict):
    """A resource as resource show and the resource list give it."""

    resource_identity: StackIdentityReply
    stack_identity: StackIdentityReply
    stack_name: str
    resource_name: str
    logical_resource_id: str
    physical_resource_id: str
    resource_action: str
    resource_status: str
    resource_status_reason: str
    resource_type: str
    creation_time: str | None
    updated_time: str | None
    required_by: list[str]
    nested_stack_id: NotRequired[StackIdentityReply]
    parent_resource: NotRequired[str]
    description: NotRequired[str]
    metadata: NotRequired[Any]
    attributes: NotRequired[dict[str, Any]]


class PreviewResourceReply(TypedDict):
    """A resource as a stack preview and an update preview list it: Heat shows no
    ``logical_resource_id`` there, and names the parent resource of a nested stack's."""

    resource_identity: StackIdentityReply
    stack_identity: StackIdentityReply
    stack_name: str
    resource_name: str
    physical_resource_id: str
    resource_action: str
    resource_status: str
    resource_status_reason: str
    resource_type: str
    creation_time: str | None
    updated_time: str | None
    required_by: list[str]
    description: str
    metadata: Any
    attributes: dict[str, Any]
    #: stack preview only: the resolved properties
    properties: NotRequired[dict[str, Any]]
    #: a nested stack's resources: the resource of the parent stack that makes it
    parent_resource: NotRequired[str]


class EventReply(TypedDict):
    event_identity: StackIdentityReply
    id: str
    stack_identity: StackIdentityReply
    stack_name: str
    event_time: str | None
    resource_name: str
    logical_resource_id: str
    physical_resource_id: str | None
    resource_action: str
    resource_status: str
    resource_status_reason: str
    resource_type: str
    resource_properties: Any
    #: the listing across a nested tree names each event's root stack
    root_stack_id: NotRequired[StackIdentityReply]


class SnapshotReply(TypedDict):
    """A snapshot as snapshot create, show and list give it (``data`` is the stack's
    abandon-style dump, None while the snapshot is being taken)."""

    id: str
    name: str | None
    action: str
    status: str
    status_reason: str | None
    data: Any
    creation_time: str | None


class SoftwareConfigSummaryReply(TypedDict):
    """A software config as the config list names it (no document)."""

    id: str
    name: str | None
    group: str | None
    creation_time: str | None
    #: an admin's listing names each config's project, as Heat's does
    project: NotRequired[str]


class SoftwareConfigReply(TypedDict):
    """A software config as create, show and a server's deployment metadata give it."""

    id: str
    name: str | None
    group: str | None
    creation_time: str | None
    config: Any
    inputs: list[Any]
    outputs: list[Any]
    options: Any


class SoftwareDeploymentReply(TypedDict):
    """A software deployment as create, show, update and the list give it."""

    id: str
    server_id: str
    config_id: str
    input_values: Any
    output_values: Any
    action: str
    status: str
    status_reason: str
    creation_time: str | None
    #: present once the deployment has been updated, as in Heat
    updated_time: NotRequired[str | None]


class TemplateVersionReply(TypedDict):
    """A template version as the version list names it."""

    version: str
    type: str
    aliases: list[str]


class TemplateFunctionReply(TypedDict):
    """A function of a template version, as the function list names it."""

    functions: str
    description: str


class ServiceReply(TypedDict):
    """An engine as the service list shows it (times naive ISO with microseconds)."""

    id: str
    binary: str
    engine_id: str
    host: str
    hostname: str
    topic: str
    report_interval: int
    created_at: str | None
    updated_at: str | None
    deleted_at: str | None
    status: str


def isotime(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    return value.replace(microsecond=0).isoformat() + "Z"


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
