"""Snapshot rows: the API's snapshot calls (count, add, get, list, remove) and the
SNAPSHOT action and its recovery settling them."""

from __future__ import annotations

import asyncio
from typing import Any

from kiln.db import recovery as db_recovery
from kiln.db import snapshots as db_snapshots
from kiln.db.facade import Database
from kiln.db.records import SnapshotRecord
from kiln.engine.model.states import FAILED


class SnapshotStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def of_stack(self, stack_id: str) -> list[SnapshotRecord]:
        """The stack's snapshots, oldest first."""
        return await self._db.run(db_snapshots.list_snapshots, stack_id)

    async def get(self, snapshot_id: str) -> SnapshotRecord | None:
        return await self._db.run(db_snapshots.get_snapshot, snapshot_id)

    async def count(self, stack_id: str) -> int:
        """How many snapshots the stack has (``max_snapshots_per_stack``)."""
        return await self._db.run(db_snapshots.count_snapshots, stack_id)

    def add(self, stack_id: str, project_id: str, name: str | None, *, action: str,
            status: str, data: Any) -> asyncio.Future[SnapshotRecord]:
        """A new snapshot row (the SNAPSHOT action then settles it)."""
        return self._db.write(db_snapshots.create_snapshot, stack_id, project_id, name,
                              action=action, status=status, data=data)

    def remove(self, snapshot_id: str) -> asyncio.Future[bool]:
        """Whether there was such a snapshot."""
        return self._db.write(db_snapshots.delete_snapshot, snapshot_id)

    def settle(self, snapshot_id: str, status: str, reason: str,
               data: Any) -> asyncio.Future[bool]:
        """The snapshot's outcome and its document."""
        return self._db.write(db_snapshots.update_snapshot, snapshot_id,
                              {"data": data, "status": status, "status_reason": reason})

    def fail(self, snapshot_id: str, reason: str) -> asyncio.Future[bool]:
        return self._db.write(db_snapshots.update_snapshot, snapshot_id,
                              {"status": FAILED, "status_reason": reason})

    def fail_stuck(self, stack_id: str, reason: str) -> asyncio.Future[None]:
        """Every snapshot of the stack still IN_PROGRESS becomes FAILED."""
        return self._db.write(db_recovery.fail_stuck_snapshots, stack_id, reason)
