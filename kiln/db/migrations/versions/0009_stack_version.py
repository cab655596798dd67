"""A stack's history: each template, environment and file set it has had.

Revision ID: 0009_stack_version
Revises: 0008_change_set
Create Date: 2026-11-29 13:40:00
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0009_stack_version"
down_revision = "0008_change_set"
branch_labels = None
depends_on = None

JSON = sa.JSON(none_as_null=True).with_variant(mysql.JSON(none_as_null=True), "mysql", "mariadb")
TIMESTAMP = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
OPTS: dict[str, Any] = {
    "mysql_engine": "InnoDB",
    "mysql_charset": "utf8mb4",
    "mysql_collate": "utf8mb4_bin",
    "sqlite_autoincrement": True,
}


def upgrade() -> None:
    op.create_table(
        "stack_version",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(length=255), nullable=False),
        sa.Column("template", JSON, nullable=False),
        sa.Column("environment", JSON, nullable=True),
        sa.Column("files", JSON, nullable=True),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.ForeignKeyConstraint(
            ["stack_id"],
            ["stack.id"],
            name=op.f("fk_stack_version_stack_id_stack"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_stack_version")),
        sa.UniqueConstraint("stack_id", "version", name=op.f("uq_stack_version_stack_id_version")),
        **OPTS,
    )


def downgrade() -> None:
    op.drop_table("stack_version")
