"""Stack snapshots (the data a restore needs, kept as one JSON document)."""

from __future__ import annotations

import uuid as uuidlib
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from kiln.db.models import Snapshot, utcnow
from kiln.db.records import SnapshotRecord, SnapshotValues

_FIELDS = [c.key for c in Snapshot.__table__.columns]


def _record(row: Snapshot) -> SnapshotRecord:
    return SnapshotRecord(**{k: getattr(row, k) for k in _FIELDS})


def create_snapshot(s: Session, stack_id: str, project_id: str, name: str | None, *,
                    action: str = "SNAPSHOT", status: str = "IN_PROGRESS",
                    status_reason: str = "", data: Any = None,
                    id: str | None = None) -> SnapshotRecord:
    row = Snapshot(id=id or str(uuidlib.uuid4()), stack_id=stack_id, project_id=project_id,
                   name=name, data=data, action=action, status=status,
                   status_reason=status_reason, created_at=utcnow())
    s.add(row)
    s.flush()
    return _record(row)


def get_snapshot(s: Session, snapshot_id: str) -> SnapshotRecord | None:
    row = s.get(Snapshot, snapshot_id)
    return None if row is None else _record(row)


def list_snapshots(s: Session, stack_id: str) -> list[SnapshotRecord]:
    rows = s.execute(sa.select(Snapshot).where(Snapshot.stack_id == stack_id)
                     .order_by(Snapshot.created_at, Snapshot.id)).scalars()
    return [_record(r) for r in rows]


def count_snapshots(s: Session, stack_id: str) -> int:
    return int(s.execute(sa.select(sa.func.count(Snapshot.id))
                         .where(Snapshot.stack_id == stack_id)).scalar_one())


def update_snapshot(s: Session, snapshot_id: str, values: SnapshotValues) -> bool:
    result = s.execute(sa.update(Snapshot).where(Snapshot.id == snapshot_id)
                       .values(**values, updated_at=utcnow()))
    return bool(result.rowcount)  # type: ignore[attr-defined]


def delete_snapshot(s: Session, snapshot_id: str) -> bool:
    result = s.execute(sa.delete(Snapshot).where(Snapshot.id == snapshot_id))
    return bool(result.rowcount)  # type: ignore[attr-defined]
