"""Kiln's tables.

One table per thing Heat persists, with the columns Heat's APIs expose, plus the
columns Kiln's engine needs to resume work after a crash (the progress token of a running
resource step, the engine holding a stack's lock and since when). Relationships are
deliberately absent: repositories issue explicit queries and return plain records, so no
object ever lazy-loads on a thread that does not own its session.

Integer ids use AUTOINCREMENT on SQLite so a deleted resource's or event's id is never
handed out again (Heat's API exposes them; reuse would make a stale id point at a new row).
Timestamps are naive UTC with microseconds on every backend (MySQL's plain DATETIME would
drop them and break "newest first" ordering of events created in the same second).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from kiln.db.crypt import SealedJson, SealedText

#: Naive UTC timestamp with microseconds on MySQL/MariaDB too.
Timestamp = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
#: JSON document (LONGTEXT-backed on MariaDB); Python None is SQL NULL, which reads back
#: without a JSON decode.
Json = sa.JSON(none_as_null=True).with_variant(mysql.JSON(none_as_null=True), "mysql", "mariadb")
#: JSON document stored encrypted (``crypt.SealedJson``): the columns holding copies of
#: secrets (outputs, snapshots, metadata, deployment configs and values). On disk the
#: same JSON column as ``Json``.
Sealed = SealedJson(none_as_null=True)
#: Long free text (status reasons, secret values).
LongText = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")
#: ``LongText`` stored encrypted (``crypt.SealedText``).
SealedLongText = SealedText()

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> dt.datetime:
    """Naive UTC now, the form every timestamp column stores."""
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


class Base(DeclarativeBase):
    metadata = sa.MetaData(naming_convention=NAMING)
    type_annotation_map = {dt.datetime: Timestamp, dict[str, Any]: Json}


_TABLE_ARGS: dict[str, Any] = {"mysql_engine": "InnoDB", "mysql_charset": "utf8mb4",
                               # names compare case-sensitively, as on SQLite/PostgreSQL and in Heat
                               "mysql_collate": "utf8mb4_bin",
                               "sqlite_autoincrement": True}


class RawTemplate(Base):
    """A template as the user sent it, with its environment and files.

    Separate from the stack so an update can keep the previous one for rollback.
    The environment's hidden parameter values are encrypted (see ``crypt``).
    """

    __tablename__ = "raw_template"
    __table_args__ = (_TABLE_ARGS,)
    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True, autoincrement=True)
    template: Mapped[Any] = mapped_column(Json, nullable=False)
    environment: Mapped[Any] = mapped_column(Json, nullable=False)
    files: Mapped[Any] = mapped_column(Json, nullable=False)
    created_at: Mapped[dt.datetime] = mapped_column(Timestamp, default=utcnow)


class Stack(Base):
    __tablename__ = "stack"
    __table_args__ = (
        sa.Index("ix_stack_project_name", "project_id", "name"),
        sa.Index("ix_stack_owner_id", "owner_id"),
        sa.Index("ix_stack_root_stack_id", "root_stack_id"),
        sa.Index("ix_stack_engine_id", "engine_id"),
        _TABLE_ARGS,
    )
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    project_id: Mapped[str] = mapped_column(sa.String(256), nullable=False)
    user_id: Mapped[str | None] = mapped_column(sa.String(64))
    username: Mapped[str | None] = mapped_column(sa.String(256))
    owner_id: Mapped[str | None] = mapped_column(sa.String(36))
    root_stack_id: Mapped[str] = mapped_column(sa.String(36), nullable=False)
    nested_depth: Mapped[int] = mapped_column(sa.Integer, nullable=False, default=0)
    parent_resource_name: Mapped[str | None] = mapped_column(sa.String(255))
    action: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    status: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    status_reason: Mapped[str] = mapped_column(LongText, nullable=False, default="")
    raw_template_id: Mapped[int] = mapped_column(
        sa.ForeignKey("raw_template.id"), nullable=False)
    prev_raw_template_id: Mapped[int | None] = mapped_column(sa.ForeignKey("raw_template.id"))
    timeout: Mapped[int | None] = mapped_column(sa.Integer)
    disable_rollback: Mapped[bool] = mapped_column(sa.Boolean, nullable=False, default=True)
    #: the running update has Heat's ``converge`` flag: an engine taking the update over
    #: (or taking one an API process admitted) runs it with the flag too (0011)
    converge: Mapped[bool] = mapped_column(sa.Boolean, nullable=False, default=False,
                                           server_default=sa.false())
    stack_user_project_id: Mapped[str | None] = mapped_column(sa.String(64))
    current_traversal: Mapped[str | None] = mapped_column(sa.String(36))
    #: resolved outputs (RandomString values, keys, signed URLs): sealed
    outputs: Mapped[Any | None] = mapped_column(Sealed)
    #: Engine holding the stack lock (None = unlocked) and since when.
    engine_id: Mapped[str | None] = mapped_column(sa.String(36))
    lock_time: Mapped[dt.datetime | None] = mapped_column(Timestamp)
    created_at: Mapped[dt.datetime] = mapped_column(Timestamp, nullable=False, default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column(Timestamp)
    deleted_at: Mapped[dt.datetime | None] = mapped_column(Timestamp)


class StackTag(Base):
    __tablename__ = "stack_tag"
    __table_args__ = (sa.Index("ix_stack_tag_stack_id_tag", "stack_id", "tag"), _TABLE_ARGS)
    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True, autoincrement=True)
    stack_id: Mapped[str] = mapped_column(
        sa.ForeignKey("stack.id", ondelete="CASCADE"), nullable=False)
    tag: Mapped[str] = mapped_column(sa.String(80), nullable=False)
    #: Declaration order, so tags come back as the user gave them.
    position: Mapped[int] = mapped_column(sa.Integer, nullable=False, default=0)


class Resource(Base):
    __tablename__ = "resource"
    __table_args__ = (
        sa.Index("ix_resource_stack_id_name", "stack_id", "name"),
        sa.Index("ix_resource_root_stack_id", "root_stack_id"),
        sa.Index("ix_resource_physical_resource_id", "physical_resource_id"),
        _TABLE_ARGS,
    )
    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(sa.String(36), nullable=False, unique=True)
    stack_id: Mapped[str] = mapped_column(
        sa.ForeignKey("stack.id", ondelete="CASCADE"), nullable=False)
    root_stack_id: Mapped[str] = mapped_column(sa.String(36), nullable=False)
    name: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    type: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    physical_resource_id: Mapped[str | None] = mapped_column(sa.String(255))
    action: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    status: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    status_reason: Mapped[str] = mapped_column(LongText, nullable=False, default="")
    properties_data: Mapped[Any | None] = mapped_column(Json)
    attributes: Mapped[Any | None] = mapped_column(Json)
    #: a server's metadata carries its deployments' signal URLs and its password: sealed
    rsrc_metadata: Mapped[Any | None] = mapped_column(Sealed)
    #: Token returned by handle_<action>, persisted before check_<action>_complete runs.
    progress: Mapped[Any | None] = mapped_column(Json)
    progress_action: Mapped[str | None] = mapped_column(sa.String(255))
    replaces: Mapped[int | None] = mapped_column(sa.Integer)
    replaced_by: Mapped[int | None] = mapped_column(sa.Integer)
    requires: Mapped[Any | None] = mapped_column(Json)
    needed_by: Mapped[Any | None] = mapped_column(Json)
    traversal_id: Mapped[str | None] = mapped_column(sa.String(36))
    engine_id: Mapped[str | None] = mapped_column(sa.String(36))
    created_at: Mapped[dt.datetime] = mapped_column(Timestamp, nullable=False, default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column(Timestamp)


class ResourceData(Base):
    """Plugin-private key/value pairs; ``redact`` values are stored encrypted."""

    __tablename__ = "resource_data"
    __table_args__ = (sa.UniqueConstraint("resource_id", "key"), _TABLE_ARGS)
    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True, autoincrement=True)
    resource_id: Mapped[int] = mapped_column(
        sa.ForeignKey("resource.id", ondelete="CASCADE"), nullable=False)
    key: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    value: Mapped[str] = mapped_column(LongText, nullable=False)
    redact: Mapped[bool] = mapped_column(sa.Boolean, nullable=False, default=False)


class ResourceSignal(Base):
    """What a resource keeps of the signals it was sent, one row per signal id.

    A signal appends its row (or rewrites the row of a signal with the same id) instead
    of rewriting the resource's whole metadata document, which grew with every signal.
    Readers show the rows merged into the resource's metadata, where Heat keeps them;
    ``size`` (bytes of the entry as JSON) lets a loader total them without re-encoding.
    """

    __tablename__ = "resource_signal"
    __table_args__ = (sa.UniqueConstraint("resource_id", "key"), _TABLE_ARGS)
    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True, autoincrement=True)
    resource_id: Mapped[int] = mapped_column(
        sa.ForeignKey("resource.id", ondelete="CASCADE"), nullable=False)
    key: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    entry: Mapped[Any] = mapped_column(Json, nullable=False)
    size: Mapped[int] = mapped_column(sa.Integer, nullable=False)


class Event(Base):
    __tablename__ = "event"
    __table_args__ = (sa.Index("ix_event_stack_id_id", "stack_id", "id"), _TABLE_ARGS)
    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(sa.String(36), nullable=False, unique=True)
    stack_id: Mapped[str] = mapped_column(
        sa.ForeignKey("stack.id", ondelete="CASCADE"), nullable=False)
    resource_name: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    physical_resource_id: Mapped[str | None] = mapped_column(sa.String(255))
    resource_type: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    resource_action: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    resource_status: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    resource_status_reason: Mapped[str] = mapped_column(LongText, nullable=False, default="")
    resource_properties: Mapped[Any | None] = mapped_column(Json)
    created_at: Mapped[dt.datetime] = mapped_column(Timestamp, nullable=False, default=utcnow)


class Snapshot(Base):
    __tablename__ = "snapshot"
    __table_args__ = (sa.Index("ix_snapshot_stack_id", "stack_id"), _TABLE_ARGS)
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    stack_id: Mapped[str] = mapped_column(
        sa.ForeignKey("stack.id", ondelete="CASCADE"), nullable=False)
    project_id: Mapped[str] = mapped_column(sa.String(256), nullable=False)
    name: Mapped[str | None] = mapped_column(sa.String(255))
    #: the stack's outputs, parameters and resource data at the time: sealed
    data: Mapped[Any | None] = mapped_column(Sealed)
    action: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    status: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    status_reason: Mapped[str] = mapped_column(LongText, nullable=False, default="")
    created_at: Mapped[dt.datetime] = mapped_column(Timestamp, nullable=False, default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column(Timestamp)


class ChangeSet(Base):
    """A stored plan: the request an update (or a create) would run, the changes it was
    shown to make, and what the stack looked like then (``fingerprint``), so that it runs
    exactly as reviewed or not at all. Not tied to the stack row by a foreign key: a
    CREATE change set names a stack that does not exist yet."""

    __tablename__ = "change_set"
    __table_args__ = (sa.Index("ix_change_set_project_id_stack_name", "project_id",
                               "stack_name"),
                      sa.Index("ix_change_set_stack_id", "stack_id"), _TABLE_ARGS)
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    stack_id: Mapped[str] = mapped_column(sa.String(36), nullable=False)
    stack_name: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    project_id: Mapped[str] = mapped_column(sa.String(256), nullable=False)
    change_type: Mapped[str] = mapped_column(sa.String(16), nullable=False)
    description: Mapped[str | None] = mapped_column(LongText)
    status: Mapped[str] = mapped_column(sa.String(32), nullable=False)
    status_reason: Mapped[str] = mapped_column(LongText, nullable=False, default="")
    #: None until executed, then EXECUTE_IN_PROGRESS (the stack's action tells the rest)
    execution: Mapped[str | None] = mapped_column(sa.String(32))
    fingerprint: Mapped[str] = mapped_column(sa.String(64), nullable=False, default="")
    #: template, environment (hidden values included), files and args: sealed
    request: Mapped[Any | None] = mapped_column(Sealed)
    #: the changes as shown (property values included): sealed
    changes: Mapped[Any | None] = mapped_column(Sealed)
    created_at: Mapped[dt.datetime] = mapped_column(Timestamp, nullable=False, default=utcnow)
    executed_at: Mapped[dt.datetime | None] = mapped_column(Timestamp)


class StackVersion(Base):
    """One template, environment and file set a stack has had, with the action that
    brought it: the stack's history (``max_stack_versions`` kept per stack)."""

    __tablename__ = "stack_version"
    __table_args__ = (sa.UniqueConstraint("stack_id", "version"), _TABLE_ARGS)
    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True, autoincrement=True)
    stack_id: Mapped[str] = mapped_column(
        sa.ForeignKey("stack.id", ondelete="CASCADE"), nullable=False)
    version: Mapped[int] = mapped_column(sa.Integer, nullable=False)
    action: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    template: Mapped[Any] = mapped_column(Json, nullable=False)
    #: parameters included, hidden ones too: sealed
    environment: Mapped[Any | None] = mapped_column(Sealed)
    files: Mapped[Any | None] = mapped_column(Sealed)
    created_at: Mapped[dt.datetime] = mapped_column(Timestamp, nullable=False, default=utcnow)
