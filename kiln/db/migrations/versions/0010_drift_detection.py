"""Drift detections: each detection of a stack's drift, its outcome and its per-resource
differences (DetectStackDrift, ``kiln stack drift``).

Revision ID: 0010_drift_detection
Revises: 0009_stack_version
Create Date: 2026-11-29 13:30:00
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0010_drift_detection"
down_revision = "0009_stack_version"
branch_labels = None
depends_on = None

JSON = sa.JSON(none_as_null=True).with_variant(mysql.JSON(none_as_null=True), "mysql",
                                               "mariadb")
TIMESTAMP = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
LONG_TEXT = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")
OPTS: dict[str, Any] = {
    "mysql_engine": "InnoDB",
    "mysql_charset": "utf8mb4",
    "mysql_collate": "utf8mb4_bin",
}


def upgrade() -> None:
    op.create_table(
        "drift_detection",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=False),
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("drift_status", sa.String(length=32), nullable=True),
        sa.Column("drifted_count", sa.Integer(), nullable=False),
        sa.Column("status_reason", LONG_TEXT, nullable=False),
        sa.Column("resources", JSON, nullable=True),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("updated_at", TIMESTAMP, nullable=True),
        sa.ForeignKeyConstraint(["stack_id"], ["stack.id"],
                                name=op.f("fk_drift_detection_stack_id_stack"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_drift_detection")),
        **OPTS,
    )
    op.create_index("ix_drift_detection_stack_id", "drift_detection", ["stack_id"])


def downgrade() -> None:
    # the table's indexes go with it (MariaDB refuses to drop the stack_id index alone
    # while the foreign key needs it)
    op.drop_table("drift_detection")
