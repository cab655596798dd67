"""The stack row's lock (``engine_id``): which engine process may run an action on it.

Taken and released on the reader pool, each in its own short transaction, not through
the batching writer: a claim must know at once whether it holds the row.
"""

from __future__ import annotations

from kiln.db import locks as db_locks
from kiln.db import recovery as db_recovery
from kiln.db.facade import Database
from kiln.db.records import StackRecord


class LockStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def lock_stack(self, stack_id: str, engine_id: str) -> bool:
        """Whether ``engine_id`` now holds the stack (free, or already its own)."""
        result = await self._db.run(db_locks.acquire_stack_lock, stack_id, engine_id)
        return result.acquired

    async def take_from_dead(self, stack_id: str, engine_id: str, dead_after: float) -> bool:
        """Take the lock over from a holder whose heartbeat is older than ``dead_after``
        seconds; whether it was taken."""
        return await self._db.run(db_recovery.take_from_dead, stack_id, engine_id,
                                  dead_after)

    async def unlock_stack(self, stack_id: str, engine_id: str) -> bool:
        """Release the lock if ``engine_id`` holds it; whether it did."""
        return await self._db.run(db_locks.release_stack_lock, stack_id, engine_id)

    async def orphaned(self, dead_after: float, engine_id: str) -> list[StackRecord]:
        """What the recovery sweep may take over: stacks of dead engines, IN_PROGRESS
        stacks nobody holds, ``engine_id``'s own locks older than ``dead_after``;
        parents before their children."""
        return await self._db.run(db_recovery.orphaned_stacks, dead_after, engine_id)

    async def take_orphan(self, rec: StackRecord, engine_id: str) -> bool:
        """Make ``engine_id`` the holder of an orphaned stack's lock; False when another
        engine got there first."""
        return await self._db.run(db_recovery.take_stack, rec, engine_id)
