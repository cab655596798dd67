"""What bounds the engine's memory and keeps its scheduling linear at 100,000 resources:
the nested-stack budget (children wait for a share before they are built or loaded;
descendants of a holder never wait) and the engine-wide limit's O(1) hand-offs."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kiln.engine.actions.nested import NestedOps
from kiln.engine.runtime.budget import NestedBudget
from kiln.engine.runtime.scheduler import Limit
from kiln.engine.service import EngineService, RequestContext

from .support import create, hot


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# -- the limit -------------------------------------------------------------------------
def test_limit_hands_places_first_come_first_served() -> None:
    async def main() -> list[int]:
        limit = Limit(2)
        order: list[int] = []
        gate = asyncio.Event()

        async def one(i: int) -> None:
            async with limit:
                order.append(i)
                await gate.wait()

        tasks = [asyncio.ensure_future(one(i)) for i in range(6)]
        await asyncio.sleep(0)
        assert order == [0, 1] and limit.locked()
        gate.set()
        await asyncio.gather(*tasks)
        assert not limit.locked()
        return order

    assert run(main()) == [0, 1, 2, 3, 4, 5]


def test_a_cancelled_waiter_gives_its_place_on() -> None:
    async def main() -> None:
        limit = Limit(1)
        await limit.acquire()
        waiting = asyncio.ensure_future(limit.acquire())
        after = asyncio.ensure_future(limit.acquire())
        await asyncio.sleep(0)
        waiting.cancel()            # cancelled while queued: skipped by the release
        limit.release()
        await asyncio.wait_for(after, 1)
        assert waiting.cancelled() and limit.locked()
        # handed a place in the same turn as it is cancelled: the place is not lost
        third = asyncio.ensure_future(limit.acquire())
        await asyncio.sleep(0)
        limit.release()             # ``third`` is handed the place...
        third.cancel()              # ...and cancelled before it runs
        with pytest.raises(asyncio.CancelledError):
            await third
        assert not limit.locked()
        await asyncio.wait_for(limit.acquire(), 1)

    run(main())


def test_many_walks_sharing_the_limit_release_in_linear_time() -> None:
    """20,000 waiters released in bursts (many actions ending in one loop turn) used to
    cost a scan of every woken waiter per release."""
    async def main() -> int:
        limit = Limit(1000)
        done = 0

        async def one() -> None:
            nonlocal done
            async with limit:
                await asyncio.sleep(0)
                done += 1

        await asyncio.wait_for(asyncio.gather(*(one() for _ in range(20000))), 30)
        return done

    assert run(main()) == 20000


# -- the nested budget -----------------------------------------------------------------
def test_children_wait_for_a_share_and_descendants_of_a_holder_do_not() -> None:
    async def main() -> None:
        budget = NestedBudget(10)
        first = await budget.acquire(6, parent_stack_id="top")
        first.bind("child-1")
        second = asyncio.ensure_future(budget.acquire(6, parent_stack_id="top"))
        await asyncio.sleep(0)
        assert not second.done() and budget.used == 6
        # a grandchild of the holder passes at once, whatever its size
        inner = await asyncio.wait_for(budget.acquire(50, parent_stack_id="child-1"), 1)
        assert inner.weight == 0
        # so does a delete of the holder itself (it preempts the holder's create)
        again = await asyncio.wait_for(
            budget.acquire(6, parent_stack_id="top", stack_id="child-1"), 1)
        assert again.weight == 0
        first.release()
        first.release()             # twice is harmless
        share = await asyncio.wait_for(second, 1)
        assert share.weight == 6 and budget.used == 6
        assert "child-1" not in budget.holders
        share.release()
        assert budget.used == 0

    run(main())


def test_a_child_bigger_than_the_budget_runs_alone() -> None:
    async def main() -> None:
        budget = NestedBudget(10)
        small = await budget.acquire(3, parent_stack_id=None)
        big = asyncio.ensure_future(budget.acquire(1000, parent_stack_id=None))
        later = asyncio.ensure_future(budget.acquire(1, parent_stack_id=None))
        await asyncio.sleep(0)
        assert not big.done() and not later.done()   # first come, first served
        small.release()
        share = await asyncio.wait_for(big, 1)
        assert share.weight == 10 and not later.done()
        share.release()
        (await asyncio.wait_for(later, 1)).release()
        assert budget.used == 0

    run(main())


def test_a_cancelled_wait_leaves_nothing_held() -> None:
    async def main() -> None:
        budget = NestedBudget(4)
        held = await budget.acquire(4, parent_stack_id=None)
        waiting = asyncio.ensure_future(budget.acquire(2, parent_stack_id=None))
        await asyncio.sleep(0)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        held.release()
        assert budget.used == 0
        (await asyncio.wait_for(budget.acquire(4, parent_stack_id=None), 1)).release()

    run(main())


def _groups(n: int, count: int) -> dict[str, Any]:
    return hot({f"g{i}": {"type": "OS::Heat::ResourceGroup", "properties": {
        "count": count, "resource_def": {"type": "OS::Heat::RandomString"}}}
        for i in range(n)})


async def test_a_stack_of_groups_holds_at_most_the_budget(
        service: EngineService, ctx: RequestContext,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Six groups of 5 under a budget of 10: never more than two children at once, on
    create and on delete, and every member still created and deleted."""
    ops = service.engine.support.services
    assert isinstance(ops, NestedOps)
    budget = ops.budget
    budget.size = 10
    peak = 0
    acquire = budget.acquire

    async def watched(weight: int, **kw: Any) -> Any:
        nonlocal peak
        share = await acquire(weight, **kw)
        peak = max(peak, budget.used)
        return share

    monkeypatch.setattr(budget, "acquire", watched)
    shown = await create(service, ctx, "groups", _groups(6, 5))
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    assert 5 <= peak <= 10 and budget.used == 0 and not budget.holders
    children = [r for r in await service.list_stack_resources(ctx, shown, nested_depth=1)
                if r["resource_type"] == "OS::Heat::RandomString"]
    assert len(children) == 30
    peak = 0
    await service.delete_stack(ctx, shown)
    await service.wait_for_stack(shown["id"])
    assert (await service.show_stack(ctx, shown))["stack_status"] == "DELETE_COMPLETE"
    assert 5 <= peak <= 10 and budget.used == 0 and not budget.holders


async def test_nested_groups_inside_a_held_child_do_not_wait(
        service: EngineService, ctx: RequestContext) -> None:
    """A child holding the whole budget creates its own nested stacks (a group of
    groups) without waiting for a share it holds itself."""
    ops = service.engine.support.services
    assert isinstance(ops, NestedOps)
    ops.budget.size = 2
    outer = hot({"outer": {"type": "OS::Heat::ResourceGroup", "properties": {
        "count": 3, "resource_def": {"type": "OS::Heat::ResourceGroup", "properties": {
            "count": 2, "resource_def": {"type": "OS::Heat::RandomString"}}}}}})
    shown = await asyncio.wait_for(create(service, ctx, "deep", outer), 60)
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    await service.delete_stack(ctx, shown)
    await asyncio.wait_for(service.wait_for_stack(shown["id"]), 60)
    assert ops.budget.used == 0
