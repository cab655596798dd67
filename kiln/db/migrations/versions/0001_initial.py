"""Initial schema: every table Kiln persists.

Revision ID: 0001_initial
Revises: (none)
Create Date: 2026-11-22 08:06:00.171262
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = "0001_initial"
down_revision = None
branch_labels = None
depends_on = None

# Frozen copies of the column types of kiln.db.models at this revision.
TS = sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
JSON = sa.JSON().with_variant(mysql.JSON(), "mysql", "mariadb")
TEXT = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")
OPTS: dict[str, Any] = {
    "mysql_engine": "InnoDB",
    "mysql_charset": "utf8mb4",
    "mysql_collate": "utf8mb4_bin",
    "sqlite_autoincrement": True,
}


def upgrade() -> None:
    op.create_table(
        "raw_template",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("template", JSON, nullable=False),
        sa.Column("environment", JSON, nullable=False),
        sa.Column("files", JSON, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_raw_template")),
        **OPTS,
    )
    op.create_table(
        "service",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("engine_id", sa.String(length=36), nullable=False),
        sa.Column("host", sa.String(length=255), nullable=False),
        sa.Column("hostname", sa.String(length=255), nullable=False),
        sa.Column("binary", sa.String(length=255), nullable=False),
        sa.Column("topic", sa.String(length=255), nullable=False),
        sa.Column("report_interval", sa.Integer(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.Column("deleted_at", TS, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_service")),
        sa.UniqueConstraint("engine_id", name=op.f("uq_service_engine_id")),
        **OPTS,
    )
    op.create_table(
        "software_config",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("project_id", sa.String(length=256), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=True),
        sa.Column("group", sa.String(length=255), nullable=True),
        sa.Column("config", JSON, nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_software_config")),
        **OPTS,
    )
    op.create_index(
        "ix_software_config_project_id", "software_config", ["project_id"], unique=False
    )
    op.create_table(
        "software_deployment",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("project_id", sa.String(length=256), nullable=False),
        sa.Column("config_id", sa.String(length=36), nullable=False),
        sa.Column("server_id", sa.String(length=36), nullable=False),
        sa.Column("input_values", JSON, nullable=True),
        sa.Column("output_values", JSON, nullable=True),
        sa.Column("stack_user_project_id", sa.String(length=64), nullable=True),
        sa.Column("action", sa.String(length=255), nullable=False),
        sa.Column("status", sa.String(length=255), nullable=False),
        sa.Column("status_reason", TEXT, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=True),
        sa.ForeignKeyConstraint(
            ["config_id"],
            ["software_config.id"],
            name=op.f("fk_software_deployment_config_id_software_config"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_software_deployment")),
        **OPTS,
    )
    op.create_index(
        "ix_software_deployment_project_id", "software_deployment", ["project_id"], unique=False
    )
    op.create_index(
        "ix_software_deployment_server_id", "software_deployment", ["server_id"], unique=False
    )
    op.create_table(
        "stack",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("project_id", sa.String(length=256), nullable=False),
        sa.Column("user_id", sa.String(length=64), nullable=True),
        sa.Column("username", sa.String(length=256), nullable=True),
        sa.Column("owner_id", sa.String(length=36), nullable=True),
        sa.Column("root_stack_id", sa.String(length=36), nullable=False),
        sa.Column("nested_depth", sa.Integer(), nullable=False),
        sa.Column("parent_resource_name", sa.String(length=255), nullable=True),
        sa.Column("action", sa.String(length=255), nullable=False),
        sa.Column("status", sa.String(length=255), nullable=False),
        sa.Column("status_reason", TEXT, nullable=False),
        sa.Column("raw_template_id", sa.Integer(), nullable=False),
        sa.Column("prev_raw_template_id", sa.Integer(), nullable=True),
        sa.Column("timeout", sa.Integer(), nullable=True),
        sa.Column("disable_rollback", sa.Boolean(), nullable=False),
        sa.Column("stack_user_project_id", sa.String(length=64), nullable=True),
        sa.Column("current_traversal", sa.String(length=36), nullable=True),
        sa.Column("outputs", JSON, nullable=True),
        sa.Column("engine_id", sa.String(length=36), nullable=True),
        sa.Column("lock_time", TS, nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=True),
        sa.Column("deleted_at", TS, nullable=True),
        sa.ForeignKeyConstraint(
            ["prev_raw_template_id"],
            ["raw_template.id"],
            name=op.f("fk_stack_prev_raw_template_id_raw_template"),
        ),
        sa.ForeignKeyConstraint(
            ["raw_template_id"],
            ["raw_template.id"],
            name=op.f("fk_stack_raw_template_id_raw_template"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_stack")),
        **OPTS,
    )
    op.create_index("ix_stack_engine_id", "stack", ["engine_id"], unique=False)
    op.create_index("ix_stack_owner_id", "stack", ["owner_id"], unique=False)
    op.create_index("ix_stack_project_name", "stack", ["project_id", "name"], unique=False)
    op.create_index("ix_stack_root_stack_id", "stack", ["root_stack_id"], unique=False)
    op.create_table(
        "event",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("uuid", sa.String(length=36), nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=False),
        sa.Column("resource_name", sa.String(length=255), nullable=False),
        sa.Column("physical_resource_id", sa.String(length=255), nullable=True),
        sa.Column("resource_type", sa.String(length=255), nullable=False),
        sa.Column("resource_action", sa.String(length=255), nullable=False),
        sa.Column("resource_status", sa.String(length=255), nullable=False),
        sa.Column("resource_status_reason", TEXT, nullable=False),
        sa.Column("resource_properties", JSON, nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.ForeignKeyConstraint(
            ["stack_id"], ["stack.id"], name=op.f("fk_event_stack_id_stack"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_event")),
        sa.UniqueConstraint("uuid", name=op.f("uq_event_uuid")),
        **OPTS,
    )
    op.create_index("ix_event_stack_id_id", "event", ["stack_id", "id"], unique=False)
    op.create_table(
        "resource",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("uuid", sa.String(length=36), nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=False),
        sa.Column("root_stack_id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("type", sa.String(length=255), nullable=False),
        sa.Column("physical_resource_id", sa.String(length=255), nullable=True),
        sa.Column("action", sa.String(length=255), nullable=False),
        sa.Column("status", sa.String(length=255), nullable=False),
        sa.Column("status_reason", TEXT, nullable=False),
        sa.Column("properties_data", JSON, nullable=True),
        sa.Column("attributes", JSON, nullable=True),
        sa.Column("rsrc_metadata", JSON, nullable=True),
        sa.Column("progress", JSON, nullable=True),
        sa.Column("progress_action", sa.String(length=255), nullable=True),
        sa.Column("replaces", sa.Integer(), nullable=True),
        sa.Column("replaced_by", sa.Integer(), nullable=True),
        sa.Column("requires", JSON, nullable=True),
        sa.Column("needed_by", JSON, nullable=True),
        sa.Column("traversal_id", sa.String(length=36), nullable=True),
        sa.Column("engine_id", sa.String(length=36), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=True),
        sa.ForeignKeyConstraint(
            ["stack_id"], ["stack.id"], name=op.f("fk_resource_stack_id_stack"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_resource")),
        sa.UniqueConstraint("uuid", name=op.f("uq_resource_uuid")),
        **OPTS,
    )
    op.create_index(
        "ix_resource_physical_resource_id", "resource", ["physical_resource_id"], unique=False
    )
    op.create_index("ix_resource_root_stack_id", "resource", ["root_stack_id"], unique=False)
    op.create_index("ix_resource_stack_id_name", "resource", ["stack_id", "name"], unique=False)
    op.create_table(
        "snapshot",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=False),
        sa.Column("project_id", sa.String(length=256), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=True),
        sa.Column("data", JSON, nullable=True),
        sa.Column("action", sa.String(length=255), nullable=False),
        sa.Column("status", sa.String(length=255), nullable=False),
        sa.Column("status_reason", TEXT, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=True),
        sa.ForeignKeyConstraint(
            ["stack_id"], ["stack.id"], name=op.f("fk_snapshot_stack_id_stack"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_snapshot")),
        **OPTS,
    )
    op.create_index("ix_snapshot_stack_id", "snapshot", ["stack_id"], unique=False)
    op.create_table(
        "stack_tag",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("stack_id", sa.String(length=36), nullable=False),
        sa.Column("tag", sa.String(length=80), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["stack_id"], ["stack.id"], name=op.f("fk_stack_tag_stack_id_stack"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_stack_tag")),
        **OPTS,
    )
    op.create_index("ix_stack_tag_stack_id_tag", "stack_tag", ["stack_id", "tag"], unique=False)
    op.create_table(
        "resource_data",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("resource_id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("value", TEXT, nullable=False),
        sa.Column("redact", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["resource_id"],
            ["resource.id"],
            name=op.f("fk_resource_data_resource_id_resource"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_resource_data")),
        sa.UniqueConstraint("resource_id", "key", name=op.f("uq_resource_data_resource_id_key")),
        **OPTS,
    )


def downgrade() -> None:
    op.drop_table("resource_data")
    op.drop_index("ix_stack_tag_stack_id_tag", table_name="stack_tag")
    op.drop_table("stack_tag")
    op.drop_index("ix_snapshot_stack_id", table_name="snapshot")
    op.drop_table("snapshot")
    op.drop_index("ix_resource_stack_id_name", table_name="resource")
    op.drop_index("ix_resource_root_stack_id", table_name="resource")
    op.drop_index("ix_resource_physical_resource_id", table_name="resource")
    op.drop_table("resource")
    op.drop_index("ix_event_stack_id_id", table_name="event")
    op.drop_table("event")
    op.drop_index("ix_stack_root_stack_id", table_name="stack")
    op.drop_index("ix_stack_project_name", table_name="stack")
    op.drop_index("ix_stack_owner_id", table_name="stack")
    op.drop_index("ix_stack_engine_id", table_name="stack")
    op.drop_table("stack")
    op.drop_index("ix_software_deployment_server_id", table_name="software_deployment")
    op.drop_index("ix_software_deployment_project_id", table_name="software_deployment")
    op.drop_table("software_deployment")
    op.drop_index("ix_software_config_project_id", table_name="software_config")
    op.drop_table("software_config")
    op.drop_table("service")
    op.drop_table("raw_template")
