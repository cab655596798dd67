"""SingleFlight: bursts share a read, and nobody gets a read that began before it asked."""

from __future__ import annotations

import asyncio

import pytest

from kiln.engine.service.single_flight import SingleFlight


async def test_callers_during_a_read_get_the_next_read_and_share_it() -> None:
    started: list[asyncio.Event] = []
    finish: list[asyncio.Event] = []

    began: asyncio.Queue[int] = asyncio.Queue()

    async def read() -> int:
        started.append(asyncio.Event())
        finish.append(asyncio.Event())
        started[-1].set()
        began.put_nowait(len(started))
        await finish[-1].wait()
        return len(started)

    flight = SingleFlight(read)
    first = asyncio.create_task(flight.get())
    assert await began.get() == 1
    # these ask while read 1 runs: they must not be answered by it
    late = [asyncio.create_task(flight.get()) for _ in range(4)]
    await asyncio.sleep(0)
    finish[0].set()
    assert await first == 1
    assert await began.get() == 2
    finish[1].set()
    assert [await t for t in late] == [2, 2, 2, 2]
    assert len(started) == 2     # one read for the four of them


async def test_a_failed_read_fails_its_callers_and_the_next_read_runs() -> None:
    outcomes = iter([RuntimeError("database gone"), 7])

    async def read() -> int:
        outcome = next(outcomes)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    flight = SingleFlight(read)
    with pytest.raises(RuntimeError, match="database gone"):
        await flight.get()
    assert await flight.get() == 7
