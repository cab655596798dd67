"""Change sets: stored plans that an update or a create runs exactly as reviewed.

Revision ID: 0008_change_set
Revises: 0007_resource_signal
Create Date: 2026-11-29 13:30:00
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0008_change_set"
down_revision = "0007_resource_signal"
branch_labels = None
depends_on = None

JSON = sa.JSON(none_as_null=True).with_variant(mysql.JSON(none_as_null=True), "mysql", "mariadb")
TIMESTAMP = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
LONG_TEXT = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")
OPTS: dict[str, Any] = {
    "mysql_engine": "InnoDB",
    "mysql_charset": "utf8mb4",
    "mysql_collate": "utf8mb4_bin",
    "sqlite_autoincrement": True,
}


def upgrade() -> None:
    op.create_table(
        "change_set",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=False),
        sa.Column("stack_name", sa.String(length=255), nullable=False),
        sa.Column("project_id", sa.String(length=256), nullable=False),
        sa.Column("change_type", sa.String(length=16), nullable=False),
        sa.Column("description", LONG_TEXT, nullable=True),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("status_reason", LONG_TEXT, nullable=False),
        sa.Column("execution", sa.String(length=32), nullable=True),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("request", JSON, nullable=True),
        sa.Column("changes", JSON, nullable=True),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("executed_at", TIMESTAMP, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_change_set")),
        **OPTS,
    )
    op.create_index(
        "ix_change_set_project_id_stack_name", "change_set", ["project_id", "stack_name"]
    )
    op.create_index("ix_change_set_stack_id", "change_set", ["stack_id"])


def downgrade() -> None:
    op.drop_table("change_set")
