"""The async facade: reads on threads, writes coalesced into few transactions, a failing
write failing alone."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import Session

from kiln import errors
from kiln.db import events, resources, sqlite_fast, stacks
from kiln.db.facade import Database, open_database
from kiln.db.records import EventQuery, NewEvent, NewResource, NewStack
from tests.unit.db.support import TEMPLATE


async def _stack(db: Database, name: str = "s") -> str:
    st = await db.write(stacks.create_stack, NewStack(name=name, project_id="p1",
                                                      template=TEMPLATE))
    return st.id


async def test_write_then_read_sees_the_commit(db: Database) -> None:
    sid = await _stack(db)
    got = await db.run(stacks.get_stack, sid)
    assert got is not None and got.name == "s"


async def test_queued_writes_share_transactions_and_return_own_results(db: Database) -> None:
    sid = await _stack(db)
    (r,) = await db.write(resources.create_resources,
                          [NewResource(sid, sid, "r", "OS::Heat::None")])
    before = db.commits
    futures: list[asyncio.Future[object]] = []
    for i in range(200):
        futures.append(db.write(resources.update_resource, r.id,
                                {"status_reason": f"step {i}"}))
        futures.append(db.write(events.add_events, [NewEvent(sid, "r", "T", "CREATE",
                                                             "IN_PROGRESS", f"step {i}")]))
    results = await asyncio.gather(*futures)
    assert results[0] is True and isinstance(results[1], list) and len(results[1]) == 1
    assert db.commits - before < 400            # coalesced (typically a handful)
    got = await db.run(resources.get_resource, r.id)
    assert got is not None and got.status_reason == "step 199"   # applied in queue order
    evs = await db.run(events.list_events, EventQuery([sid], sort_dir="asc"))
    assert [e.resource_status_reason for e in evs] == [f"step {i}" for i in range(200)]


async def test_a_failing_write_fails_alone(db: Database) -> None:
    await _stack(db, "taken")

    def boom(s: Session) -> None:
        raise RuntimeError("boom")

    ok1 = db.write(stacks.create_stack, NewStack(name="a", project_id="p1", template=TEMPLATE))
    dup = db.write(stacks.create_stack, NewStack(name="taken", project_id="p1",
                                                 template=TEMPLATE))
    bad = db.write(boom)
    ok2 = db.write(stacks.create_stack, NewStack(name="b", project_id="p1", template=TEMPLATE))
    a, b = await ok1, await ok2
    with pytest.raises(errors.StackExists):
        await dup
    with pytest.raises(RuntimeError, match="boom"):
        await bad
    assert (await db.run(stacks.get_stack, a.id)) is not None
    assert (await db.run(stacks.get_stack, b.id)) is not None
    assert await db.run(stacks.count_project_stacks, "p1") == 3


async def test_closed_database_refuses_work(db: Database) -> None:
    await db.close()
    with pytest.raises(RuntimeError, match="closed"):
        db.write(stacks.count_project_stacks, "p1")
    with pytest.raises(RuntimeError, match="closed"):
        await db.run(stacks.count_project_stacks, "p1")


async def test_open_database_creates_schema_on_an_empty_database(url: str) -> None:
    db = await open_database(url)
    try:
        sid = await _stack(db)
        assert (await db.run(stacks.get_stack, sid)) is not None
    finally:
        await db.close()
    again = await open_database(url)        # existing schema at head: left alone
    try:
        assert (await again.run(stacks.get_stack, sid)) is not None
    finally:
        await again.close()


class _DeadlockVictim(Exception):
    sqlstate = "40P01"   # what psycopg reports when PostgreSQL picks this transaction


async def test_a_batch_chosen_as_deadlock_victim_is_retried(db: Database) -> None:
    attempts: list[int] = []

    def flaky(s: Session) -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise sa.exc.OperationalError("UPDATE ...", {}, _DeadlockVictim())
        return "done"

    assert await db.write(flaky) == "done"
    assert len(attempts) == 2


async def test_other_database_errors_are_not_retried(db: Database) -> None:
    attempts: list[int] = []

    def broken(s: Session) -> None:
        attempts.append(1)
        raise sa.exc.OperationalError("UPDATE ...", {}, Exception("disk I/O error"))

    with pytest.raises(sa.exc.OperationalError):
        await db.write(broken)
    assert len(attempts) == 1


async def test_run_retries_when_sqlite_reports_the_database_locked(db: Database) -> None:
    attempts: list[int] = []

    def read_then_write(s: Session) -> int:
        attempts.append(1)
        if len(attempts) == 1:
            raise sa.exc.OperationalError("UPDATE ...", {},
                                          sqlite3.OperationalError("database is locked"))
        return len(attempts)

    assert await db.run(read_then_write) == 2


async def test_reads_and_lock_writes_on_readers_interleave_with_the_writer(
        db: Database) -> None:
    """The engine takes stack locks through ``run`` while the writer commits status
    changes: neither side may fail with 'database is locked'."""
    from kiln.db import locks

    sids = [await _stack(db, f"s{i}") for i in range(10)]
    rows = await db.write(resources.create_resources,
                          [NewResource(sid, sid, "r", "T") for sid in sids])

    async def actor(i: int) -> int:
        sid, rid = sids[i], rows[i].id
        wins = 0
        for step in range(15):
            got = await db.run(locks.acquire_stack_lock, sid, f"engine-{i}")
            wins += got.acquired
            db.write(resources.queue_resource_update, rid, {"status_reason": f"{step}"})
            await db.write(events.add_events, [NewEvent(sid, "r", "T", "CREATE",
                                                        "IN_PROGRESS", f"{step}")])
            assert await db.run(locks.release_stack_lock, sid, f"engine-{i}")
            await db.run(resources.list_resources, sid)
        return wins

    assert await asyncio.gather(*(actor(i) for i in range(10))) == [15] * 10
    for sid, row in zip(sids, rows, strict=True):
        got = await db.run(resources.get_resource, row.id)
        assert got is not None and got.status_reason == "14"
        assert await db.run(events.count_events, sid) == 15


async def test_the_writer_keeps_its_connection_on_a_sqlite_file(db: Database) -> None:
    """On a SQLite file batch after batch commits on the writer's one connection (a
    server's connections go back to the pool after each batch); a batch that fails gives
    its connection up, and the next one commits on a fresh one."""
    def connection(s: Session) -> sa.Connection:
        return s.connection()

    first, second = await db.write(connection), await db.write(connection)
    if not sqlite_fast.usable(db.engine):
        assert first is not second
        return
    assert first is second

    def broken(s: Session) -> None:
        raise sa.exc.OperationalError("UPDATE ...", {}, Exception("disk I/O error"))

    with pytest.raises(sa.exc.OperationalError):
        await db.write(broken)
    sid = await _stack(db, "after-a-failure")
    assert (await db.run(stacks.get_stack, sid)) is not None
    assert await db.write(connection) is not first
