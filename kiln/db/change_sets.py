"""Change set rows: a stored plan, found by id or by (project, stack name, name)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from kiln.db.models import ChangeSet, utcnow
from kiln.db.records import ChangeSetRecord, ChangeSetValues

_FIELDS = [c.key for c in ChangeSet.__table__.columns]


def _record(row: ChangeSet) -> ChangeSetRecord:
    return ChangeSetRecord(**{k: getattr(row, k) for k in _FIELDS})


def create_change_set(s: Session, values: dict[str, Any]) -> ChangeSetRecord:
    row = ChangeSet(**values, created_at=utcnow())
    s.add(row)
    s.flush()
    return _record(row)


def get_change_set(s: Session, change_set_id: str) -> ChangeSetRecord | None:
    row = s.get(ChangeSet, change_set_id)
    return None if row is None else _record(row)


def find_change_set(
    s: Session, project_id: str, stack_name: str, name: str
) -> ChangeSetRecord | None:
    row = (
        s.execute(
            sa.select(ChangeSet)
            .where(
                ChangeSet.project_id == project_id,
                ChangeSet.stack_name == stack_name,
                ChangeSet.name == name,
            )
            .order_by(ChangeSet.created_at.desc())
        )
        .scalars()
        .first()
    )
    return None if row is None else _record(row)


def list_change_sets(s: Session, project_id: str, stack_name: str) -> list[ChangeSetRecord]:
    """The stack's change sets, oldest first."""
    rows = s.execute(
        sa.select(ChangeSet)
        .where(ChangeSet.project_id == project_id, ChangeSet.stack_name == stack_name)
        .order_by(ChangeSet.created_at, ChangeSet.id)
    ).scalars()
    return [_record(r) for r in rows]


def list_pending_creates(s: Session, project_id: str) -> list[ChangeSetRecord]:
    """The project's CREATE (and IMPORT) change sets never executed (stacks in review),
    oldest first."""
    rows = s.execute(
        sa.select(ChangeSet)
        .where(
            ChangeSet.project_id == project_id,
            ChangeSet.change_type.in_(("CREATE", "IMPORT")),
            ChangeSet.execution.is_(None),
        )
        .order_by(ChangeSet.created_at, ChangeSet.id)
    ).scalars()
    return [_record(r) for r in rows]


def count_change_sets(s: Session, project_id: str, stack_name: str) -> int:
    return int(
        s.execute(
            sa.select(sa.func.count(ChangeSet.id)).where(
                ChangeSet.project_id == project_id, ChangeSet.stack_name == stack_name
            )
        ).scalar_one()
    )


def update_change_set(
    s: Session, change_set_id: str, values: ChangeSetValues, *, only_if_execution: str | None = None
) -> bool:
    """Update the row; with ``only_if_execution`` (``""`` meaning never executed) the
    update is a compare-and-set, so two requests cannot both execute one plan."""
    query = sa.update(ChangeSet).where(ChangeSet.id == change_set_id)
    if only_if_execution is not None:
        query = query.where(
            ChangeSet.execution.is_(None)
            if only_if_execution == ""
            else ChangeSet.execution == only_if_execution
        )
    result = s.execute(query.values(**values))
    return bool(result.rowcount)  # type: ignore[attr-defined]


def delete_change_set(s: Session, change_set_id: str) -> bool:
    result = s.execute(sa.delete(ChangeSet).where(ChangeSet.id == change_set_id))
    return bool(result.rowcount)  # type: ignore[attr-defined]


def delete_stack_change_sets(s: Session, project_id: str, stack_name: str, stack_id: str) -> int:
    """A deleted stack's change sets go with it (as CloudFormation's do)."""
    result = s.execute(
        sa.delete(ChangeSet).where(
            ChangeSet.project_id == project_id,
            ChangeSet.stack_name == stack_name,
            ChangeSet.stack_id == stack_id,
        )
    )
    return int(result.rowcount)  # type: ignore[attr-defined]
