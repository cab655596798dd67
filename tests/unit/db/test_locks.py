"""Stack locks (atomic, one winner), engine heartbeats, dead-engine recovery lists."""

from __future__ import annotations

import datetime as dt
import threading

import sqlalchemy as sa
from sqlalchemy.orm import Session

from kiln.db import locks, stacks
from kiln.db.models import Service, utcnow
from tests.unit.db.support import Tx, new_stack


def test_acquire_release_and_reentry(tx: Tx) -> None:
    st = new_stack(tx)
    with tx() as s:
        first = locks.acquire_stack_lock(s, st.id, "A")
        assert (first.acquired, first.holder) == (True, "A")
        assert locks.acquire_stack_lock(s, st.id, "A").acquired     # already ours
        busy = locks.acquire_stack_lock(s, st.id, "B")
        assert (busy.acquired, busy.holder) == (False, "A")
        assert not locks.release_stack_lock(s, st.id, "B")          # not B's to release
        assert locks.release_stack_lock(s, st.id, "A")
        assert locks.get_stack_lock(s, st.id) is None
        assert locks.acquire_stack_lock(s, st.id, "B").acquired


def test_steal_only_from_the_named_holder(tx: Tx) -> None:
    st = new_stack(tx, engine_id="dead")      # created already locked
    with tx() as s:
        assert locks.get_stack_lock(s, st.id) == "dead"
        assert not locks.steal_stack_lock(s, st.id, "someone-else", "C")
        assert locks.steal_stack_lock(s, st.id, "dead", "C")
        assert not locks.steal_stack_lock(s, st.id, "dead", "D")    # C got there first
        got = stacks.get_stack(s, st.id)
        assert got is not None and got.engine_id == "C" and got.lock_time is not None


def test_concurrent_acquirers_exactly_one_wins(tx: Tx, engine: sa.Engine) -> None:
    st = new_stack(tx)
    n = 6
    barrier = threading.Barrier(n)
    results: dict[str, bool] = {}
    errors: list[BaseException] = []

    def contender(name: str) -> None:
        try:
            with Session(engine) as s, s.begin():
                barrier.wait(timeout=10)
                results[name] = locks.acquire_stack_lock(s, st.id, name).acquired
        except BaseException as exc:  # reported below, never swallowed  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=contender, args=(f"E{i}",)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors
    winners = [k for k, v in results.items() if v]
    assert len(results) == n and len(winners) == 1
    with tx() as s:
        assert locks.get_stack_lock(s, st.id) == winners[0]


def _age_heartbeat(tx: Tx, engine_id: str, seconds: float) -> None:
    with tx() as s:
        s.execute(sa.update(Service).where(Service.engine_id == engine_id)
                  .values(updated_at=utcnow() - dt.timedelta(seconds=seconds)))


def test_heartbeats_dead_engines_and_their_stacks(tx: Tx) -> None:
    with tx() as s:
        locks.register_engine(s, "alive", host="h1", hostname="h1")
        locks.register_engine(s, "dead", host="h2", hostname="h2")
        locks.register_engine(s, "quit", host="h3", hostname="h3")
        locks.unregister_engine(s, "quit")
    _age_heartbeat(tx, "dead", 120)
    _age_heartbeat(tx, "alive", 120)
    with tx() as s:
        locks.heartbeat(s, "alive")          # refreshed: alive again
    held_alive = new_stack(tx, "a", engine_id="alive")
    held_dead = new_stack(tx, "b", engine_id="dead")
    held_quit = new_stack(tx, "c", engine_id="quit")
    held_ghost = new_stack(tx, "d", engine_id="never-registered")
    new_stack(tx, "free")
    with tx() as s:
        assert locks.dead_engines(s, dead_after=20) == ["dead", "quit"]
        orphans = locks.stacks_held_by_dead_engines(s, dead_after=20)
        assert {x.id for x in orphans} == {held_dead.id, held_quit.id, held_ghost.id}
        assert [x.id for x in locks.stacks_locked_by(s, ["alive"])] == [held_alive.id]
        services = locks.list_services(s)
        assert sorted(x.engine_id for x in services) == ["alive", "dead"]
        assert {x.host for x in services} == {"h1", "h2"}


def test_register_again_revives_a_service_row(tx: Tx) -> None:
    with tx() as s:
        first = locks.register_engine(s, "e1", host="h", hostname="h")
        locks.unregister_engine(s, "e1")
        again = locks.register_engine(s, "e1", host="h2", hostname="h2", report_interval=9)
    assert again.id == first.id and again.deleted_at is None
    assert (again.host, again.report_interval) == ("h2", 9)


def test_an_engine_restarted_on_its_host_forgets_its_dead_predecessor(tx: Tx) -> None:
    with tx() as s:
        locks.register_engine(s, "old", host="ctl1", hostname="ctl1", binary="heat-engine")
        locks.register_engine(s, "recent", host="ctl1", hostname="ctl1",
                              binary="heat-engine")
        locks.register_engine(s, "other-host", host="ctl2", hostname="ctl2",
                              binary="heat-engine")
        locks.register_engine(s, "api", host="ctl1", hostname="ctl1", binary="heat-api")
        locks.register_engine(s, "new", host="ctl1", hostname="ctl1", binary="heat-engine")
    for engine_id in ("old", "other-host", "api"):
        _age_heartbeat(tx, engine_id, 200)
    _age_heartbeat(tx, "recent", 100)
    held = new_stack(tx, "held", engine_id="old")
    with tx() as s:
        assert locks.forget_aborted_services(s, "new", host="ctl1", hostname="ctl1",
                                             binary="heat-engine", older_than=180) == ["old"]
        # only this host's and binary's rows silent for longer than the window go
        assert sorted(x.engine_id for x in locks.list_services(s)) == [
            "api", "new", "other-host", "recent"]
        # and what the forgotten engine held is still taken over
        assert held.id in {x.id for x in locks.stacks_held_by_dead_engines(s, dead_after=20)}
