"""Stack users: the Keystone users Kiln makes for stacks' servers in keystone mode.

Revision ID: 0005_stack_user
Revises: 0004_alarms
Create Date: 2026-11-24 07:50:00
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0005_stack_user"
down_revision = "0004_alarms"
branch_labels = None
depends_on = None

TS = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
OPTS: dict[str, Any] = {
    "mysql_engine": "InnoDB",
    "mysql_charset": "utf8mb4",
    "mysql_collate": "utf8mb4_bin",
    "sqlite_autoincrement": True,
}


def upgrade() -> None:
    op.create_table(
        "stack_user",
        sa.Column("stack_id", sa.String(length=36), nullable=False),
        sa.Column("resource_name", sa.String(length=255), nullable=False),
        sa.Column("user_id", sa.String(length=64), nullable=False),
        sa.Column("project_id", sa.String(length=64), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("stack_id", "resource_name", name=op.f("pk_stack_user")),
        **OPTS,
    )


def downgrade() -> None:
    op.drop_table("stack_user")
