"""A stack's history rows: each template, environment and file set, numbered from 1."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from kiln.db.models import StackVersion, utcnow
from kiln.db.records import StackVersionRecord

_FIELDS = [c.key for c in StackVersion.__table__.columns]


def _record(row: StackVersion) -> StackVersionRecord:
    return StackVersionRecord(**{k: getattr(row, k) for k in _FIELDS})


def add_version(
    s: Session, stack_id: str, action: str, template: Any, environment: Any, files: Any, keep: int
) -> int:
    """Append the next version and drop all but the newest ``keep``; its number."""
    newest = s.execute(
        sa.select(sa.func.max(StackVersion.version)).where(StackVersion.stack_id == stack_id)
    ).scalar()
    number = int(newest or 0) + 1
    s.add(
        StackVersion(
            stack_id=stack_id,
            version=number,
            action=action,
            template=template,
            environment=environment,
            files=files,
            created_at=utcnow(),
        )
    )
    s.flush()
    s.execute(
        sa.delete(StackVersion).where(
            StackVersion.stack_id == stack_id, StackVersion.version <= number - keep
        )
    )
    return number


def list_versions(s: Session, stack_id: str) -> list[StackVersionRecord]:
    """Oldest first, without their documents' bodies being needed (they are small)."""
    rows = s.execute(
        sa.select(StackVersion)
        .where(StackVersion.stack_id == stack_id)
        .order_by(StackVersion.version)
    ).scalars()
    return [_record(r) for r in rows]


def get_version(s: Session, stack_id: str, version: int) -> StackVersionRecord | None:
    row = (
        s.execute(
            sa.select(StackVersion).where(
                StackVersion.stack_id == stack_id, StackVersion.version == version
            )
        )
        .scalars()
        .first()
    )
    return None if row is None else _record(row)
