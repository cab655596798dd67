"""Drift detections (:class:`kiln.db.models.DriftDetection`): one row per detection, a
stack keeping its newest ``keep`` (older ones are removed as a new one is added).

Rows are handed out as plain dicts of the columns; the engine's store turns them into
its own record (:class:`kiln.engine.model.drift.DriftRun`).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from kiln.db.models import DriftDetection, utcnow

_FIELDS = [c.key for c in DriftDetection.__table__.columns]


def _row(row: DriftDetection) -> dict[str, Any]:
    return {k: getattr(row, k) for k in _FIELDS}


def add_detection(s: Session, detection_id: str, stack_id: str, *, scope: str, status: str,
                  keep: int) -> dict[str, Any]:
    """A new detection; the stack's detections beyond the newest *keep* go."""
    row = DriftDetection(id=detection_id, stack_id=stack_id, scope=scope, status=status,
                         drifted_count=0, status_reason="", created_at=utcnow())
    s.add(row)
    s.flush()
    older = s.execute(sa.select(DriftDetection.id)
                      .where(DriftDetection.stack_id == stack_id)
                      .order_by(DriftDetection.created_at.desc(), DriftDetection.id.desc())
                      .offset(max(keep, 1))).scalars().all()
    if older:
        s.execute(sa.delete(DriftDetection).where(DriftDetection.id.in_(list(older))))
    return _row(row)


def settle_detection(s: Session, detection_id: str, *, status: str,
                     drift_status: str | None, drifted_count: int, status_reason: str,
                     resources: Any) -> bool:
    result = s.execute(sa.update(DriftDetection).where(DriftDetection.id == detection_id)
                       .values(status=status, drift_status=drift_status,
                               drifted_count=drifted_count, status_reason=status_reason,
                               resources=resources, updated_at=utcnow()))
    return bool(result.rowcount)  # type: ignore[attr-defined]


def get_detection(s: Session, detection_id: str) -> dict[str, Any] | None:
    row = s.get(DriftDetection, detection_id)
    return None if row is None else _row(row)


def list_detections(s: Session, stack_id: str, *,
                    status: str | None = None) -> list[dict[str, Any]]:
    """The stack's detections, newest first (of *status* only, if given)."""
    query = sa.select(DriftDetection).where(DriftDetection.stack_id == stack_id)
    if status is not None:
        query = query.where(DriftDetection.status == status)
    rows = s.execute(query.order_by(DriftDetection.created_at.desc(),
                                    DriftDetection.id.desc())).scalars()
    return [_row(r) for r in rows]


def latest_stack_status(s: Session, stack_ids: list[str],
                        status: str) -> dict[str, tuple[str, Any]]:
    """For each stack, (drift status, time) of its newest whole-stack detection that
    ended with *status* (DescribeStacks' DriftInformation, one query for many)."""
    if not stack_ids:
        return {}
    rows = s.execute(sa.select(DriftDetection.stack_id, DriftDetection.drift_status,
                               DriftDetection.updated_at)
                     .where(DriftDetection.stack_id.in_(stack_ids),
                            DriftDetection.scope == "stack",
                            DriftDetection.status == status)
                     .order_by(DriftDetection.created_at)).all()
    return {stack_id: (str(drift), when) for stack_id, drift, when in rows}


def claim_detection(s: Session, detection_id: str, *, status: str,
                    lease: float) -> bool:
    """Take a whole-stack detection still in *status* that nobody runs: never claimed
    (``updated_at`` empty) or whose claim was not renewed for *lease* seconds (its
    process stopped). A compare-and-set, so of several engines exactly one runs it."""
    now = utcnow()
    cutoff = now - dt.timedelta(seconds=lease)
    result = s.execute(sa.update(DriftDetection)
                       .where(DriftDetection.id == detection_id,
                              DriftDetection.scope == "stack",
                              DriftDetection.status == status,
                              sa.or_(DriftDetection.updated_at.is_(None),
                                     DriftDetection.updated_at < cutoff))
                       .values(updated_at=now))
    return bool(result.rowcount)  # type: ignore[attr-defined]


def claimable_detections(s: Session, *, status: str, lease: float,
                         stack_id: str | None = None, limit: int = 8) -> list[str]:
    """Whole-stack detections in *status* nobody runs (see :func:`claim_detection`),
    oldest first; of one stack if *stack_id* is given."""
    cutoff = utcnow() - dt.timedelta(seconds=lease)
    query = sa.select(DriftDetection.id).where(
        DriftDetection.scope == "stack", DriftDetection.status == status,
        sa.or_(DriftDetection.updated_at.is_(None), DriftDetection.updated_at < cutoff))
    if stack_id is not None:
        query = query.where(DriftDetection.stack_id == stack_id)
    return list(s.execute(query.order_by(DriftDetection.created_at).limit(limit))
                .scalars().all())


def renew_detections(s: Session, detection_ids: list[str], *, status: str) -> None:
    """Renew the claims of the detections this process runs (its heartbeat)."""
    if detection_ids:
        s.execute(sa.update(DriftDetection)
                  .where(DriftDetection.id.in_(detection_ids),
                         DriftDetection.status == status)
                  .values(updated_at=utcnow()))