class DriftDetection(Base):
    """One drift detection of a stack (kiln.db.drift): its status, its outcome and, per
    resource, what was expected and found. A stack keeps its latest few."""

    __tablename__ = "drift_detection"
    __table_args__ = (sa.Index("ix_drift_detection_stack_id", "stack_id"), _TABLE_ARGS)
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    stack_id: Mapped[str] = mapped_column(
        sa.ForeignKey("stack.id", ondelete="CASCADE"), nullable=False)
    #: "stack" (DetectStackDrift) or "resource" (DetectStackResourceDrift)
    scope: Mapped[str] = mapped_column(sa.String(16), nullable=False)
    status: Mapped[str] = mapped_column(sa.String(32), nullable=False)
    drift_status: Mapped[str | None] = mapped_column(sa.String(32))
    drifted_count: Mapped[int] = mapped_column(sa.Integer, nullable=False, default=0)
    status_reason: Mapped[str] = mapped_column(LongText, nullable=False, default="")
    #: per resource: expected and actual properties and their differences; sealed (the
    #: template's values may be a hidden parameter's)
    resources: Mapped[Any | None] = mapped_column(Sealed)
    created_at: Mapped[dt.datetime] = mapped_column(Timestamp, nullable=False, default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column(Timestamp)


class SoftwareConfig(Base):
    __tablename__ = "software_config"
    __table_args__ = (sa.Index("ix_software_config_project_id", "project_id"), _TABLE_ARGS)
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    project_id: Mapped[str] = mapped_column(sa.String(256), nullable=False)
    name: Mapped[str | None] = mapped_column(sa.String(255))
    group: Mapped[str | None] = mapped_column(sa.String(255))
    #: {"config", "inputs", "outputs", "options"} as Heat keeps it; sealed (a
    #: deployment's derived config holds its signal URL and password as input values)
    config: Mapped[Any | None] = mapped_column(Sealed)
    created_at: Mapped[dt.datetime] = mapped_column(Timestamp, nullable=False, default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column(Timestamp)


class SoftwareDeployment(Base):
    __tablename__ = "software_deployment"
    __table_args__ = (
        sa.Index("ix_software_deployment_server_id", "server_id"),
        sa.Index("ix_software_deployment_project_id", "project_id"),
        _TABLE_ARGS,
    )
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    project_id: Mapped[str] = mapped_column(sa.String(256), nullable=False)
    config_id: Mapped[str] = mapped_column(
        sa.ForeignKey("software_config.id"), nullable=False)
    server_id: Mapped[str] = mapped_column(sa.String(36), nullable=False)
    input_values: Mapped[Any | None] = mapped_column(Sealed)
    output_values: Mapped[Any | None] = mapped_column(Sealed)
    stack_user_project_id: Mapped[str | None] = mapped_column(sa.String(64))
    action: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    status: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    status_reason: Mapped[str] = mapped_column(LongText, nullable=False, default="")
    created_at: Mapped[dt.datetime] = mapped_column(Timestamp, nullable=False, default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column(Timestamp)


class Service(Base):
    """One running engine; ``updated_at`` is its heartbeat."""

    __tablename__ = "service"
    __table_args__ = (sa.UniqueConstraint("engine_id"), _TABLE_ARGS)
    id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    engine_id: Mapped[str] = mapped_column(sa.String(36), nullable=False)
    host: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    hostname: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    binary: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    topic: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    report_interval: Mapped[int] = mapped_column(sa.Integer, nullable=False)
    created_at: Mapped[dt.datetime] = mapped_column(Timestamp, nullable=False, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(Timestamp, nullable=False, default=utcnow)
    deleted_at: Mapped[dt.datetime | None] = mapped_column(Timestamp)


class Ec2Keypair(Base):
    """An EC2 keypair Kiln issued (no identity service): what a signed AWS request is
    checked against. A keypair issued for a stack's resource (a server's agent, an
    AWS::IAM::AccessKey, a pre-signed signal URL) names the stack and resource, and goes
    when they go. The secret is stored encrypted (``crypt``)."""

    __tablename__ = "ec2_keypair"
    __table_args__ = (sa.Index("ix_ec2_keypair_stack_id", "stack_id"), _TABLE_ARGS)
    access_key: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    secret: Mapped[str] = mapped_column(LongText, nullable=False)
    project_id: Mapped[str] = mapped_column(sa.String(256), nullable=False)
    user_id: Mapped[str] = mapped_column(sa.String(64), nullable=False)
    stack_id: Mapped[str | None] = mapped_column(sa.String(36))
    resource_name: Mapped[str | None] = mapped_column(sa.String(255))
    created_at: Mapped[dt.datetime] = mapped_column(Timestamp, nullable=False, default=utcnow)


class StackUser(Base):
    """A Keystone user Kiln made for a stack's resource (its servers' credentials), in
    keystone mode: one per stack and resource name, removed with the stack
    (kiln.auth.stack_users)."""

    __tablename__ = "stack_user"
    __table_args__ = (_TABLE_ARGS,)
    stack_id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    resource_name: Mapped[str] = mapped_column(sa.String(255), primary_key=True)
    user_id: Mapped[str] = mapped_column(sa.String(64), nullable=False)
    project_id: Mapped[str] = mapped_column(sa.String(64), nullable=False)
    created_at: Mapped[dt.datetime] = mapped_column(Timestamp, nullable=False, default=utcnow)


class ChangeCounter(Base):
    """A counter per kind of row, bumped in the same transaction as every change to those
    rows (``db.stacks`` bumps ``stacks``). A reader that saw value N has seen every change
    committed before N; the API reuses a stack list or show response while the counter
    it was built under is still current, even when another process made the change."""

    __tablename__ = "change_counter"
    __table_args__ = (_TABLE_ARGS,)
    name: Mapped[str] = mapped_column(sa.String(32), primary_key=True)
    value: Mapped[int] = mapped_column(sa.BigInteger, nullable=False, default=0)


#: The counters every database holds from creation (migration 0002 and ``create_all``).
CHANGE_COUNTERS = ("stacks",)


# -- metrics and alarms (kiln.alarms: the CloudWatch API and the watcher) -------------------

class MetricDatum(Base):
    """One data point a server (cfn-push-stats) or client pushed with PutMetricData.
    ``dimensions`` is the canonical JSON of the sorted name/value pairs, so a metric is
    (project, namespace, name, dimensions) and is looked up by equality."""

    __tablename__ = "metric_datum"
    __table_args__ = (
        # project and dimensions are filtered on the rows this narrows to: with them the key
        # passes MariaDB/MySQL's 3,072-byte index limit (utf8mb4: four bytes a character)
        sa.Index("ix_metric_datum_metric", "namespace", "metric_name", "timestamp"),
        sa.Index("ix_metric_datum_timestamp", "timestamp"),
        _TABLE_ARGS,
    )
    id: Mapped[int] = mapped_column(sa.BigInteger().with_variant(sa.Integer, "sqlite"),
                                    primary_key=True, autoincrement=True)
    project_id: Mapped[str] = mapped_column(sa.String(256), nullable=False)
    namespace: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    metric_name: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    dimensions: Mapped[str] = mapped_column(sa.String(2048), nullable=False, default="[]")
    unit: Mapped[str | None] = mapped_column(sa.String(32))
    value: Mapped[float] = mapped_column(sa.Float, nullable=False)
    #: seconds since the epoch (float: cheap range scans and arithmetic on every backend)
    timestamp: Mapped[float] = mapped_column(sa.Float, nullable=False)


class Alarm(Base):
    """An alarm (Heat's watch rule): made by PutMetricAlarm or by an alarm resource
    (``stack_id`` and ``resource_name`` then name it). ``rule`` holds the metric, statistic,
    period, threshold, comparison and actions; the state is AWS's (OK / ALARM /
    INSUFFICIENT_DATA)."""

    __tablename__ = "alarm"
    __table_args__ = (sa.UniqueConstraint("project_id", "name"), _TABLE_ARGS)
    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True, autoincrement=True)
    project_id: Mapped[str] = mapped_column(sa.String(256), nullable=False)
    name: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    stack_id: Mapped[str | None] = mapped_column(sa.String(36))
    resource_name: Mapped[str | None] = mapped_column(sa.String(255))
    #: sealed: its actions are pre-signed URLs (credentials to scale or signal)
    rule: Mapped[Any] = mapped_column(Sealed, nullable=False)
    actions_enabled: Mapped[bool] = mapped_column(sa.Boolean, nullable=False, default=True)
    state: Mapped[str] = mapped_column(sa.String(32), nullable=False,
                                       default="INSUFFICIENT_DATA")
    state_reason: Mapped[str] = mapped_column(LongText, nullable=False, default="")
    state_reason_data: Mapped[str | None] = mapped_column(LongText)
    state_updated_at: Mapped[float] = mapped_column(sa.Float, nullable=False, default=0.0)
    last_evaluated: Mapped[float] = mapped_column(sa.Float, nullable=False, default=0.0)
    created_at: Mapped[dt.datetime] = mapped_column(Timestamp, nullable=False, default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(Timestamp, nullable=False, default=utcnow)


class AlarmHistory(Base):
    """What happened to an alarm: state changes, configuration changes, actions run."""

    __tablename__ = "alarm_history"
    __table_args__ = (sa.Index("ix_alarm_history_project_name", "project_id", "alarm_name",
                               "timestamp"), _TABLE_ARGS)
    id: Mapped[int] = mapped_column(sa.Integer, primary_key=True, autoincrement=True)
    project_id: Mapped[str] = mapped_column(sa.String(256), nullable=False)
    alarm_name: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    item_type: Mapped[str] = mapped_column(sa.String(32), nullable=False)
    #: sealed, as the alarm's rule: both name the actions' pre-signed URLs
    summary: Mapped[str] = mapped_column(SealedLongText, nullable=False)
    data: Mapped[str] = mapped_column(SealedLongText, nullable=False, default="{}")
    timestamp: Mapped[float] = mapped_column(sa.Float, nullable=False)


class Lease(Base):
    """A named lease one process holds until ``expires_at`` (epoch seconds): the watcher's,
    so exactly one engine evaluates alarms when several share the database."""

    __tablename__ = "lease"
    __table_args__ = (_TABLE_ARGS,)
    name: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    holder: Mapped[str] = mapped_column(sa.String(64), nullable=False)
    expires_at: Mapped[float] = mapped_column(sa.Float, nullable=False)


class UserCreds(Base):
    """What Kiln keeps to act for a top-level stack's owner when no request of theirs is
    behind the work (Heat's user_creds): the Keystone trust the owner gave Kiln's trustee
    user at create, or, with ``deferred_auth_method = password``, the owner's name and
    password. Nested stacks use their root stack's row. Secrets are stored encrypted
    (``crypt``); the row goes when the stack is deleted, after the trust."""

    __tablename__ = "user_creds"
    __table_args__ = (_TABLE_ARGS,)
    stack_id: Mapped[str] = mapped_column(sa.String(36), primary_key=True)
    method: Mapped[str] = mapped_column(sa.String(16), nullable=False)
    trust_id: Mapped[str | None] = mapped_column(LongText)
    trustor_user_id: Mapped[str] = mapped_column(sa.String(64), nullable=False)
    project_id: Mapped[str] = mapped_column(sa.String(256), nullable=False)
    username: Mapped[str | None] = mapped_column(sa.String(255))
    password: Mapped[str | None] = mapped_column(LongText)
    created_at: Mapped[dt.datetime] = mapped_column(Timestamp, nullable=False, default=utcnow)
