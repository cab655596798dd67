"""The alarm tables (kiln/db/models.py): plain functions on a SQLAlchemy ``Session``, run
through :class:`kiln.db.facade.Database` as every repository is (they never commit)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlalchemy.orm import Session, aliased

from kiln.alarms.rules import Rule, mask_url_secrets
from kiln.db.models import Alarm, AlarmHistory, Lease, MetricDatum, Stack, utcnow


class Point(NamedTuple):
    """One checked data point (a tuple: PutMetricData makes one per datum, and a frozen
    dataclass's ``__init__`` cost more than checking the datum)."""

    namespace: str
    metric_name: str
    dimensions: str
    unit: str | None
    value: float
    timestamp: float


@dataclass(frozen=True)
class AlarmRecord:
    id: int
    project_id: str
    name: str
    stack_id: str | None
    resource_name: str | None
    rule: Rule
    actions_enabled: bool
    state: str
    state_reason: str
    state_reason_data: str | None
    state_updated_at: float
    last_evaluated: float
    updated_at: Any


def _alarm(row: Any) -> AlarmRecord:
    return AlarmRecord(id=row.id, project_id=row.project_id, name=row.name,
                       stack_id=row.stack_id, resource_name=row.resource_name,
                       rule=Rule.from_json(row.rule), actions_enabled=row.actions_enabled,
                       state=row.state, state_reason=row.state_reason,
                       state_reason_data=row.state_reason_data,
                       state_updated_at=row.state_updated_at,
                       last_evaluated=row.last_evaluated, updated_at=row.updated_at)


# -- metric data ------------------------------------------------------------------------------

def put_points(s: Session, rows: Sequence[tuple[str, Point]]) -> None:
    """Insert (project, point) rows: one executemany on the table (no ORM unit of work:
    this is the metrics hot path)."""
    if rows:
        s.execute(sa.insert(MetricDatum.__table__), [  # type: ignore[arg-type]
            {"project_id": project, "namespace": p.namespace,
             "metric_name": p.metric_name, "dimensions": p.dimensions, "unit": p.unit,
             "value": p.value, "timestamp": p.timestamp} for project, p in rows])


def points_after(s: Session, last_id: int, since: float, limit: int = 200_000
                 ) -> list[tuple[Any, ...]]:
    """Rows newer than ``last_id`` with a timestamp from ``since`` on (the watcher's
    incremental read): (id, project, namespace, name, dimensions, value, timestamp)."""
    stmt = (sa.select(MetricDatum.id, MetricDatum.project_id, MetricDatum.namespace,
                      MetricDatum.metric_name, MetricDatum.dimensions, MetricDatum.value,
                      MetricDatum.timestamp)
            .where(MetricDatum.id > last_id, MetricDatum.timestamp >= since)
            .order_by(MetricDatum.id).limit(limit))
    return [tuple(r) for r in s.execute(stmt)]


def list_metrics(s: Session, project_id: str, *, namespace: str | None,
                 metric_name: str | None, limit: int = 500, offset: int = 0
                 ) -> list[tuple[str, str, str]]:
    stmt = sa.select(MetricDatum.namespace, MetricDatum.metric_name,
                     MetricDatum.dimensions).where(MetricDatum.project_id == project_id)
    if namespace:
        stmt = stmt.where(MetricDatum.namespace == namespace)
    if metric_name:
        stmt = stmt.where(MetricDatum.metric_name == metric_name)
    stmt = stmt.distinct().order_by(MetricDatum.namespace, MetricDatum.metric_name,
                                    MetricDatum.dimensions).limit(limit).offset(offset)
    return [(a, b, c) for a, b, c in s.execute(stmt)]


def metric_points(s: Session, project_id: str, namespace: str, metric_name: str,
                  dimensions: str, start: float, end: float, unit: str | None
                  ) -> list[tuple[float, float, str | None]]:
    stmt = (sa.select(MetricDatum.timestamp, MetricDatum.value, MetricDatum.unit)
            .where(MetricDatum.project_id == project_id, MetricDatum.namespace == namespace,
                   MetricDatum.metric_name == metric_name,
                   MetricDatum.dimensions == dimensions,
                   MetricDatum.timestamp >= start, MetricDatum.timestamp < end))
    if unit:
        stmt = stmt.where(MetricDatum.unit == unit)
    return [(a, b, c) for a, b, c in s.execute(stmt)]


def purge_points(s: Session, older_than: float) -> int:
    result = s.execute(sa.delete(MetricDatum).where(MetricDatum.timestamp < older_than))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


# -- alarms ---------------------------------------------------------------------------------

def put_alarm(s: Session, project_id: str, name: str, rule: Rule, *,
              actions_enabled: bool = True, stack_id: str | None = None,
              resource_name: str | None = None) -> tuple[AlarmRecord, bool]:
    """Create or replace the alarm's definition (its state is kept); (record, created)."""
    row = s.execute(sa.select(Alarm).where(Alarm.project_id == project_id,
                                           Alarm.name == name)).scalar_one_or_none()
    created = row is None
    if row is None:
        row = Alarm(project_id=project_id, name=name, state="INSUFFICIENT_DATA",
                    state_reason="Unchecked: Initial alarm creation", state_updated_at=0.0,
                    last_evaluated=0.0)
        s.add(row)
    row.rule = rule.to_json()
    row.actions_enabled = actions_enabled
    row.stack_id = stack_id if stack_id is not None else row.stack_id
    row.resource_name = resource_name if resource_name is not None else row.resource_name
    row.updated_at = utcnow()
    s.flush()
    return _alarm(row), created


def get_alarm(s: Session, project_id: str, name: str) -> AlarmRecord | None:
    row = s.execute(sa.select(Alarm).where(Alarm.project_id == project_id,
                                           Alarm.name == name)).scalar_one_or_none()
    return None if row is None else _alarm(row)


def list_alarms(s: Session, project_id: str | None = None, *, names: Sequence[str] = (),
                prefix: str | None = None, state: str | None = None) -> list[AlarmRecord]:
    stmt = sa.select(Alarm)
    if project_id is not None:
        stmt = stmt.where(Alarm.project_id == project_id)
    if names:
        stmt = stmt.where(Alarm.name.in_(list(names)))
    if prefix:
        stmt = stmt.where(Alarm.name.startswith(prefix, autoescape=True))
    if state:
        stmt = stmt.where(Alarm.state == state)
    return [_alarm(r) for r in s.execute(stmt.order_by(Alarm.name)).scalars()]


def alarms_of_stack_tree(s: Session, project_id: str, stack_id: str,
                         names: Sequence[str]) -> set[str]:
    """Which of ``names`` are alarms of ``stack_id``'s stack tree (its root stack and
    every stack nested under that root), in ``project_id``."""
    if not names:
        return set()
    own = aliased(Stack)
    theirs = aliased(Stack)
    stmt = (sa.select(Alarm.name)
            .join(theirs, theirs.id == Alarm.stack_id)
            .join(own, own.root_stack_id == theirs.root_stack_id)
            .where(own.id == stack_id, Alarm.project_id == project_id,
                   Alarm.name.in_(sorted(set(names)))))
    return {str(n) for n in s.execute(stmt).scalars()}


def alarms_changed_since(s: Session, since: Any) -> tuple[Any, int]:
    """(newest ``updated_at``, number of alarms): the watcher reloads its list when
    either moves."""
    newest, count = s.execute(sa.select(sa.func.max(Alarm.updated_at),
                                        sa.func.count(Alarm.id))).one()
    return newest, int(count)


def delete_alarms(s: Session, project_id: str, names: Sequence[str]) -> int:
    result = s.execute(sa.delete(Alarm).where(Alarm.project_id == project_id,
                                              Alarm.name.in_(list(names))))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


def delete_stack_alarm(s: Session, stack_id: str, resource_name: str) -> None:
    s.execute(sa.delete(Alarm).where(Alarm.stack_id == stack_id,
                                     Alarm.resource_name == resource_name))


def set_actions_enabled(s: Session, project_id: str, names: Sequence[str],
                        enabled: bool) -> None:
    s.execute(sa.update(Alarm).where(Alarm.project_id == project_id,
                                     Alarm.name.in_(list(names)))
              .values(actions_enabled=enabled, updated_at=utcnow()))


def set_state(s: Session, alarm_id: int, state: str, reason: str, reason_data: str | None,
              now: float) -> None:
    s.execute(sa.update(Alarm).where(Alarm.id == alarm_id).values(
        state=state, state_reason=reason, state_reason_data=reason_data,
        state_updated_at=now, last_evaluated=now))


def set_evaluated(s: Session, alarm_ids: Iterable[int], now: float) -> None:
    ids = list(alarm_ids)
    for i in range(0, len(ids), 500):
        s.execute(sa.update(Alarm).where(Alarm.id.in_(ids[i:i + 500]))
                  .values(last_evaluated=now))


# -- history ----------------------------------------------------------------------------------

def add_history(s: Session, project_id: str, alarm_name: str, item_type: str, summary: str,
                data: Mapping[str, Any], now: float) -> None:
    s.add(AlarmHistory(project_id=project_id, alarm_name=alarm_name, item_type=item_type,
                       summary=mask_url_secrets(summary),
                       data=mask_url_secrets(json.dumps(data, sort_keys=True)), timestamp=now))


def list_history(s: Session, project_id: str, *, alarm_name: str | None,
                 item_type: str | None, start: float | None, end: float | None,
                 limit: int) -> list[tuple[str, str, str, str, float]]:
    stmt = sa.select(AlarmHistory.alarm_name, AlarmHistory.item_type, AlarmHistory.summary,
                     AlarmHistory.data, AlarmHistory.timestamp).where(
        AlarmHistory.project_id == project_id)
    if alarm_name:
        stmt = stmt.where(AlarmHistory.alarm_name == alarm_name)
    if item_type:
        stmt = stmt.where(AlarmHistory.item_type == item_type)
    if start is not None:
        stmt = stmt.where(AlarmHistory.timestamp >= start)
    if end is not None:
        stmt = stmt.where(AlarmHistory.timestamp < end)
    stmt = stmt.order_by(AlarmHistory.timestamp.desc(), AlarmHistory.id.desc()).limit(limit)
    return [(a, b, c, d, e) for a, b, c, d, e in s.execute(stmt)]


def purge_history(s: Session, older_than: float) -> None:
    s.execute(sa.delete(AlarmHistory).where(AlarmHistory.timestamp < older_than))


# -- lease ------------------------------------------------------------------------------------

def take_lease(s: Session, name: str, holder: str, now: float, ttl: float) -> bool:
    """Hold (or keep) the lease ``name`` until now + ttl, unless another holder's lease is
    still valid. One conditional UPDATE (or the first INSERT), so two processes racing
    for it cannot both win."""
    until = now + ttl
    updated = s.execute(sa.update(Lease).where(
        Lease.name == name, sa.or_(Lease.holder == holder, Lease.expires_at < now))
        .values(holder=holder, expires_at=until)).rowcount  # type: ignore[attr-defined]
    if updated:
        return True
    if s.get(Lease, name) is not None:
        return False
    try:
        with s.begin_nested():
            s.add(Lease(name=name, holder=holder, expires_at=until))
    except sa.exc.IntegrityError:
        return False
    return True


def release_lease(s: Session, name: str, holder: str) -> None:
    s.execute(sa.delete(Lease).where(Lease.name == name, Lease.holder == holder))
