"""Events: one row per resource (or stack) state transition.

Writes come in batches from the engine; the per-stack cap (``max_events_per_stack``) is
enforced in the same transaction by deleting the oldest rows, at least a purge batch at a
time so the count query runs rarely relative to inserts. The engine's writer carries an
:class:`EventCap` (:func:`cap_events`), so the cap holds while events are written (a
stack that signals keep reaching for hours), not only when an action ends.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import sqlalchemy as sa
from sqlalchemy.orm import Session

from kiln import notify
from kiln.db import _query, crypt, sqlite_fast
from kiln.db.ids import ordered_uuid
from kiln.db.models import Event, utcnow
from kiln.db.records import EventQuery, EventRecord, NewEvent

if TYPE_CHECKING:
    from kiln.db.facade import Database

#: GET .../events ?sort_keys= names Heat honours → columns; it ignores any other key.
SORT_KEYS = {
    "event_time": Event.created_at,
    "resource_type": Event.resource_type,
}
_FIELDS = [c.key for c in Event.__table__.columns]


def _record(row: Mapping[Any, Any]) -> EventRecord:
    fields = {k: row[k] for k in _FIELDS}
    fields["resource_properties"] = crypt.unseal(fields["resource_properties"])
    return EventRecord(**fields)


_INSERT = sa.insert(cast(sa.Table, Event.__table__))
_PENDING = "kiln_pending_events"
#: stack ids whose events this session's transaction inserted (published after commit)
_INSERTED = "kiln_inserted_event_stacks"


@dataclass(slots=True)
class _Pending:
    """Event rows added in a session but not yet inserted, and each stack's purge policy."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    purge: dict[str, tuple[int, int]] = field(default_factory=dict)


def add_events(s: Session, rows: Sequence[NewEvent], *, max_events_per_stack: int = 0,
               purge_batch_size: int = 200,
               purge_check_probability: float | None = None) -> list[str]:
    """Queue rows for insertion (ids increase in call order); returns the event uuids.

    The INSERT is deferred to the session's next flush point (a query of events or the
    commit), so that every event of a writer batch goes to the database as one multi-row
    INSERT instead of one round trip each.

    Counting a stack's events on every insert would double the cost of the engine's
    hottest write, so, like Heat, the cap is checked on average once per
    ``purge_batch_size / 2`` calls (``purge_check_probability`` overrides: 1.0 = always);
    the cap may thus be exceeded by about that many events between purges."""
    if not rows:
        return []
    now = utcnow()
    pending: _Pending = s.info.setdefault(_PENDING, _Pending())
    uuids: list[str] = []
    sealed: crypt.SealMemo = {}
    for r in rows:
        uid = r.uuid or ordered_uuid()
        uuids.append(uid)
        pending.rows.append({"uuid": uid, "stack_id": r.stack_id,
                             "resource_name": r.resource_name,
                             "physical_resource_id": r.physical_resource_id,
                             "resource_type": r.resource_type,
                             "resource_action": r.resource_action,
                             "resource_status": r.resource_status,
                             "resource_status_reason": r.resource_status_reason or "",
                             "resource_properties": crypt.seal_shared(r.resource_properties,
                                                                     sealed),
                             "created_at": r.created_at or now})
    if purge_check_probability is None:
        purge_check_probability = 2.0 / max(purge_batch_size, 1)
    if max_events_per_stack > 0 and random.random() < purge_check_probability:
        for stack_id in dict.fromkeys(r.stack_id for r in rows):
            pending.purge[stack_id] = (max_events_per_stack, purge_batch_size)
    return uuids


