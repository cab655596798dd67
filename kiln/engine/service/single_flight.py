"""One database read shared by every caller that asked for it before it started.

A cheap read (the stacks change counter) still costs a thread hop to the reader pool,
which under 20 concurrent requests costs more than everything else a cached response
needs. Callers that arrive while no read is running start one; callers that arrive while
one is running join the *next* read, never the running one, because the running read
may have begun before a change they must see (a client that has just created a stack
must find it in its next list). So every caller gets a value read entirely after it
asked, and under load one read serves a whole burst of callers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class SingleFlight(Generic[T]):
    def __init__(self, read: Callable[[], Awaitable[T]]) -> None:
        self._read = read
        self._waiting: asyncio.Future[T] | None = None
        self._running = False

    async def get(self) -> T:
        fut = self._waiting
        if fut is None:
            fut = self._waiting = asyncio.get_running_loop().create_future()
            if not self._running:
                self._running = True
                asyncio.get_running_loop().create_task(self._drain())
        # shield: one caller giving up (client gone) must not cancel the others' read
        return await asyncio.shield(fut)

    async def _drain(self) -> None:
        try:
            while self._waiting is not None:
                fut, self._waiting = self._waiting, None
                try:
                    value = await self._read()
                except Exception as exc:  # every waiter of this read gets the error  # noqa: BLE001
                    fut.set_exception(exc)
                    fut.exception()  # retrieved here too: no "never retrieved" noise
                else:
                    fut.set_result(value)
        finally:
            self._running = False
