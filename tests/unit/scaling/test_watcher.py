"""The watcher on a real database (SQLite): evaluation windows, insufficient data, the
history it records, the lease that lets exactly one process evaluate, restarts, and
bounded metric storage. A test clock stands in for time; actions are recorded by a
runner double (the engine's signals have their own end-to-end test)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from kiln.alarms import rules, store
from kiln.alarms.service import AlarmService
from kiln.alarms.store import AlarmRecord
from kiln.alarms.watcher import Watcher
from kiln.db.facade import Database, open_database

T0 = 1_800_000_000.0   # a multiple of 10: windows start on it


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str, str]] = []

    async def run(self, alarm: AlarmRecord, action: str, previous: str, state: str,
                  reason: str) -> str:
        self.calls.append((alarm.name, action, previous, state))
        return "recorded"

    async def state_changed(self, alarm: AlarmRecord, previous: str, state: str,
                            reason: str) -> None:
        self.calls.append((alarm.name, "state", previous, state))


@pytest.fixture
async def db(sqlite_url: str) -> AsyncIterator[Database]:
    database = await open_database(sqlite_url)
    yield database
    await database.close()


def rule(**kw: Any) -> rules.Rule:
    base: dict[str, Any] = dict(namespace="ns", metric_name="cpu", statistic="Average",
                                period=10, evaluation_periods=2, threshold=80,
                                comparison="GreaterThanThreshold",
                                dimensions=(("host", "a"),),
                                actions={"alarm_actions": ["http://127.0.0.1:1/up"],
                                         "ok_actions": ["http://127.0.0.1:1/ok"]})
    base.update(kw)
    return rules.make_rule(**base)


async def push(svc: AlarmService, value: float, when: float, dims: Any = None) -> None:
    await svc.put_metric_data("p", "ns", [{
        "MetricName": "cpu", "Value": value, "Timestamp": when,
        "Dimensions": dims if dims is not None else [{"Name": "host", "Value": "a"}]}])


async def state(db: Database, name: str = "high") -> str:
    found = await db.run(store.get_alarm, "p", name)
    assert found is not None
    return found.state


async def test_alarm_needs_every_period_to_breach(db: Database) -> None:
    clock, runner = Clock(), Recorder()
    svc = AlarmService(db, runner=runner, clock=clock)
    watcher = Watcher(svc, clock=clock)
    await svc.put_alarm("p", "high", rule())
    assert await watcher.round() == 1
    assert await state(db) == "INSUFFICIENT_DATA"    # a metric that never arrived
    await push(svc, 90, T0 + 1)
    clock.now = T0 + 20      # windows [T0, T0+10) breach, [T0+10, T0+20) has no data
    await watcher.round()
    assert await state(db) == "OK"
    await push(svc, 95, T0 + 21)
    await push(svc, 50, T0 + 22, dims=[{"Name": "host", "Value": "other"}])
    clock.now = T0 + 30      # [T0+10, T0+20) empty still: not ALARM
    await watcher.round()
    assert await state(db) == "OK"
    await push(svc, 99, T0 + 31)
    clock.now = T0 + 40      # [T0+20, T0+30) = 95, [T0+30, T0+40) = 99
    await watcher.round()
    assert await state(db) == "ALARM"
    assert runner.calls == [("high", "http://127.0.0.1:1/ok", "INSUFFICIENT_DATA", "OK"),
                            ("high", "http://127.0.0.1:1/up", "OK", "ALARM")]
    history = await svc.history("p", alarm_name="high", item_type="StateUpdate")
    assert [h[2] for h in reversed(history)] == [
        "Alarm updated from INSUFFICIENT_DATA to OK", "Alarm updated from OK to ALARM"]
    actions = await svc.history("p", alarm_name="high", item_type="Action")
    assert len(actions) == 2


async def test_not_due_before_its_period_and_disabled_actions_do_not_run(
        db: Database) -> None:
    clock, runner = Clock(), Recorder()
    svc = AlarmService(db, runner=runner, clock=clock)
    watcher = Watcher(svc, clock=clock)
    await svc.put_alarm("p", "high", rule(evaluation_periods=1), actions_enabled=False)
    await watcher.round()
    clock.now = T0 + 5
    assert await watcher.round() == 0     # evaluated 5 s ago, period 10 s
    await push(svc, 90, T0 + 6)
    clock.now = T0 + 10
    await watcher.round()
    assert await state(db) == "ALARM"
    assert runner.calls == []


async def test_alarm_name_dimension_feeds_that_alarm(db: Database) -> None:
    clock = Clock()
    svc = AlarmService(db, runner=Recorder(), clock=clock)
    watcher = Watcher(svc, clock=clock)
    await svc.put_alarm("p", "high", rule(evaluation_periods=1))
    # cfn-push-stats --watch high: the alarm's name as a dimension, no other dimension
    await push(svc, 90, T0 + 1, dims=[{"Name": "AlarmName", "Value": "high"}])
    clock.now = T0 + 10
    await watcher.round()
    assert await state(db) == "ALARM"


async def test_one_lease_holder_evaluates_and_another_takes_over(db: Database) -> None:
    clock = Clock()
    svc = AlarmService(db, runner=Recorder(), clock=clock)
    first = Watcher(svc, clock=clock, lease_ttl=30, holder="one")
    second = Watcher(svc, clock=clock, lease_ttl=30, holder="two")
    await svc.put_alarm("p", "high", rule(evaluation_periods=1))
    assert await first.round() == 1
    clock.now += 10
    assert await second.round() == 0 and not second.holding
    assert await first.round() == 1
    clock.now += 31            # "one" died: its lease lapses
    assert await second.round() == 1 and second.holding
    assert await first.round() == 0 and not first.holding


async def test_a_restarted_watcher_resumes_from_the_stored_state(db: Database) -> None:
    clock, runner = Clock(), Recorder()
    svc = AlarmService(db, runner=runner, clock=clock)
    await svc.put_alarm("p", "high", rule(evaluation_periods=1))
    await push(svc, 90, T0 + 1)
    clock.now = T0 + 10
    first = Watcher(svc, clock=clock, holder="one")
    await first.round()
    await first.stop()          # releases the lease
    assert await state(db) == "ALARM"
    await push(svc, 91, T0 + 11)
    clock.now = T0 + 20
    second = Watcher(svc, clock=clock, holder="two")
    await second.round()        # reads the data back, still ALARM: no second action
    assert await state(db) == "ALARM"
    assert [c[3] for c in runner.calls] == ["ALARM"]


async def test_old_points_are_purged_and_refused(db: Database) -> None:
    clock = Clock()
    svc = AlarmService(db, runner=Recorder(), clock=clock, retention=100)
    await push(svc, 1, T0 - 50)
    clock.now = T0 + 60
    await svc.purge()
    assert await db.run(store.points_after, 0, 0) == []
    with pytest.raises(rules.InvalidParameter, match="older than the metric retention"):
        await push(svc, 1, T0 - 50)
    with pytest.raises(rules.InvalidParameter, match="two hours in the future"):
        await push(svc, 1, clock.now + 3 * 3600)


async def test_a_failing_action_is_recorded_as_failed_history(db: Database) -> None:
    """The real runner: a refused POST, a non-http URL and a signal to another project
    each become a failed Action history item; the alarm's state changes all the same."""
    from kiln.engine.service.alarm_actions import EngineActions

    clock = Clock()
    svc = AlarmService(db, runner=EngineActions(service=None, timeout=5), clock=clock)
    other = "http://127.0.0.1:1/v1/other/stacks/s/1/resources/r/signal"
    await svc.put_alarm("p", "high", rule(actions={
        "alarm_actions": ["http://127.0.0.1:1/up", "ftp://127.0.0.1/x", other]}))
    await svc.set_state("p", "high", "ALARM", "test")
    assert await state(db) == "ALARM"
    actions = await svc.history("p", alarm_name="high", item_type="Action")
    assert sorted(h[2] for h in actions) == sorted(
        f"Failed to execute action {url}"
        for url in ("http://127.0.0.1:1/up", "ftp://127.0.0.1/x", other))


