"""A stack's history for the engine service (:mod:`kiln.db.stack_versions`)."""

from __future__ import annotations

import asyncio
from typing import Any

from kiln.db import stack_versions as db_versions
from kiln.db.facade import Database
from kiln.db.records import StackVersionRecord


class StackVersionStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    def add(
        self, stack_id: str, action: str, template: Any, environment: Any, files: Any, keep: int
    ) -> asyncio.Future[int]:
        return self._db.write(
            db_versions.add_version, stack_id, action, template, environment, files, keep
        )

    async def of_stack(self, stack_id: str) -> list[StackVersionRecord]:
        return await self._db.run(db_versions.list_versions, stack_id)

    async def get(self, stack_id: str, version: int) -> StackVersionRecord | None:
        return await self._db.run(db_versions.get_version, stack_id, version)
