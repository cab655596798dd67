"""Resource rows beyond the recorder's transitions: new rows an update adds, a
replacement's row, a row's removal, what recovery reads and fails, a resource's data
and metadata changed outside an action (hooks, signals).

As in :mod:`.stacks`, each method is one transaction, and a write returns the batching
writer's future, queued when called.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from sqlalchemy.orm import Session

from kiln.db import events as db_events
from kiln.db import resources as db_resources
from kiln.db import signals as db_signals
from kiln.db.facade import Database
from kiln.db.records import NewEvent, NewResource, ResourceRecord
from kiln.engine.model.states import FAILED
from kiln.engine.store.stacks import Inserted


def _add(s: Session, rows: list[NewResource], restored: Sequence[int]) -> Inserted:
    for rid in restored:
        db_resources.update_resource(s, rid, {"replaced_by": None})
    return db_resources.insert_resources(s, rows)


def _save_side_state(s: Session, resource_id: int, data_set: dict[str, str],
                     data_del: list[str], metadata: Any, event: NewEvent | None,
                     signals: Sequence[db_signals.SignalWrite]) -> None:
    if signals:
        db_signals.keep_signals(s, resource_id, signals)
    for key, value in data_set.items():
        db_resources.set_resource_data(s, resource_id, key, value)
    for key in data_del:
        db_resources.delete_resource_data(s, resource_id, key)
    if metadata is not None:
        # deferred to the batch's commit: a burst of signals to one handle is one UPDATE
        # of its row, and a batch's rows are one executemany
        db_resources.queue_resource_update(s, resource_id, {"metadata": metadata})
    if event is not None:
        db_events.add_events(s, [event])


class ResourceStore:
    """Resource rows and their data."""

    def __init__(self, db: Database) -> None:
        self._db = db

    # -- rows ---------------------------------------------------------------------------
    def add(self, rows: list[NewResource], *,
            restored: Sequence[int] = ()) -> asyncio.Future[Inserted]:
        """New INIT rows (an update's fresh resources) and, in the same transaction,
        the replaced rows a rollback puts back (``replaced_by`` cleared)."""
        return self._db.write(_add, rows, restored)

    def add_replacement(self, new: NewResource,
                        old_id: int) -> asyncio.Future[tuple[int, str, Any]]:
        """The replacement's row, and the old row marked replaced by it, in one
        transaction; ``(id, uuid, created_at)`` of the new row."""
        return self._db.write(db_resources.insert_replacement, new, old_id)

    def remove(self, resource_id: int) -> asyncio.Future[None]:
        """The row of a deleted resource (and its data)."""
        return self._db.write(db_resources.delete_resource, resource_id)

    async def of_stack(self, stack_id: str) -> list[ResourceRecord]:
        """Every row of the stack, replaced ones included."""
        return await self._db.run(db_resources.list_resources, stack_id)

    async def by_name(self, stack_id: str, name: str) -> ResourceRecord | None:
        """The stack's current row of that name."""
        return await self._db.run(db_resources.get_resource_by_name, stack_id, name)

    def mark_abandoned(self, resource_id: int, reason: str) -> asyncio.Future[bool]:
        """FAILED, its engine and token cleared: the action a dead engine left the row
        in will not continue (recovery, for rows no slot holds)."""
        return self._db.write(db_resources.update_resource, resource_id, {
            "status": FAILED, "status_reason": reason, "engine_id": None,
            "progress": None, "progress_action": None})

    # -- data changed outside an action ------------------------------------------------
    def save_side_state(self, resource_id: int, data_set: dict[str, str],
                        data_del: list[str], metadata: Any,
                        event: NewEvent | None,
                        signals: Sequence[db_signals.SignalWrite] = ()) -> asyncio.Future[None]:
        """Data keys set and deleted, the metadata (None: unchanged), the signals the
        resource keeps anew and an event, in one transaction."""
        return self._db.write(_save_side_state, resource_id, data_set, data_del, metadata,
                              event, signals)

    async def data(self, resource_id: int) -> dict[str, str]:
        """The resource's stored data (what another process may have changed)."""
        return await self._db.run(db_resources.get_resource_data, resource_id)
