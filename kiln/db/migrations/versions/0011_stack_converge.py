"""The stack's ``converge`` flag: an update with Heat's ``converge`` stores it with the
action, so an engine that takes the update over (its first engine died, or an API process
admitted it for an engine to take) runs it with the flag too.

Revision ID: 0011_stack_converge
Revises: 0010_drift_detection
Create Date: 2026-11-29 21:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011_stack_converge"
down_revision = "0010_drift_detection"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # existing rows get False: no update stored before this revision had the flag stored
    op.add_column("stack", sa.Column("converge", sa.Boolean(), nullable=False,
                                     server_default=sa.false()))


def downgrade() -> None:
    # a plain ALTER TABLE on every backend (SQLite has had DROP COLUMN since 3.35): a
    # batch copy of the table would cascade-delete every stack's resources
    op.drop_column("stack", "converge")
