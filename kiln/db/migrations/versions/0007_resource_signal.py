"""Signals a resource keeps, one row each: a signal appends what it adds instead of
rewriting the resource's whole metadata (which made every signal cost as much as all the
signals before it).

Revision ID: 0007_resource_signal
Revises: 0006_user_creds
Create Date: 2026-11-29 07:00:00
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0007_resource_signal"
down_revision = "0006_user_creds"
branch_labels = None
depends_on = None

JSON = sa.JSON(none_as_null=True).with_variant(mysql.JSON(none_as_null=True), "mysql",
                                               "mariadb")
OPTS: dict[str, Any] = {
    "mysql_engine": "InnoDB",
    "mysql_charset": "utf8mb4",
    "mysql_collate": "utf8mb4_bin",
    "sqlite_autoincrement": True,
}


def upgrade() -> None:
    op.create_table(
        "resource_signal",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("resource_id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("entry", JSON, nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["resource_id"], ["resource.id"],
                                name=op.f("fk_resource_signal_resource_id_resource"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_resource_signal")),
        sa.UniqueConstraint("resource_id", "key",
                            name=op.f("uq_resource_signal_resource_id_key")),
        **OPTS,
    )


    _move_kept_signals()


#: the handles whose metadata held their signals before this revision
_HANDLES = ("AWS::CloudFormation::WaitConditionHandle", "OS::Heat::WaitConditionHandle",
            "OS::Heat::UpdateWaitConditionHandle")
_SIGNAL_SHAPES = ({"data", "reason", "status"}, {"Data", "Reason", "Status"})


def _move_kept_signals() -> None:
    """A handle's signals move from its metadata to rows (a wait condition waiting
    across the upgrade still counts them)."""
    conn = op.get_bind()
    resource = sa.table("resource", sa.column("id", sa.Integer()),
                        sa.column("type", sa.String()), sa.column("rsrc_metadata", JSON))
    signal = sa.table("resource_signal", sa.column("resource_id", sa.Integer()),
                      sa.column("key", sa.String()), sa.column("entry", JSON),
                      sa.column("size", sa.Integer()))
    found = conn.execute(sa.select(resource.c.id, resource.c.rsrc_metadata)
                         .where(resource.c.type.in_(_HANDLES))).all()
    for rid, metadata in found:
        if not isinstance(metadata, dict):
            continue
        moved = {k: v for k, v in metadata.items()
                 if isinstance(v, dict) and set(v) in _SIGNAL_SHAPES and len(k) <= 255}
        if not moved:
            continue
        conn.execute(sa.insert(signal), [
            {"resource_id": rid, "key": k, "entry": v, "size": len(k) + len(json.dumps(v))}
            for k, v in moved.items()])
        kept = {k: v for k, v in metadata.items() if k not in moved}
        conn.execute(sa.update(resource).where(resource.c.id == rid)
                     .values(rsrc_metadata=kept))


def downgrade() -> None:
    """The rows go back into their resources' metadata, as the older code keeps them."""
    conn = op.get_bind()
    resource = sa.table("resource", sa.column("id", sa.Integer()),
                        sa.column("rsrc_metadata", JSON))
    signal = sa.table("resource_signal", sa.column("id", sa.Integer()),
                      sa.column("resource_id", sa.Integer()), sa.column("key", sa.String()),
                      sa.column("entry", JSON))
    by_resource: dict[int, dict[str, Any]] = {}
    for rid, key, entry in conn.execute(sa.select(signal.c.resource_id, signal.c.key,
                                                  signal.c.entry).order_by(signal.c.id)):
        by_resource.setdefault(rid, {})[key] = entry
    for rid, signals in by_resource.items():
        metadata = conn.execute(sa.select(resource.c.rsrc_metadata)
                                .where(resource.c.id == rid)).scalar()
        merged = {**(metadata if isinstance(metadata, dict) else {}), **signals}
        conn.execute(sa.update(resource).where(resource.c.id == rid)
                     .values(rsrc_metadata=merged))
    op.drop_table("resource_signal")
