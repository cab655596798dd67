"""The recovery sweep's database work: finding orphaned stacks, taking them over, and
failing a stack that cannot even be loaded.

These are the only statements :mod:`kiln.engine.actions.recover` needs beyond the lock and
resource functions; they live here so that the engine reaches the database only through
``kiln.db`` (docs/contracts.md). Each is one unit of work on the session it is given.
"""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa
from sqlalchemy.orm import Session

from kiln.db import events as db_events
from kiln.db import locks as db_locks
from kiln.db import resources as db_resources
from kiln.db import stacks as db_stacks
from kiln.db.models import Snapshot, Stack, utcnow
from kiln.db.records import NewEvent, StackRecord

_IN_PROGRESS = "IN_PROGRESS"
_FAILED = "FAILED"


def orphaned_stacks(s: Session, dead_after: float, me: str) -> list[StackRecord]:
    """Stacks held by engines that are not alive, IN_PROGRESS stacks nobody holds, and
    stacks engine ``me`` has held for over ``dead_after`` seconds (the caller keeps those
    it is actually running: a lock whose release failed must not stay forever).
    Parents come before their children (by nesting depth, then age)."""
    found = {r.id: r for r in db_locks.stacks_held_by_dead_engines(s, dead_after)
             if r.engine_id != me}
    cutoff = utcnow() - dt.timedelta(seconds=dead_after)
    for rec in db_locks.stacks_locked_by(s, [me]):
        if rec.deleted_at is None and rec.lock_time is not None and rec.lock_time < cutoff:
            found.setdefault(rec.id, rec)
    # a row another engine is taking right now (its take's transaction holds it) is
    # skipped, not waited for: sweeping engines do not queue up behind each other
    # (PostgreSQL and MariaDB; SQLite has no row locks and renders no FOR UPDATE)
    loose = s.execute(sa.select(Stack.id).where(
        Stack.deleted_at.is_(None), Stack.engine_id.is_(None),
        Stack.status == _IN_PROGRESS).with_for_update(skip_locked=True)).scalars().all()
    for stack_id in loose:
        stored = db_stacks.get_stack(s, stack_id)
        if stored is not None:
            found.setdefault(stored.id, stored)
    return sorted(found.values(), key=lambda r: (r.nested_depth, r.created_at, r.id))


def take_stack(s: Session, rec: StackRecord, me: str) -> bool:
    """Make ``me`` the holder of an orphaned stack's lock: already ours, free (acquire)
    or held by the engine the sweep saw (steal). False when another engine got there
    first, or is taking it now (``FOR UPDATE SKIP LOCKED``), so two sweeping (or woken)
    engines never both resume the same stack."""
    if rec.engine_id == me:
        return True
    # the row locked by another engine's take (or a request's lock) in this instant:
    # give up at once rather than wait for it, it is being taken
    # (not on SQLite: a read before the write there makes the write fail at once, rather
    # than wait busy_timeout, when another process writes)
    if s.get_bind().dialect.name != "sqlite" and s.execute(
            sa.select(Stack.id).where(Stack.id == rec.id)
            .with_for_update(skip_locked=True)).scalar() is None:
        return False
    if rec.engine_id is None:
        return db_locks.acquire_stack_lock(s, rec.id, me).acquired
    return db_locks.steal_stack_lock(s, rec.id, rec.engine_id, me)


def take_from_dead(s: Session, stack_id: str, me: str, dead_after: float) -> bool:
    """Make ``me`` the holder of a stack whose holder is not alive (a parent's resumed
    action reaching a child the dead engine also held, before the sweep got to it)."""
    holder = db_locks.get_stack_lock(s, stack_id)
    if holder is None or holder == me:
        return db_locks.acquire_stack_lock(s, stack_id, me).acquired
    alive = s.execute(db_locks.alive_engines(dead_after)).scalars().all()
    return holder not in alive and db_locks.steal_stack_lock(s, stack_id, holder, me)


def fail_stuck_snapshots(s: Session, stack_id: str, reason: str) -> None:
    """Snapshot rows of a stack whose snapshot action ended without finishing them
    (they could be neither restored nor deleted while IN_PROGRESS)."""
    s.execute(sa.update(Snapshot).where(Snapshot.stack_id == stack_id,
                                        Snapshot.status == _IN_PROGRESS)
              .values(status=_FAILED, status_reason=reason))


def fail_stored_stack(s: Session, stack_id: str, reason: str) -> None:
    """Last resort when a stack cannot even be loaded: its IN_PROGRESS resources and the
    stack itself become FAILED with ``reason``, with the stack's FAILED event."""
    rec = db_stacks.get_stack(s, stack_id)
    if rec is None or rec.status != _IN_PROGRESS:
        return
    for row in db_resources.list_resources(s, stack_id):
        if row.status == _IN_PROGRESS:
            db_resources.update_resource(s, row.id, {
                "status": _FAILED, "status_reason": reason, "engine_id": None,
                "progress": None, "progress_action": None})
    db_stacks.update_stack(s, stack_id, {"status": _FAILED, "status_reason": reason})
    fail_stuck_snapshots(s, stack_id, reason)
    db_events.add_events(s, [NewEvent(
        stack_id=stack_id, resource_name=rec.name, resource_type="OS::Heat::Stack",
        resource_action=rec.action, resource_status=_FAILED, resource_status_reason=reason,
        physical_resource_id=stack_id)])