async def test_a_flood_is_throttled_and_nothing_of_it_is_half_stored(db: Database) -> None:
    """More points waiting to be written than ``max_buffered``: the request is refused
    whole with AWS's Throttling (the client retries later), what was accepted is kept."""
    clock = Clock()
    svc = AlarmService(db, runner=Recorder(), clock=clock, max_buffered=5,
                       flush_interval=3600)
    data = [{"MetricName": "cpu", "Value": i, "Timestamp": T0} for i in range(3)]
    assert await svc.put_metric_data("p", "ns", data) == 3
    with pytest.raises(rules.InvalidParameter) as refused:
        await svc.put_metric_data("p", "ns", data)
    assert refused.value.code == "Throttling"
    await svc.flush()
    assert len(await db.run(store.points_after, 0, 0)) == 3
    assert await svc.put_metric_data("p", "ns", data) == 3   # room again once written


async def test_a_read_waits_for_the_points_being_written() -> None:
    """A read's flush while the periodic flush is still writing waits for that write
    (else the read could run before those rows are committed)."""
    import asyncio

    class SlowDb:
        """Writes finish only when the test says; reads record what was committed."""

        def __init__(self) -> None:
            self.release = asyncio.Event()
            self.committed: list[Any] = []
            self.seen: list[Any] = []

        async def write(self, fn: Any, rows: Any) -> None:
            await self.release.wait()
            self.committed.extend(rows)

        async def run(self, fn: Any, *args: Any, **kw: Any) -> list[Any]:
            self.seen = list(self.committed)
            return []

    db = SlowDb()
    svc = AlarmService(db, runner=Recorder(), clock=Clock(), flush_interval=3600)
    await push(svc, 5, T0)
    writing = asyncio.ensure_future(svc.flush())   # takes the buffer, waits to write
    await asyncio.sleep(0)
    reading = asyncio.ensure_future(svc.list_metrics("p", namespace="ns"))
    await asyncio.sleep(0)
    db.release.set()
    await asyncio.gather(writing, reading)
    assert len(db.seen) == 1
