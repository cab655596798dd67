"""EC2 keypairs Kiln issues, for signed AWS requests without an identity service.

Revision ID: 0003_ec2_keypair
Revises: 0002_change_counter
Create Date: 2026-11-24 04:40:00
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0003_ec2_keypair"
down_revision = "0002_change_counter"
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
        "ec2_keypair",
        sa.Column("access_key", sa.String(length=64), nullable=False),
        sa.Column("secret", TEXT, nullable=False),
        sa.Column("project_id", sa.String(length=256), nullable=False),
        sa.Column("user_id", sa.String(length=64), nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=True),
        sa.Column("resource_name", sa.String(length=255), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("access_key", name=op.f("pk_ec2_keypair")),
        **OPTS,
    )
    op.create_index("ix_ec2_keypair_stack_id", "ec2_keypair", ["stack_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_ec2_keypair_stack_id", table_name="ec2_keypair")
    op.drop_table("ec2_keypair")
