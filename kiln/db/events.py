"""Events: one row per resource (or stack) state transition.

Writes come in batches from the engine; the per-stack cap (``max_events_per_stack``) is
enforced in the same transaction by deleting the oldest rows, at least a purge batch at a
time so the count query runs rarely relative to inserts.
"""

from __future__ import annotations

import uuid as uuidlib
from collections import Counter
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from kiln.db import _query
from kiln.db.models import Event, utcnow
from kiln.db.records import EventQuery, EventRecord, NewEvent

#: GET .../events ?sort_keys= names Heat honours → columns; it ignores any other key.
SORT_KEYS = {
    "event_time": Event.created_at,
    "resource_type": Event.resource_type,
}
_FIELDS = [c.key for c in Event.__table__.columns]


def _record(row: Event) -> EventRecord:
    return EventRecord(**{k: getattr(row, k) for k in _FIELDS})


def add_events(s: Session, rows: Sequence[NewEvent], *, max_events_per_stack: int = 0,
               purge_batch_size: int = 200) -> list[str]:
    """Insert in order (ids increase with insertion); returns the event uuids."""
    if not rows:
        return []
    now = utcnow()
    values: list[dict[str, Any]] = []
    for r in rows:
        values.append({"uuid": r.uuid or str(uuidlib.uuid4()), "stack_id": r.stack_id,
                       "resource_name": r.resource_name,
                       "physical_resource_id": r.physical_resource_id,
                       "resource_type": r.resource_type,
                       "resource_action": r.resource_action,
                       "resource_status": r.resource_status,
                       "resource_status_reason": r.resource_status_reason or "",
                       "resource_properties": r.resource_properties,
                       "created_at": r.created_at or now})
    s.execute(sa.insert(Event), values)
    if max_events_per_stack > 0:
        for stack_id in Counter(r.stack_id for r in rows):
            purge_events(s, stack_id, max_events_per_stack, purge_batch_size)
    return [v["uuid"] for v in values]


def purge_events(s: Session, stack_id: str, keep: int, batch_size: int) -> int:
    """When more than ``keep`` events exist, delete the oldest — at least ``batch_size``
    of them (Heat purges in batches too), never the newest ``keep - batch_size``."""
    count = count_events(s, stack_id)
    if count <= keep:
        return 0
    n = min(count, max(count - keep, batch_size))
    # MySQL cannot LIMIT inside an IN subquery, so find the boundary id first.
    boundary = s.execute(sa.select(Event.id).where(Event.stack_id == stack_id)
                         .order_by(Event.id).offset(n - 1).limit(1)).scalar()
    if boundary is None:
        return 0
    result = s.execute(sa.delete(Event).where(Event.stack_id == stack_id,
                                              Event.id <= boundary))
    return int(result.rowcount)  # type: ignore[attr-defined]


def count_events(s: Session, stack_id: str) -> int:
    return int(s.execute(sa.select(sa.func.count(Event.id))
                         .where(Event.stack_id == stack_id)).scalar_one())


def get_event(s: Session, stack_id: str, event_uuid: str) -> EventRecord | None:
    row = s.execute(sa.select(Event).where(Event.stack_id == stack_id,
                                           Event.uuid == event_uuid)).scalar()
    return None if row is None else _record(row)


def list_events(s: Session, q: EventQuery) -> list[EventRecord]:
    """Heat's event list: newest first unless sort keys or ``sort_dir`` say otherwise
    (explicit keys default to ascending); ``marker`` is an event uuid and the page starts
    after it; ties broken by id in the same direction."""
    if not q.stack_ids:
        return []
    keys = [SORT_KEYS[k] for k in q.sort_keys if k in SORT_KEYS]
    if keys:
        desc = q.sort_dir == "desc"
    else:
        keys = [Event.created_at]
        desc = q.sort_dir != "asc"
    keys.append(Event.id)
    stmt = sa.select(Event).where(Event.stack_id.in_(list(q.stack_ids)))
    stmt = _query.exact_filters(stmt, Event, q.filters)
    if q.marker:
        marker = s.execute(sa.select(Event).where(Event.uuid == q.marker)).scalar()
        if marker is not None:
            stmt = _query.after_marker(stmt, keys, [getattr(marker, k.key) for k in keys], desc)
    stmt = _query.order_by(stmt, keys, desc)
    if q.limit is not None:
        stmt = stmt.limit(q.limit)
    return [_record(r) for r in s.execute(stmt).scalars()]
