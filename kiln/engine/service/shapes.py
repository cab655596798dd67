"""The replies' shapes: one TypedDict per EngineService reply (built in :mod:`.replies`).

Keys are Heat's REST field names (no links: the API adds them). Kept apart from the
builders so the interface the APIs type against (:mod:`.interface`) imports no record,
no live stack and nothing of the database (docs/contracts.md).
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from kiln.engine.model.shapes import OutputReply as OutputReply
from kiln.engine.model.shapes import SoftwareConfigReply as SoftwareConfigReply
from kiln.engine.model.shapes import SoftwareConfigSummaryReply as SoftwareConfigSummaryReply
from kiln.engine.model.shapes import SoftwareDeploymentReply as SoftwareDeploymentReply
from kiln.engine.model.shapes import StackIdentityReply as StackIdentityReply


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
