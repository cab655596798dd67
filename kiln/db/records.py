"""What the repositories hand back and take in.

Records are frozen snapshots, detached from any session: the async facade runs queries on
other threads, so nothing returned may lazy-load or be mutated in the hope of being saved.
Partial updates are ``TypedDict``s so that mypy catches a misspelt column name at the
call site rather than the database at run time.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

SortDir = Literal["asc", "desc"]


@dataclass(frozen=True, slots=True)
class RawTemplateRecord:
    id: int
    template: Mapping[str, Any]
    #: Decrypted: hidden parameter values are plaintext here.
    environment: Mapping[str, Any]
    files: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class StackRecord:
    id: str
    name: str
    project_id: str
    user_id: str | None
    username: str | None
    owner_id: str | None
    root_stack_id: str
    nested_depth: int
    parent_resource_name: str | None
    action: str
    status: str
    status_reason: str
    raw_template_id: int
    prev_raw_template_id: int | None
    timeout: int | None
    disable_rollback: bool
    stack_user_project_id: str | None
    current_traversal: str | None
    outputs: Any
    engine_id: str | None
    lock_time: dt.datetime | None
    created_at: dt.datetime
    updated_at: dt.datetime | None
    deleted_at: dt.datetime | None
    #: the update in progress (or last run) had Heat's ``converge`` flag
    converge: bool = False
    tags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NewStack:
    name: str
    project_id: str
    template: Mapping[str, Any]
    environment: Mapping[str, Any] = field(default_factory=dict)
    files: Mapping[str, str] = field(default_factory=dict)
    #: Parameter names whose values in ``environment["parameters"]`` are encrypted at rest.
    hidden_params: Sequence[str] = ()
    id: str | None = None                    # generated (uuid4) when None
    user_id: str | None = None
    username: str | None = None
    owner_id: str | None = None
    root_stack_id: str | None = None         # defaults to the owner's root, or the stack itself
    nested_depth: int = 0
    parent_resource_name: str | None = None
    action: str = "CREATE"
    status: str = "IN_PROGRESS"
    status_reason: str = ""
    timeout: int | None = None
    disable_rollback: bool = True
    stack_user_project_id: str | None = None
    current_traversal: str | None = None
    tags: Sequence[str] = ()
    #: Take the stack lock for this engine in the same transaction.
    engine_id: str | None = None


class StackValues(TypedDict, total=False):
    name: str
    action: str
    status: str
    status_reason: str
    raw_template_id: int
    prev_raw_template_id: int | None
    timeout: int | None
    disable_rollback: bool
    converge: bool
    current_traversal: str | None
    outputs: Any
    updated_at: dt.datetime | None
    username: str | None
    user_id: str | None
    parent_resource_name: str | None
    stack_user_project_id: str | None


@dataclass(frozen=True, slots=True)
class StackQuery:
    """Heat's GET /stacks semantics (see ``stacks.list_stacks``)."""

    #: None = all projects (global_tenant, admin only; the caller checks policy).
    project_id: str | None = None
    #: Exact-match filters on id, name, status, action, project_id (or Heat's ``tenant``),
    #: username, owner_id; a list/tuple value matches any of its members.
    filters: Mapping[str, Any] = field(default_factory=dict)
    tags: Sequence[str] = ()          # has all of these
    tags_any: Sequence[str] = ()      # has at least one
    not_tags: Sequence[str] = ()      # does not have all of these
    not_tags_any: Sequence[str] = ()  # has none of these
    #: Stacks with any of these are hidden unless show_hidden; None = CONF.hidden_stack_tags.
    hidden_tags: Sequence[str] | None = None
    show_hidden: bool = False
    show_deleted: bool = False
    show_nested: bool = False
    #: Kiln's own search (the dashboard's): names containing this, any case
    name_contains: str | None = None
    limit: int | None = None
    marker: str | None = None         # a stack id; results start after it
    #: Heat's names: stack_name, stack_status, creation_time, updated_time.
    sort_keys: Sequence[str] = ()
    sort_dir: SortDir | None = None


@dataclass(frozen=True, slots=True)
class LockResult:
    acquired: bool
    #: The engine holding the lock now (this engine when acquired).
    holder: str | None


@dataclass(frozen=True, slots=True)
class ResourceRecord:
    id: int
    uuid: str
    stack_id: str
    root_stack_id: str
    name: str
    type: str
    physical_resource_id: str | None
    action: str
    status: str
    status_reason: str
    properties_data: Any
    attributes: Any
    metadata: Any
    progress: Any
    progress_action: str | None
    replaces: int | None
    replaced_by: int | None
    requires: Any
    needed_by: Any
    traversal_id: str | None
    engine_id: str | None
    created_at: dt.datetime
    updated_at: dt.datetime | None
    #: Resource data, decrypted.
    data: Mapping[str, str] = field(default_factory=dict)
    #: The signals the resource keeps (``resource_signal`` rows), by signal id in the
    #: order they came, and each one's size in bytes; shown merged into the metadata.
    signals: Mapping[str, Any] = field(default_factory=dict)
    signal_sizes: Mapping[str, int] = field(default_factory=dict)

    def shown_metadata(self) -> Any:
        """The metadata as Heat's API shows it: the stored document plus the signals."""
        return merged_metadata(self.metadata, self.signals)


def merged_metadata(metadata: Any, signals: Mapping[str, Any]) -> Any:
    """``metadata`` with ``signals`` added, as Heat keeps them (one key per signal id)."""
    if not signals:
        return metadata
    return {**(metadata or {}), **signals}


