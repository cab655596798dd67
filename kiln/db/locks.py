"""Stack locks and engine liveness.

A stack's lock is two columns of its row (``engine_id``, ``lock_time``) changed only by
conditional UPDATEs, so "acquire" is atomic on every backend without SELECT ... FOR UPDATE:
the UPDATE that matches ``engine_id IS NULL`` wins, every other sees zero rows. Engines
heartbeat into ``service``; one silent for ``dead_after`` seconds is dead, and the stacks it
holds are the recovery sweep's work list.
"""

from __future__ import annotations

import datetime as dt
import uuid as uuidlib
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from kiln.db.models import Service, Stack, utcnow
from kiln.db.records import LockResult, ServiceRecord, StackRecord
from kiln.db.stacks import _select as _select_stacks

_SERVICE_FIELDS = [c.key for c in Service.__table__.columns]


def _rowcount(result: sa.Result[object]) -> int:
    return int(result.rowcount)  # type: ignore[attr-defined]


def acquire_stack_lock(s: Session, stack_id: str, engine_id: str) -> LockResult:
    """Take the lock if free (or already ours). Never waits; the caller decides whether a
    holder is dead and may be stolen from (``steal_stack_lock``)."""
    done = _rowcount(s.execute(
        sa.update(Stack)
        .where(Stack.id == stack_id, Stack.deleted_at.is_(None),
               sa.or_(Stack.engine_id.is_(None), Stack.engine_id == engine_id))
        .values(engine_id=engine_id, lock_time=utcnow())))
    if done:
        return LockResult(acquired=True, holder=engine_id)
    holder = s.execute(sa.select(Stack.engine_id).where(Stack.id == stack_id)).scalar()
    return LockResult(acquired=False, holder=holder)


def release_stack_lock(s: Session, stack_id: str, engine_id: str) -> bool:
    """False when this engine did not hold the lock (it was stolen, or never taken)."""
    return bool(_rowcount(s.execute(
        sa.update(Stack).where(Stack.id == stack_id, Stack.engine_id == engine_id)
        .values(engine_id=None, lock_time=None))))


def steal_stack_lock(s: Session, stack_id: str, old_engine_id: str, new_engine_id: str) -> bool:
    """Move the lock from a dead engine; fails if someone else moved it first."""
    return bool(_rowcount(s.execute(
        sa.update(Stack).where(Stack.id == stack_id, Stack.engine_id == old_engine_id)
        .values(engine_id=new_engine_id, lock_time=utcnow()))))


def get_stack_lock(s: Session, stack_id: str) -> str | None:
    return s.execute(sa.select(Stack.engine_id).where(Stack.id == stack_id)).scalar()


# -- engines ---------------------------------------------------------------------------------

def _service_record(row: Service) -> ServiceRecord:
    return ServiceRecord(**{k: getattr(row, k) for k in _SERVICE_FIELDS})


def register_engine(s: Session, engine_id: str, *, host: str, hostname: str,
                    binary: str = "kiln-engine", topic: str = "engine",
                    report_interval: int = 5) -> ServiceRecord:
    row = s.execute(sa.select(Service).where(Service.engine_id == engine_id)).scalar()
    now = utcnow()
    if row is None:
        row = Service(id=str(uuidlib.uuid4()), engine_id=engine_id, host=host,
                      hostname=hostname, binary=binary, topic=topic,
                      report_interval=report_interval, created_at=now, updated_at=now)
        s.add(row)
    else:
        row.host, row.hostname, row.binary, row.topic = host, hostname, binary, topic
        row.report_interval, row.updated_at, row.deleted_at = report_interval, now, None
    s.flush()
    return _service_record(row)


def heartbeat(s: Session, engine_id: str) -> None:
    s.execute(sa.update(Service).where(Service.engine_id == engine_id)
              .values(updated_at=utcnow()))


def forget_aborted_services(s: Session, engine_id: str, *, host: str, hostname: str,
                            binary: str, older_than: float) -> list[str]:
    """Mark unregistered the rows of earlier processes of this engine's host, hostname and
    binary whose heartbeat is older than ``older_than`` seconds (Heat's cleanup at an
    engine's start: an engine restarted under the same ``host`` replaces the one that
    died, which the services list then stops showing as down). Their stacks are still
    taken over: an unregistered engine is a dead one. The engine ids forgotten."""
    cutoff = utcnow() - dt.timedelta(seconds=older_than)
    gone = list(s.execute(sa.select(Service.engine_id).where(
        Service.engine_id != engine_id, Service.host == host, Service.hostname == hostname,
        Service.binary == binary, Service.deleted_at.is_(None),
        Service.updated_at < cutoff)).scalars())
    if gone:
        s.execute(sa.update(Service).where(Service.engine_id.in_(gone))
                  .values(deleted_at=utcnow()))
    return gone


def unregister_engine(s: Session, engine_id: str) -> None:
    s.execute(sa.update(Service).where(Service.engine_id == engine_id)
              .values(deleted_at=utcnow()))


def list_services(s: Session) -> list[ServiceRecord]:
    rows = s.execute(sa.select(Service).where(Service.deleted_at.is_(None))
                     .order_by(Service.created_at, Service.id)).scalars()
    return [_service_record(r) for r in rows]


def alive_engines(dead_after: float) -> sa.Select[Any]:
    """The ids of engines heartbeating within ``dead_after`` seconds (a subquery)."""
    return _alive_ids(dead_after)


def _alive_ids(dead_after: float) -> sa.Select[Any]:
    cutoff = utcnow() - dt.timedelta(seconds=dead_after)
    return sa.select(Service.engine_id).where(Service.deleted_at.is_(None),
                                              Service.updated_at >= cutoff)


def dead_engines(s: Session, dead_after: float) -> list[str]:
    """Registered engines whose heartbeat is older than ``dead_after`` seconds, and
    engines that shut down (soft-deleted) — neither will finish what it holds."""
    alive = _alive_ids(dead_after)
    rows = s.execute(sa.select(Service.engine_id).where(Service.engine_id.not_in(alive))
                     .order_by(Service.engine_id))
    return [r[0] for r in rows]


def stacks_held_by_dead_engines(s: Session, dead_after: float) -> list[StackRecord]:
    """Live stacks locked by an engine that is not alive (dead, gone, or never
    registered): the recovery sweep takes these over."""
    alive = _alive_ids(dead_after)
    return _select_stacks(s, sa.select(Stack).where(Stack.deleted_at.is_(None),
                                                    Stack.engine_id.is_not(None),
                                                    Stack.engine_id.not_in(alive))
                          .order_by(Stack.nested_depth, Stack.created_at, Stack.id))


def stacks_locked_by(s: Session, engine_ids: Sequence[str]) -> list[StackRecord]:
    return _select_stacks(s, sa.select(Stack).where(Stack.engine_id.in_(list(engine_ids)))
                          .order_by(Stack.nested_depth, Stack.created_at, Stack.id))
