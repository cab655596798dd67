"""The ``stacks`` change counter: every write a stack listing or show could reveal moves
it, in the writer's own transaction; reads and lock moves do not."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import sqlalchemy as sa

from kiln.db import locks, stacks
from kiln.db.engine import make_engine
from kiln.db.migrate import upgrade
from kiln.db.records import StackQuery, StackValues
from tests.unit.db.support import Tx, new_stack


def _generation(tx: Tx) -> int:
    with tx() as s:
        value = stacks.stacks_generation(s)
    assert value is not None
    return value


def test_a_new_database_starts_counting_from_zero(tx: Tx) -> None:
    assert _generation(tx) == 0


def test_the_migrated_schema_has_the_counter_too(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/migrated.db"
    upgrade(url)
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            assert conn.execute(sa.text(
                "SELECT value FROM change_counter WHERE name = 'stacks'")).scalar() == 0
    finally:
        engine.dispose()


def test_every_visible_stack_write_moves_the_counter(tx: Tx) -> None:
    seen = [_generation(tx)]

    def moved() -> bool:
        seen.append(_generation(tx))
        return seen[-1] > seen[-2]

    st = new_stack(tx, "counted")
    assert moved()
    with tx() as s:
        stacks.update_stack(s, st.id, StackValues(status="COMPLETE"))
    assert moved()
    with tx() as s:
        stacks.set_stack_tags(s, st.id, ["x"])
    assert moved()
    with tx() as s:
        stacks.soft_delete_stack(s, st.id)
    assert moved()
    with tx() as s:
        assert stacks.purge_deleted_stacks(s, dt.timedelta(seconds=-60)) == 1
    assert moved()


def test_reads_and_lock_moves_leave_it_alone(tx: Tx) -> None:
    st = new_stack(tx, "quiet")
    before = _generation(tx)
    with tx() as s:
        stacks.get_stack(s, st.id)
        stacks.list_stacks(s, StackQuery(project_id="p1"))
        locks.acquire_stack_lock(s, st.id, "engine-a")
        locks.release_stack_lock(s, st.id, "engine-a")
    assert _generation(tx) == before


def test_a_rolled_back_write_does_not_move_it(tx: Tx) -> None:
    st = new_stack(tx, "rolled")
    before = _generation(tx)
    try:
        with tx() as s:
            stacks.update_stack(s, st.id, StackValues(status="FAILED"))
            raise RuntimeError("abort the transaction")
    except RuntimeError:
        pass
    assert _generation(tx) == before