@dataclass(frozen=True, slots=True)
class NewResource:
    stack_id: str
    root_stack_id: str
    name: str
    type: str
    action: str = "INIT"
    status: str = "COMPLETE"
    status_reason: str = ""
    physical_resource_id: str | None = None
    properties_data: Any = None
    metadata: Any = None
    requires: Sequence[str] | None = None
    needed_by: Sequence[str] | None = None
    replaces: int | None = None
    traversal_id: str | None = None
    uuid: str | None = None  # generated when None


@dataclass(frozen=True, slots=True)
class ResourceDataChange:
    """One resource's data keys to write: ``new`` ones (not stored yet), ``changed``
    ones (stored, with a new value) and ``gone`` ones (to delete); keys in ``secret``
    are stored encrypted (Heat's redacted resource data)."""

    resource_id: int
    new: Mapping[str, str] = field(default_factory=dict)
    changed: Mapping[str, str] = field(default_factory=dict)
    gone: Sequence[str] = ()
    secret: frozenset[str] = frozenset()


class ResourceValues(TypedDict, total=False):
    name: str
    type: str
    physical_resource_id: str | None
    action: str
    status: str
    status_reason: str
    properties_data: Any
    attributes: Any
    metadata: Any
    progress: Any
    progress_action: str | None
    replaces: int | None
    replaced_by: int | None
    requires: Any
    needed_by: Any
    traversal_id: str | None
    engine_id: str | None
    stack_id: str
    updated_at: dt.datetime | None


@dataclass(frozen=True, slots=True)
class EventRecord:
    id: int
    uuid: str
    stack_id: str
    resource_name: str
    physical_resource_id: str | None
    resource_type: str
    resource_action: str
    resource_status: str
    resource_status_reason: str
    resource_properties: Any
    created_at: dt.datetime


@dataclass(frozen=True, slots=True)
class NewEvent:
    stack_id: str
    resource_name: str
    resource_type: str
    resource_action: str
    resource_status: str
    resource_status_reason: str = ""
    physical_resource_id: str | None = None
    resource_properties: Any = None
    uuid: str | None = None                 # generated when None
    created_at: dt.datetime | None = None   # now when None


@dataclass(frozen=True, slots=True)
class EventQuery:
    """Heat's GET .../events semantics (see ``events.list_events``)."""

    stack_ids: Sequence[str]
    #: Exact-match filters on resource_action, resource_status, resource_name,
    #: resource_type, physical_resource_id, uuid; list values match any member.
    filters: Mapping[str, Any] = field(default_factory=dict)
    limit: int | None = None
    marker: str | None = None              # an event uuid
    #: Heat's names: event_time, resource_type (others are ignored, as Heat does).
    sort_keys: Sequence[str] = ()
    sort_dir: SortDir | None = None


@dataclass(frozen=True, slots=True)
class SnapshotRecord:
    id: str
    stack_id: str
    project_id: str
    name: str | None
    data: Any
    action: str
    status: str
    status_reason: str
    created_at: dt.datetime
    updated_at: dt.datetime | None


class SnapshotValues(TypedDict, total=False):
    name: str | None
    data: Any
    action: str
    status: str
    status_reason: str


@dataclass(frozen=True, slots=True)
class SoftwareConfigRecord:
    id: str
    project_id: str
    name: str | None
    group: str | None
    config: Any
    created_at: dt.datetime
    updated_at: dt.datetime | None


@dataclass(frozen=True, slots=True)
class SoftwareDeploymentRecord:
    id: str
    project_id: str
    config_id: str
    server_id: str
    input_values: Any
    output_values: Any
    stack_user_project_id: str | None
    action: str
    status: str
    status_reason: str
    created_at: dt.datetime
    updated_at: dt.datetime | None


class SoftwareDeploymentValues(TypedDict, total=False):
    config_id: str
    input_values: Any
    output_values: Any
    action: str
    status: str
    status_reason: str
    stack_user_project_id: str | None


@dataclass(frozen=True, slots=True)
class ServiceRecord:
    id: str
    engine_id: str
    host: str
    hostname: str
    binary: str
    topic: str
    report_interval: int
    created_at: dt.datetime
    updated_at: dt.datetime
    deleted_at: dt.datetime | None


@dataclass(frozen=True, slots=True)
class KeypairRecord:
    """An issued EC2 keypair; ``secret`` is plaintext here (encrypted in the table)."""

    access_key: str
    secret: str
    project_id: str
    user_id: str
    stack_id: str | None
    resource_name: str | None


@dataclass(frozen=True, slots=True)
class UserCredsRecord:
    """What Kiln keeps to act for a top-level stack's owner (``user_creds``). Decrypted:
    the secrets are plaintext here and hidden from ``repr`` (log lines)."""

    stack_id: str
    method: str                      # "trusts" | "password"
    trustor_user_id: str
    project_id: str
    trust_id: str | None = field(default=None, repr=False)
    username: str | None = None
    password: str | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class ChangeSetRecord:
    id: str
    name: str
    stack_id: str
    stack_name: str
    project_id: str
    change_type: str
    description: str | None
    status: str
    status_reason: str
    execution: str | None
    fingerprint: str
    request: Any
    changes: Any
    created_at: dt.datetime
    executed_at: dt.datetime | None


class ChangeSetValues(TypedDict, total=False):
    status: str
    status_reason: str
    execution: str | None
    fingerprint: str
    changes: Any
    executed_at: dt.datetime | None
    stack_id: str
    request: Any


@dataclass(frozen=True, slots=True)
class StackVersionRecord:
    id: int
    stack_id: str
    version: int
    action: str
    template: Any
    environment: Any
    files: Any
    created_at: dt.datetime
