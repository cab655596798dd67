"""Resource rows beyond the recorder's transitions: new rows an update adds, a
replacement's row, a row's removal, what recovery reads and fails, a resource's data
and metadata changed outside an action (hooks, signals).

As in :mod:`.stacks`, each method is one transaction, and a write returns the batching
writer's future, queued when called; except a replacement's row and a row's removal,
which an update makes for every resource it replaces: those asked for in one turn of the
event loop are one write job (:class:`_PerTurn`), as the recorder's transitions are.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from sqlalchemy.orm import Session

from kiln.db import agent_view as db_agent_view
from kiln.db import events as db_events
from kiln.db import resources as db_resources
from kiln.db import signals as db_signals
from kiln.db import stacks as db_stacks
from kiln.db.facade import Database
from kiln.db.records import NewEvent, NewResource, ResourceRecord, StackRecord
from kiln.engine.model.states import FAILED
from kiln.engine.store.stacks import Inserted

ItemT = TypeVar("ItemT")
ResultT = TypeVar("ResultT")


class _PerTurn(Generic[ItemT, ResultT]):
    """Items asked for during one turn of the event loop, written as ONE job.

    A replace-all update of N resources asks for N replacement rows and N removals,
    nearly all in a few turns: as N jobs each was a hand-off to the writer thread and
    most became a batch (and a commit) of its own, costing more than the SQL. Each caller
    still gets its own future, resolved once the job is committed, so what it awaits is
    unchanged (a failure fails every item of the job, as in a recorder flush)."""

    def __init__(self, db: Database,
                 fn: Callable[[Session, list[ItemT]], list[ResultT]]) -> None:
        self._db = db
        self._fn = fn
        self._pending: dict[asyncio.AbstractEventLoop,
                            list[tuple[ItemT, asyncio.Future[ResultT]]]] = {}

    def submit(self, item: ItemT) -> asyncio.Future[ResultT]:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[ResultT] = loop.create_future()
        pending = self._pending.get(loop)
        if pending is None:
            pending = self._pending[loop] = []
            loop.call_soon(self._flush, loop)
        pending.append((item, fut))
        return fut

    def _flush(self, loop: asyncio.AbstractEventLoop) -> None:
        pending = self._pending.pop(loop, [])
        try:
            job = self._db.write(self._fn, [item for item, _ in pending])
        except Exception as exc:  # a closed database: each caller hears it  # noqa: BLE001
            for _, fut in pending:
                if not fut.done():
                    fut.set_exception(exc)
            return

        def done(f: asyncio.Future[list[ResultT]]) -> None:
            results = None if f.cancelled() or f.exception() else f.result()
            for i, (_, fut) in enumerate(pending):
                if fut.done():
                    continue
                if results is not None:
                    fut.set_result(results[i])
                elif f.cancelled():
                    fut.cancel()
                else:
                    fut.set_exception(f.exception())  # type: ignore[arg-type]

        job.add_done_callback(done)


def _add(s: Session, rows: list[NewResource], restored: Sequence[int]) -> Inserted:
    for rid in restored:
        db_resources.update_resource(s, rid, {"replaced_by": None})
    return db_resources.insert_resources(s, rows)


def _add_replacements(s: Session, items: list[tuple[NewResource, int]],
                      ) -> list[tuple[int, str, Any]]:
    return db_resources.insert_replacements(s, items)


def _remove(s: Session, resource_ids: list[int]) -> list[None]:
    db_resources.delete_resources(s, resource_ids)
    return [None] * len(resource_ids)


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
        self._replacements = _PerTurn(db, _add_replacements)
        self._removals = _PerTurn(db, _remove)

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
        return self._replacements.submit((new, old_id))

    def remove(self, resource_id: int) -> asyncio.Future[None]:
        """The row of a deleted resource (and its data)."""
        return self._removals.submit(resource_id)

    async def of_stack(self, stack_id: str) -> list[ResourceRecord]:
        """Every row of the stack, replaced ones included."""
        return await self._db.run(db_resources.list_resources, stack_id)

    async def count(self, stack_id: str) -> int:
        """How many rows the stack has (what loading it would hold), without reading them."""
        return await self._db.run(db_resources.count_resources, stack_id)

    async def by_name(self, stack_id: str, name: str) -> ResourceRecord | None:
        """The stack's current row of that name."""
        return await self._db.run(db_resources.get_resource_by_name, stack_id, name)

    async def by_physical_id(self, physical_id: str,
                             ) -> list[tuple[ResourceRecord, StackRecord]]:
        """Every row whose physical id is ``physical_id``, with its stack (rows of a
        deleted stack left out), in one read."""
        def read(s: Session) -> list[tuple[ResourceRecord, StackRecord]]:
            found = []
            for row in db_resources.find_resources_by_physical_id(s, physical_id):
                rec = db_stacks.get_stack(s, row.stack_id)
                if rec is not None:
                    found.append((row, rec))
            return found

        return await self._db.run(read)

    async def in_stack(self, stack_id: str, name: str,
                       ) -> tuple[StackRecord, ResourceRecord | None] | None:
        """The stack (None: there is none, or it is deleted) and its current row of
        that name, in one read."""
        def read(s: Session) -> tuple[StackRecord, ResourceRecord | None] | None:
            stack = db_stacks.get_stack(s, stack_id)
            if stack is None:
                return None
            return stack, db_resources.get_resource_by_name(s, stack_id, name)

        return await self._db.run(read)

    async def for_agent(self, key: str, resource_name: str, *, scope: str | None,
                        project_id: str, owner: str | None = None,
                        ) -> db_agent_view.AgentView:
        """What a server's agent polls: the stack ``key`` names (an id within ``scope``,
        None: any project; else a name of ``project_id``), its resource of that name
        and, for a keypair ``owner``'s caller, the owner's type; only the columns an
        agent is shown, in one short read (inline on SQLite: :mod:`kiln.db.sqlite_fast`)."""
        return await self._db.read_now(db_agent_view.agent_view_rows, key=key, scope=scope,
                                       project_id=project_id, resource_name=resource_name,
                                       owner=owner)

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
