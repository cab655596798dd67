"""The credentials a stack's deferred work acts with (a trust, or a stored password),
kept by root stack id (:mod:`kiln.engine.runtime.acting` decides when)."""

from __future__ import annotations

import asyncio

from kiln.db import user_creds as db_user_creds
from kiln.db.facade import Database
from kiln.db.records import UserCredsRecord


class CredentialStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    def keep(self, creds: UserCredsRecord) -> asyncio.Future[None]:
        """Store (or replace) the stack's credentials."""
        return self._db.write(db_user_creds.store_user_creds, creds)

    async def of_stack(self, root_stack_id: str) -> UserCredsRecord | None:
        return await self._db.run(db_user_creds.get_user_creds, root_stack_id)

    def forget(self, root_stack_id: str) -> asyncio.Future[bool]:
        return self._db.write(db_user_creds.delete_user_creds, root_stack_id)
