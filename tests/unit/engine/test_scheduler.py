"""The scheduler's walk: dependencies from the graph's frontier, everything about running
the visits (the limit, the visits in flight, fail-fast, cancellation) from the scheduler."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kiln.engine.runtime.scheduler import Limit, traverse, walk
from kiln.graph import Graph

from ..graph.test_graph import dags


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


@settings(max_examples=50, deadline=None)
@given(dags(), st.integers(min_value=1, max_value=5))
def test_every_node_starts_only_after_all_it_requires(
        dag: tuple[list[str], dict[str, set[str]]], width: int) -> None:
    nodes, deps = dag
    graph = Graph.from_edges(nodes, deps)

    async def main() -> tuple[list[str], list[str]]:
        started: list[str] = []
        finished: list[str] = []

        async def visit(node: str) -> None:
            for req in deps[node]:
                assert req in finished, f"{node} started before {req} finished"
            started.append(node)
            await asyncio.sleep(0)
            finished.append(node)

        result = await walk(graph, visit, limit=Limit(width))
        assert result.ok
        assert sorted(result.succeeded) == sorted(nodes)
        return started, finished

    started, _ = run(main())
    assert sorted(started) == sorted(nodes)


@settings(max_examples=30, deadline=None)
@given(dags())
def test_reverse_walk_deletes_requirers_first(dag: tuple[list[str], dict[str, set[str]]]) -> None:
    nodes, deps = dag
    graph = Graph.from_edges(nodes, deps)

    async def main() -> None:
        gone: set[str] = set()

        async def delete(node: str) -> None:
            for other, reqs in deps.items():
                if node in reqs:
                    assert other in gone, f"{node} deleted while {other} still needs it"
            await asyncio.sleep(0)
            gone.add(node)

        result = await walk(graph.reversed(), delete)
        assert result.ok and gone == set(nodes)

    run(main())


async def test_node_starts_as_soon_as_its_last_requirement_completes() -> None:
    # c needs only a; b is slow. c must not wait for b.
    graph = Graph.from_edges(["a", "b", "c"], {"c": ["a"]})
    b_release = asyncio.Event()
    c_done = asyncio.Event()

    async def visit(node: str) -> None:
        if node == "b":
            await b_release.wait()
        if node == "c":
            c_done.set()

    task = asyncio.ensure_future(walk(graph, visit))
    await c_done.wait()
    assert not task.done()
    b_release.set()
    result = await task
    assert sorted(result.succeeded) == ["a", "b", "c"]


async def test_semaphore_bounds_parallelism() -> None:
    graph = Graph.from_edges([str(i) for i in range(20)], {})
    running = 0
    peak = 0

    async def visit(node: str) -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        for _ in range(3):
            await asyncio.sleep(0)
        running -= 1

    result = await walk(graph, visit, limit=Limit(3))
    assert result.ok
    assert peak == 3


async def test_failure_skips_downstream_and_is_reported_once() -> None:
    graph = Graph.from_edges(["a", "b", "c", "d", "e"],
                             {"b": ["a"], "c": ["b"], "d": ["b", "c"]})
    visited: list[str] = []

    async def visit(node: str) -> None:
        visited.append(node)
        if node == "b":
            raise RuntimeError("boom")

    result = await walk(graph, visit)
    assert list(result.failed) == ["b"]
    assert str(result.failed["b"]) == "boom"
    assert sorted(result.skipped) == ["c", "d"]
    assert sorted(result.succeeded) == ["a", "e"]
    assert "c" not in visited and "d" not in visited
    assert not result.ok


async def test_fail_fast_starts_nothing_after_a_failure() -> None:
    graph = Graph.from_edges(["a", "b", "c"], {"c": ["b"]})
    release = asyncio.Event()
    b_started = asyncio.Event()

    async def visit(node: str) -> None:
        if node == "a":
            await b_started.wait()
            release.set()  # b resumes only after a has failed
            raise RuntimeError("boom")
        if node == "b":
            b_started.set()
            await release.wait()

    result = await walk(graph, visit, fail_fast=True)
    assert list(result.failed) == ["a"]
    assert result.succeeded == ["b"]  # running nodes finish
    assert result.skipped == ["c"]


async def test_cancelling_the_walk_cancels_running_visits() -> None:
    graph = Graph.from_edges(["a"], {})
    started = asyncio.Event()
    was_cancelled = asyncio.Event()

    async def visit(node: str) -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            was_cancelled.set()
            raise

    task = asyncio.ensure_future(walk(graph, visit))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert was_cancelled.is_set()


async def test_empty_graph_walks_at_once() -> None:
    result = await walk(Graph.from_edges([], {}), lambda n: asyncio.sleep(0))
    assert result.ok and result.succeeded == []


async def test_concurrency_bounds_the_visits_in_flight_and_still_visits_all() -> None:
    """Ready nodes beyond the limit's size wait as names, not as started visits."""
    graph = Graph.from_edges([f"n{i}" for i in range(50)], {"n49": ["n0", "n1"]})
    running = 0
    peak = 0
    started: list[str] = []

    async def visit(node: str) -> None:
        nonlocal running, peak
        started.append(node)
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0)
        running -= 1

    result = await walk(graph, visit, limit=Limit(4))
    assert result.ok
    assert peak == 4
    assert sorted(result.succeeded) == sorted(graph)
    assert started.index("n49") > max(started.index("n0"), started.index("n1"))