class EventCap:
    """``max_events_per_stack`` kept as events are written, as Heat keeps it.

    Heat counts a stack's events on average once per ``event_purge_batch_size / 2``
    events written (at random) and, when over the cap, deletes the oldest batch. This
    counts the events each stack is written by this writer instead, and checks a stack
    each time another half batch of its events has been written: the same cost (one
    count per half batch, none on the other writes), and a stack never exceeds the cap
    by more than half a batch (plus one write batch) of what this process wrote.
    """

    #: stacks whose running tally is kept (more are forgotten: at worst a late check)
    MAX_TRACKED = 10_000

    def __init__(self, keep: int, batch_size: int) -> None:
        self.keep = keep
        self.batch_size = max(batch_size, 1)
        self.every = max(self.batch_size // 2, 1)
        self._written: dict[str, int] = {}

    def due(self, stack_ids: Sequence[str]) -> list[str]:
        """Tally ``stack_ids`` (one per event written); the stacks to check now."""
        written = self._written
        out: list[str] = []
        for stack_id in stack_ids:
            n = written.get(stack_id, 0) + 1
            if n >= self.every:
                out.append(stack_id)
                n = 0
            written[stack_id] = n
        if len(written) > self.MAX_TRACKED:
            written.clear()
        return out


_CAP = "kiln_event_cap"


def cap_events(db: Database, keep: int, batch_size: int) -> None:
    """Keep every stack's events at ``keep`` as ``db``'s (a :class:`Database`'s) writer
    writes them; ``keep`` <= 0: no cap."""
    if keep > 0:
        db.write_session_info[_CAP] = EventCap(keep, batch_size)
    else:
        db.write_session_info.pop(_CAP, None)


def flush_events(s: Session) -> None:
    """Insert the queued events of this session now (and purge where due)."""
    pending: _Pending | None = s.info.pop(_PENDING, None)
    if pending is None:
        return
    if pending.rows:
        if not sqlite_fast.execute(s, _INSERT, pending.rows):
            s.connection().execute(_INSERT, pending.rows)
        s.info.setdefault(_INSERTED, set()).update(r["stack_id"] for r in pending.rows)
        cap: EventCap | None = s.info.get(_CAP)
        if cap is not None:
            for stack_id in cap.due([r["stack_id"] for r in pending.rows]):
                pending.purge.setdefault(stack_id, (cap.keep, cap.batch_size))
    for stack_id, (keep, batch) in pending.purge.items():
        purge_events(s, stack_id, keep, batch)


@sa.event.listens_for(Session, "before_commit")
def _before_commit(s: Session) -> None:
    flush_events(s)


@sa.event.listens_for(Session, "after_commit")
def _after_commit(s: Session) -> None:
    """Wake live readers of these stacks' events (``kiln.notify``): the rows are
    committed, so whoever reads now sees them."""
    inserted = s.info.pop(_INSERTED, None)
    if inserted:
        notify.EVENTS.publish(inserted)


@sa.event.listens_for(Session, "after_rollback")
def _after_rollback(s: Session) -> None:
    s.info.pop(_PENDING, None)
    s.info.pop(_INSERTED, None)


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
    flush_events(s)
    return int(s.execute(sa.select(sa.func.count(Event.id))
                         .where(Event.stack_id == stack_id)).scalar_one())


def get_event(s: Session, stack_id: str, event_uuid: str) -> EventRecord | None:
    flush_events(s)
    row = s.connection().execute(sa.select(Event).where(
        Event.stack_id == stack_id, Event.uuid == event_uuid)).mappings().first()
    return None if row is None else _record(row)


def list_events(s: Session, q: EventQuery) -> list[EventRecord]:
    """Heat's event list: newest first unless sort keys or ``sort_dir`` say otherwise
    (explicit keys default to ascending); ``marker`` is an event uuid and the page starts
    after it; ties broken by id in the same direction."""
    flush_events(s)
    if not q.stack_ids:
        return []
    keys, desc = _query.sort_order(q.sort_keys, q.sort_dir, SORT_KEYS, Event.created_at,
                                   Event.id)
    stmt = sa.select(Event).where(Event.stack_id.in_(list(q.stack_ids)))
    stmt = _query.exact_filters(stmt, Event, q.filters)
    marker = None
    if q.marker:
        marker = s.execute(sa.select(Event).where(Event.uuid == q.marker)).scalar()
    stmt = _query.page(stmt, keys, desc, marker, q.limit)
    # Core rows, not ORM objects: event lists are long and read-only.
    return [_record(r) for r in s.connection().execute(stmt).mappings()]
