"""Metrics and alarms: the CloudWatch API's data points, alarms, their history, and the
watcher's lease.

Revision ID: 0004_alarms
Revises: 0003_ec2_keypair
Create Date: 2026-11-24 04:45:00
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0004_alarms"
down_revision = "0003_ec2_keypair"
branch_labels = None
depends_on = None

OPTS: dict[str, Any] = {
    "mysql_engine": "InnoDB",
    "mysql_charset": "utf8mb4",
    "mysql_collate": "utf8mb4_bin",
    "sqlite_autoincrement": True,
}
Timestamp = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
LongText = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")
Json = sa.JSON(none_as_null=True).with_variant(mysql.JSON(none_as_null=True), "mysql", "mariadb")


def upgrade() -> None:
    op.create_table(
        "metric_datum",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"),
                  autoincrement=True, nullable=False),
        sa.Column("project_id", sa.String(length=256), nullable=False),
        sa.Column("namespace", sa.String(length=255), nullable=False),
        sa.Column("metric_name", sa.String(length=255), nullable=False),
        sa.Column("dimensions", sa.String(length=2048), nullable=False),
        sa.Column("unit", sa.String(length=32), nullable=True),
        sa.Column("value", sa.Float(), nullable=False),
        sa.Column("timestamp", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_metric_datum")),
        **OPTS,
    )
    # within MariaDB/MySQL's 3,072-byte key limit (see the model)
    op.create_index("ix_metric_datum_metric", "metric_datum",
                    ["namespace", "metric_name", "timestamp"])
    op.create_index("ix_metric_datum_timestamp", "metric_datum", ["timestamp"])
    op.create_table(
        "alarm",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("project_id", sa.String(length=256), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=True),
        sa.Column("resource_name", sa.String(length=255), nullable=True),
        sa.Column("rule", Json, nullable=False),
        sa.Column("actions_enabled", sa.Boolean(), nullable=False),
        sa.Column("state", sa.String(length=32), nullable=False),
        sa.Column("state_reason", LongText, nullable=False),
        sa.Column("state_reason_data", LongText, nullable=True),
        sa.Column("state_updated_at", sa.Float(), nullable=False),
        sa.Column("last_evaluated", sa.Float(), nullable=False),
        sa.Column("created_at", Timestamp, nullable=False),
        sa.Column("updated_at", Timestamp, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alarm")),
        sa.UniqueConstraint("project_id", "name", name=op.f("uq_alarm_project_id_name")),
        **OPTS,
    )
    op.create_table(
        "alarm_history",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("project_id", sa.String(length=256), nullable=False),
        sa.Column("alarm_name", sa.String(length=255), nullable=False),
        sa.Column("item_type", sa.String(length=32), nullable=False),
        sa.Column("summary", LongText, nullable=False),
        sa.Column("data", LongText, nullable=False),
        sa.Column("timestamp", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alarm_history")),
        **OPTS,
    )
    op.create_index("ix_alarm_history_project_name", "alarm_history",
                    ["project_id", "alarm_name", "timestamp"])
    op.create_table(
        "lease",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("holder", sa.String(length=64), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_lease")),
        **OPTS,
    )


def downgrade() -> None:
    op.drop_table("lease")
    op.drop_index("ix_alarm_history_project_name", table_name="alarm_history")
    op.drop_table("alarm_history")
    op.drop_table("alarm")
    op.drop_index("ix_metric_datum_timestamp", table_name="metric_datum")
    op.drop_index("ix_metric_datum_metric", table_name="metric_datum")
    op.drop_table("metric_datum")