async def test_unbounded_nodes_start_beside_a_full_walk() -> None:
    """A node that only waits for others (a nested stack) must not take a place: here
    it waits until every bounded node has run, which a counted place would deadlock."""
    names = ["waiter", "a", "b", "c"]
    graph = Graph.from_edges(names, {})
    bounded_done = asyncio.Event()
    finished: list[str] = []

    async def visit(node: str) -> None:
        if node == "waiter":
            await bounded_done.wait()
        else:
            await asyncio.sleep(0)
            finished.append(node)
            if len(finished) == 3:
                bounded_done.set()

    result = await asyncio.wait_for(
        walk(graph, visit, limit=Limit(1), unlimited=lambda n: n == "waiter"), 5)
    assert result.ok and sorted(result.succeeded) == sorted(names)


async def test_a_user_cancel_interrupts_running_visits_and_starts_nothing_more() -> None:
    graph = Graph.from_edges(["a", "b", "c", "d"], {"d": ["a"]})
    cancel = asyncio.Event()
    a_started = asyncio.Event()
    interrupted: list[str] = []
    started: list[str] = []

    async def visit(node: str) -> None:
        started.append(node)
        if node == "a":
            a_started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            interrupted.append(node)
            raise

    task = asyncio.ensure_future(traverse(graph, visit, action="CREATE", limit=Limit(1),
                                          cancel=cancel))
    await a_started.wait()
    cancel.set()
    outcome = await task
    assert (outcome.ok, outcome.cancelled, outcome.reason) == (
        False, True, "Stack CREATE cancelled")
    assert started == ["a"] and interrupted == ["a"]  # b, c queued; d never ready


async def test_queued_nodes_are_skipped_after_a_fail_fast_failure() -> None:
    graph = Graph.from_edges(["a", "b", "c", "d"], {})

    async def fail_first(node: str) -> None:
        if node == "a":
            raise RuntimeError("boom")

    result = await walk(graph, fail_first, limit=Limit(1), fail_fast=True)
    assert list(result.failed) == ["a"]
    assert sorted(result.skipped) == ["b", "c", "d"]


async def test_cancelling_a_bounded_walk_starts_nothing_more() -> None:
    graph = Graph.from_edges(["a", "b", "c"], {})
    started: list[str] = []
    first = asyncio.Event()

    async def visit(node: str) -> None:
        started.append(node)
        first.set()
        await asyncio.Event().wait()

    task = asyncio.ensure_future(walk(graph, visit, limit=Limit(1)))
    await first.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0)
    assert started == ["a"]
    assert all(t.done() for t in asyncio.all_tasks() if t is not asyncio.current_task())
