"""The frontier of a walk: which nodes may start, from dependencies alone (no tasks)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kiln.graph import Frontier, Graph

from .test_graph import dags


@given(dags(), st.randoms(use_true_random=False))
def test_nodes_become_ready_only_after_all_they_require(
        dag: tuple[list[str], dict[str, set[str]]], rnd: random.Random) -> None:
    """Drive a frontier finishing ready nodes in any order: each node is offered once,
    after all its requirements, and the walk ends with every node succeeded."""
    nodes, deps = dag
    frontier = Frontier(Graph.from_edges(nodes, deps))
    ready = frontier.ready()
    done: set[str] = set()
    offered: list[str] = list(ready)
    while ready:
        node = ready.pop(rnd.randrange(len(ready)))
        assert deps[node] <= done, f"{node} offered before {deps[node] - done}"
        frontier.start(node)
        done.add(node)
        more = frontier.succeeded(node)
        offered.extend(more)
        ready.extend(more)
    assert frontier.finished
    assert sorted(offered) == sorted(nodes)  # each exactly once
    assert frontier.result.ok and sorted(frontier.result.succeeded) == sorted(nodes)


def test_a_failure_skips_what_lies_downstream_once() -> None:
    graph = Graph.from_edges(["a", "b", "c", "d", "e"],
                             {"b": ["a"], "c": ["b"], "d": ["b", "c"]})
    frontier = Frontier(graph)
    assert frontier.ready() == ["a", "e"]
    frontier.start("a")
    assert frontier.succeeded("a") == ["b"]
    frontier.start("b")
    boom = RuntimeError("boom")
    frontier.failed("b", boom)
    assert frontier.result.failed == {"b": boom}
    assert sorted(frontier.result.skipped) == ["c", "d"]
    assert not frontier.finished  # e has not run
    frontier.start("e")
    assert frontier.succeeded("e") == []
    assert frontier.finished and not frontier.result.ok


def test_stop_settles_everything_not_started() -> None:
    frontier = Frontier(Graph.from_edges(["a", "b", "c"], {"c": ["b"]}))
    frontier.start("a")
    frontier.stop(cancelled=True)
    assert sorted(frontier.result.cancelled) == ["b", "c"]
    assert not frontier.finished  # a still runs
    frontier.succeeded("a")
    assert frontier.finished
    frontier2 = Frontier(Graph.from_edges(["a", "b"], {}))
    frontier2.start("a")
    frontier2.not_run("a")
    frontier2.stop(cancelled=False)
    assert sorted(frontier2.result.skipped) == ["a", "b"] and frontier2.finished


def test_a_node_cannot_start_twice_or_finish_unstarted() -> None:
    frontier = Frontier(Graph.from_edges(["a", "b"], {}))
    frontier.start("a")
    with pytest.raises(ValueError, match="already started"):
        frontier.start("a")
    with pytest.raises(ValueError, match="without being started"):
        frontier.succeeded("b")
