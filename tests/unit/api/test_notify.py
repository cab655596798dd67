"""kiln.notify: a commit published from the database writer's thread wakes a waiting
reader on its own loop, coalesced; a closed subscription is no longer called."""

from __future__ import annotations

import asyncio
import threading

from kiln.notify import EventBus


async def test_publish_from_another_thread_wakes_the_loop() -> None:
    bus = EventBus()
    with bus.subscribe() as sub:
        thread = threading.Thread(target=lambda: (bus.publish(["a"]), bus.publish(["b"])))
        thread.start()
        got: set[str] = set()
        while got != {"a", "b"}:
            got |= await asyncio.wait_for(sub.wait(None), 5)
        thread.join()
        assert await sub.wait(0.01) == set()  # nothing new: the wait times out empty


async def test_wake_ends_a_wait_without_ids() -> None:
    bus = EventBus()
    with bus.subscribe() as sub:
        asyncio.get_running_loop().call_soon(sub.wake)
        assert await asyncio.wait_for(sub.wait(None), 5) == set()


async def test_closed_subscription_is_dropped() -> None:
    bus = EventBus()
    sub = bus.subscribe()
    sub.close()
    bus.publish(["a"])
    await asyncio.sleep(0)  # let any delivery scheduled on this loop run
    assert await sub.wait(0) == set()
