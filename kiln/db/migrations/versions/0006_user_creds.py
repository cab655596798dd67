"""What Kiln keeps to act for a stack's owner later: the trust (or the standalone
password) of a top-level stack, encrypted at rest.

Revision ID: 0006_user_creds
Revises: 0005_stack_user
Create Date: 2026-11-24 08:00:00
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0006_user_creds"
down_revision = "0005_stack_user"
branch_labels = None
depends_on = None

TS = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
TEXT = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")
OPTS: dict[str, Any] = {
    "mysql_engine": "InnoDB",
    "mysql_charset": "utf8mb4",
    "mysql_collate": "utf8mb4_bin",
    "sqlite_autoincrement": True,
}


def upgrade() -> None:
    op.create_table(
        "user_creds",
        sa.Column("stack_id", sa.String(length=36), nullable=False),
        sa.Column("method", sa.String(length=16), nullable=False),
        sa.Column("trust_id", TEXT, nullable=True),
        sa.Column("trustor_user_id", sa.String(length=64), nullable=False),
        sa.Column("project_id", sa.String(length=256), nullable=False),
        sa.Column("username", sa.String(length=255), nullable=True),
        sa.Column("password", TEXT, nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("stack_id", name=op.f("pk_user_creds")),
        **OPTS,
    )


def downgrade() -> None:
    op.drop_table("user_creds")
