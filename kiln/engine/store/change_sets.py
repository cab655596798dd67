"""Change set rows for the engine service's change set calls."""

from __future__ import annotations

import asyncio
from typing import Any

from kiln.db import change_sets as db_change_sets
from kiln.db.facade import Database
from kiln.db.records import ChangeSetRecord, ChangeSetValues


class ChangeSetStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, change_set_id: str) -> ChangeSetRecord | None:
        return await self._db.run(db_change_sets.get_change_set, change_set_id)

    async def find(self, project_id: str, stack_name: str, name: str) -> ChangeSetRecord | None:
        return await self._db.run(db_change_sets.find_change_set, project_id, stack_name, name)

    async def of_stack(self, project_id: str, stack_name: str) -> list[ChangeSetRecord]:
        return await self._db.run(db_change_sets.list_change_sets, project_id, stack_name)

    async def pending_creates(self, project_id: str) -> list[ChangeSetRecord]:
        return await self._db.run(db_change_sets.list_pending_creates, project_id)

    async def count(self, project_id: str, stack_name: str) -> int:
        return await self._db.run(db_change_sets.count_change_sets, project_id, stack_name)

    def add(self, values: dict[str, Any]) -> asyncio.Future[ChangeSetRecord]:
        return self._db.write(db_change_sets.create_change_set, values)

    def settle(
        self, change_set_id: str, values: ChangeSetValues, *, only_if_execution: str | None = None
    ) -> asyncio.Future[bool]:
        return self._db.write(
            db_change_sets.update_change_set,
            change_set_id,
            values,
            only_if_execution=only_if_execution,
        )

    def remove(self, change_set_id: str) -> asyncio.Future[bool]:
        return self._db.write(db_change_sets.delete_change_set, change_set_id)

    def remove_of_stack(
        self, project_id: str, stack_name: str, stack_id: str
    ) -> asyncio.Future[int]:
        return self._db.write(
            db_change_sets.delete_stack_change_sets, project_id, stack_name, stack_id
        )
