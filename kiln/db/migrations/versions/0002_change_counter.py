"""Change counters: the API's stack list/show responses are reused until stacks change.

Revision ID: 0002_change_counter
Revises: 0001_initial
Create Date: 2026-11-22 10:50:00
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0002_change_counter"
down_revision = "0001_initial"
branch_labels = None
depends_on = None

OPTS: dict[str, Any] = {
    "mysql_engine": "InnoDB",
    "mysql_charset": "utf8mb4",
    "mysql_collate": "utf8mb4_bin",
    "sqlite_autoincrement": True,
}


def upgrade() -> None:
    table = op.create_table(
        "change_counter",
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("value", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_change_counter")),
        **OPTS,
    )
    op.bulk_insert(table, [{"name": "stacks", "value": 0}])


def downgrade() -> None:
    op.drop_table("change_counter")
