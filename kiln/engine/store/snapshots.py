"""Snapshot rows as the SNAPSHOT action and its recovery settle them."""

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
        return await self._db.run(db_snapshots.list_snapshots, stack_id)

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
