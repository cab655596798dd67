"""Stack events beyond the recorder's: one event that changes no state (a note a signal
leaves), reading them (the event list and show), trimming a stack's history after an action."""

from __future__ import annotations

import asyncio

from kiln.db import events as db_events
from kiln.db.facade import Database
from kiln.db.records import EventQuery, EventRecord, NewEvent


class EventStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    def cap(self, keep: int, batch_size: int) -> None:
        """Keep every stack's events at ``keep`` while the writer writes them (Heat's
        ``max_events_per_stack``; <= 0: no cap), not only after actions."""
        db_events.cap_events(self._db, keep, batch_size)

    def note(self, event: NewEvent) -> asyncio.Future[list[str]]:
        """Append one event that records no transition (what a refused or noted signal
        says about a resource), batched with the writer's other work; the future gives
        a list holding the new event's id."""
        return self._db.write(db_events.add_events, [event])

    def purge(self, stack_id: str, keep: int, batch_size: int) -> asyncio.Future[int]:
        """Keep the stack's ``keep`` newest events, deleting the oldest ones by
        ``batch_size`` (Heat's ``max_events_per_stack``, ``event_purge_batch_size``)."""
        return self._db.write(db_events.purge_events, stack_id, keep, batch_size)

    async def query(self, query: EventQuery) -> list[EventRecord]:
        """Heat's event list (its filters, sort and page) over the stacks it names."""
        return await self._db.run(db_events.list_events, query)

    async def get(self, stack_id: str, event_uuid: str) -> EventRecord | None:
        return await self._db.run(db_events.get_event, stack_id, event_uuid)
