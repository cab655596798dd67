"""Every state transition the engine makes, turned into database writes.

Transitions queued during one turn of the event loop are coalesced into ONE write job:
an executemany row update per column set, one multi-row event insert, the data keys
that changed. A thousand resources finishing together therefore cost a handful of
statements, not thousands. Each caller still gets its own future, resolved once the job
is committed, and awaits it before anything that depends on the transition starts
("committed before dependants start"). Jobs reach the database's writer in the order
they were flushed, so a resource's transitions are applied in order.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from kiln.db import events as db_events
from kiln.db import resources as db_resources
from kiln.db import stacks as db_stacks
from kiln.db.facade import Database
from kiln.db.records import NewEvent, ResourceDataChange, ResourceValues, StackValues
from kiln.engine.model import notice
from kiln.engine.model.live_stack import LiveStack, Slot
from kiln.notifications import NULL, Notifier, stack_event


@dataclass(slots=True)
class _Change:
    resource_id: int
    values: ResourceValues
    data_new: dict[str, str]       # keys not yet stored
    data_changed: dict[str, str]   # stored keys with a new value
    data_del: list[str]
    event: NewEvent | None
    data_secret: frozenset[str] = frozenset()
    #: the row is deleted (with its data) instead of updated: the transition is its last
    remove: bool = False


def _apply(s: Session, changes: Sequence[_Change],
           stack_changes: Sequence[tuple[str, StackValues]]) -> None:
    rows = [c for c in changes if c.resource_id]
    if rows:
        gone = {c.resource_id for c in rows if c.remove}
        if gone:  # nothing is written to a row about to be deleted
            rows = [c for c in rows if c.resource_id not in gone]
        # a row's last state is all it needs; every transition keeps its own event
        last = {c.resource_id: c.values for c in rows}
        if last:
            db_resources.update_resources(s, list(last.items()))
        db_resources.write_resource_data(s, (
            ResourceDataChange(c.resource_id, c.data_new, c.data_changed, c.data_del,
                               c.data_secret)
            for c in rows if c.data_new or c.data_changed or c.data_del))
        if gone:
            db_resources.delete_resources(s, list(gone))
    for stack_id, values in stack_changes:
        db_stacks.update_stack(s, stack_id, values)
    events = [c.event for c in changes if c.event is not None]
    if events:
        db_events.add_events(s, events)


#: what most transitions change in a resource's data: nothing (shared, never mutated)
_NOTHING_NEW: dict[str, str] = {}
_NOTHING_CHANGED: dict[str, str] = {}
_NOTHING_GONE: list[str] = []


def _data_changes(slot: Slot) -> tuple[dict[str, str], dict[str, str], list[str]]:
    data, saved = slot.state.data, slot.saved_data
    if data == saved:  # a pending transition holds no data copies of its own
        return _NOTHING_NEW, _NOTHING_CHANGED, _NOTHING_GONE
    new = {k: str(v) for k, v in data.items() if k not in saved}
    changed = {k: str(v) for k, v in data.items() if k in saved and saved[k] != v}
    gone = [k for k in saved if k not in data]
    slot.saved_data = dict(data)
    return new, changed, gone


class Recorder:
    """Queues transitions, flushing them as one bulk write job per event-loop turn."""

    def __init__(self, db: Database, engine_id: str) -> None:
        self.db = db
        self.engine_id = engine_id
        self._changes: list[_Change] = []
        self._stack_changes: list[tuple[str, StackValues]] = []
        self._stack_events: list[NewEvent] = []
        self._waiters: list[asyncio.Future[None]] = []
        self._scheduled = False
        #: set while the engine shuts down: interrupted actions are handed over to the
        #: next engine (left IN_PROGRESS with their tokens), not failed
        self.handoff = False
        #: told of every stack transition once it is committed (Heat's notifications)
        self.notifier: Notifier = NULL

    # -- queueing -----------------------------------------------------------------------
    def _enqueue(self) -> asyncio.Future[None]:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        self._waiters.append(fut)
        if not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._flush)
        return fut

    def _flush(self) -> None:
        self._scheduled = False
        changes, self._changes = self._changes, []
        stack_changes, self._stack_changes = self._stack_changes, []
        stack_events, self._stack_events = self._stack_events, []
        waiters, self._waiters = self._waiters, []
        # stack events go after the resource events queued in the same turn
        changes.extend(_Change(0, {}, {}, {}, [], ev) for ev in stack_events)
        job = self.db.write(_apply, changes, stack_changes)

        def done(f: asyncio.Future[None]) -> None:
            exc = None if f.cancelled() else f.exception()
            for w in waiters:
                if w.done():
                    continue
                if exc is not None:
                    w.set_exception(exc)
                else:
                    w.set_result(None)

        job.add_done_callback(done)

    def committed(self) -> asyncio.Future[None]:
        """Resolves once every transition queued so far is committed (the writer runs
        its jobs in order): a read of the stack from the database after it sees them.
        A cancelled action's last transition may still be queued when the action
        returns (the visit was cancelled while awaiting its write)."""
        return self._enqueue()

    # -- transitions --------------------------------------------------------------------
    def _values(self, slot: Slot, progress: Any) -> ResourceValues:
        """Always the same columns, so a flush is one executemany applied in order."""
        state = slot.state
        return {
            "action": state.action, "status": state.status,
            "status_reason": state.status_reason,
            "physical_resource_id": state.resource_id,
            "metadata": state.metadata,
            "properties_data": state.properties_data,
            "engine_id": self.engine_id if state.status == "IN_PROGRESS" else None,
            "progress": progress,
            "progress_action": state.action if progress is not None else None,
        }

    def resource(self, stack: LiveStack, slot: Slot, action: str, status: str,
                 reason: str = "state changed", *, event: bool = True,
                 remove_row: bool = False) -> asyncio.Future[None]:
        """Set the slot's state, persist row + data + event (progress is cleared).
        ``remove_row``: the transition is the row's last (a replaced or doomed
        resource's DELETE_COMPLETE): its event is written and, in the same transaction,
        the row and its data are deleted instead of updated."""
        state = slot.state
        state.action, state.status, state.status_reason = action, status, reason
        if remove_row:
            new, changed, gone = _NOTHING_NEW, _NOTHING_CHANGED, _NOTHING_GONE
        else:
            new, changed, gone = _data_changes(slot)
        ev = None
        if event:
            ev = NewEvent(stack_id=stack.info.id, resource_name=slot.name,
                          resource_type=slot.definition.type, resource_action=action,
                          resource_status=status, resource_status_reason=reason,
                          physical_resource_id=state.resource_id,
                          resource_properties=state.properties_data)
        self._changes.append(_Change(slot.db_id, self._values(slot, None), new, changed,
                                     gone, ev, slot.plugin.secret_data, remove_row))
        return self._enqueue()

    def progress(self, slot: Slot, token: Any) -> asyncio.Future[None]:
        """Persist the token (and whatever the handle call changed) before waiting."""
        new, changed, gone = _data_changes(slot)
        self._changes.append(_Change(slot.db_id, self._values(slot, token), new, changed,
                                     gone, None, slot.plugin.secret_data))
        return self._enqueue()

    def stack(self, stack: LiveStack, action: str, status: str, reason: str, *,
              extra: StackValues | None = None, event: bool = True) -> asyncio.Future[None]:
        info = stack.info
        info.action, info.status, info.status_reason = action, status, reason
        values: StackValues = {"action": action, "status": status, "status_reason": reason}
        if extra:
            values.update(extra)
        self._stack_changes.append((info.id, values))
        if event:
            self._stack_events.append(NewEvent(
                stack_id=info.id, resource_name=info.name, resource_type="OS::Heat::Stack",
                resource_action=action, resource_status=status,
                resource_status_reason=reason, physical_resource_id=info.id))
        written = self._enqueue()
        if self.notifier.enabled:
            if extra and isinstance(extra.get("updated_at"), dt.datetime):
                info.updated_at = extra["updated_at"]
            self.notify_committed(stack, written)
        return written

    def notify_stored(self, stack: LiveStack) -> None:
        """Send the notification of the state the stack was just stored in (its
        admission: ``create.start``, ``adopt.start``)."""
        if self.notifier.enabled:
            event_type, priority = stack_event(stack.info.action, stack.info.status)
            with notice.never_failing(event_type):
                self.notifier.send(event_type, priority, notice.stack_payload(stack),
                                   notice.context(stack))

    def notify_committed(self, stack: LiveStack, written: asyncio.Future[Any]) -> None:
        """Send the stack's notification for its state now, once ``written`` (the write
        of that state) has committed: a consumer never hears of a state that is not
        stored. The body is taken now, before a later transition changes the stack."""
        event_type, priority = stack_event(stack.info.action, stack.info.status)
        payload: dict[str, Any] = {}
        ctx: dict[str, Any] = {}
        with notice.never_failing(event_type):
            payload, ctx = notice.stack_payload(stack), notice.context(stack)
        if not payload:
            return
        notifier = self.notifier

        def committed(f: asyncio.Future[Any]) -> None:
            if not f.cancelled() and f.exception() is None:
                notifier.send(event_type, priority, payload, ctx)

        written.add_done_callback(committed)
