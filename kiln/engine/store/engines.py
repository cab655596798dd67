"""The engines' registry (table ``service``): each engine process registers, heartbeats
and unregisters there; the recovery sweep judges an engine dead by its heartbeat, and
the API lists the rows as Heat's services.

Run on the reader pool, each in its own short transaction (as before they moved here):
a heartbeat must not wait behind a batch of the writer's.
"""

from __future__ import annotations

from kiln.db import locks as db_locks
from kiln.db.facade import Database
from kiln.db.records import ServiceRecord


class EngineRegistry:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def register(self, engine_id: str, *, host: str, hostname: str,
                       report_interval: int, binary: str = "heat-engine",
                       topic: str = "engine") -> ServiceRecord:
        """The engine's row, made or revived (``binary`` and ``topic`` as Heat's service
        listing shows them). On the writer: it reads then writes, and on SQLite a reader's
        transaction that then writes fails at once (no busy timeout) while another
        process writes, as several processes starting on one file do; the writer takes
        the write lock first."""
        return await self._db.write(db_locks.register_engine, engine_id, host=host,
                                  hostname=hostname, report_interval=report_interval,
                                  binary=binary, topic=topic)

    async def forget_aborted(self, engine_id: str, *, host: str, hostname: str,
                             binary: str, older_than: float) -> list[str]:
        """Unregister this host's earlier rows gone silent (Heat's start-up cleanup)."""
        return await self._db.write(db_locks.forget_aborted_services, engine_id, host=host,
                                    hostname=hostname, binary=binary,
                                    older_than=older_than)

    async def heartbeat(self, engine_id: str) -> None:
        await self._db.run(db_locks.heartbeat, engine_id)

    async def unregister(self, engine_id: str) -> None:
        await self._db.run(db_locks.unregister_engine, engine_id)

    async def services(self) -> list[ServiceRecord]:
        """Every registered engine (not unregistered), oldest first."""
        return await self._db.run(db_locks.list_services)
