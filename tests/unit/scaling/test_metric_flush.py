"""The metric buffer's flush on a real database (SQLite): the buffer holds every
project's points, so a row the database refuses is dropped alone (and logged), never the
batch it came with (issue 22, finding 4)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kiln.alarms import service as alarm_service
from kiln.alarms import store
from kiln.alarms.service import AlarmService
from kiln.alarms.store import Point
from kiln.db.facade import Database, open_database

T0 = 1_800_000_000.0


@pytest.fixture
async def db(sqlite_url: str) -> AsyncIterator[Database]:
    database = await open_database(sqlite_url)
    yield database
    await database.close()


def point(value: float, name: Any = "m", stamp: float = T0) -> Point:
    return Point("ns", name, "[]", None, value, stamp)


async def stored(db: Database, project: str) -> list[float]:
    rows = await db.run(store.metric_points, project, "ns", "m", "[]", T0 - 1, T0 + 1, None)
    return sorted(value for _, value, _ in rows)


async def test_a_refused_row_is_dropped_alone(db: Database,
                                              caplog: pytest.LogCaptureFixture) -> None:
    svc = AlarmService(db, clock=lambda: T0)
    good = [(f"p{i}", point(float(i))) for i in range(40)]
    # NOT NULL metric_name: the database refuses this row (as SQLite refuses a NaN)
    refused = ("evil", point(1.0, name=None))
    svc._buffer = [*good[:17], refused, *good[17:]]
    with caplog.at_level(logging.ERROR, logger="kiln.alarms.service"):
        await svc.flush()
    for i in range(40):
        assert await stored(db, f"p{i}") == [float(i)]
    assert "dropped 1 metric data point(s) of project(s) evil" in caplog.text
    assert svc._buffer == []


async def test_non_finite_rows_never_reach_the_database(
        db: Database, caplog: pytest.LogCaptureFixture) -> None:
    svc = AlarmService(db, clock=lambda: T0)
    svc._buffer = [("a", point(1.0)), ("b", point(float("nan"))),
                   ("c", point(2.0, stamp=float("inf")))]
    with caplog.at_level(logging.ERROR, logger="kiln.alarms.service"):
        await svc.flush()
    assert await stored(db, "a") == [1.0]
    assert "dropped 2 metric data point(s) with a non-finite value or time" in caplog.text


async def test_splitting_is_bounded(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(alarm_service, "MAX_FLUSH_SPLITS", 3)
    svc = AlarmService(db, clock=lambda: T0)
    writes = 0
    real = db.write

    def counting(fn: Any, *args: Any) -> Any:
        nonlocal writes
        writes += 1
        return real(fn, *args)

    monkeypatch.setattr(db, "write", counting)
    svc._buffer = [("x", point(1.0, name=None)) for _ in range(64)]
    await svc.flush()   # never raises: everything refused is dropped, logged
    assert writes == 1 + 2 * 3
