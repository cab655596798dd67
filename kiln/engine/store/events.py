"""Stack events beyond the recorder's: trimming a stack's history after an action."""

from __future__ import annotations

import asyncio

from kiln.db import events as db_events
from kiln.db.facade import Database


class EventStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    def purge(self, stack_id: str, keep: int, batch_size: int) -> asyncio.Future[int]:
        """Keep the stack's ``keep`` newest events, deleting the oldest ones by
        ``batch_size`` (Heat's ``max_events_per_stack``, ``event_purge_batch_size``)."""
        return self._db.write(db_events.purge_events, stack_id, keep, batch_size)
