from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kiln.errors import StackValidationFailed
from kiln.graph import CircularDependencyException, Graph
from kiln.graph.graph import resource_label


@st.composite
def dags(draw: st.DrawFn) -> tuple[list[str], dict[str, set[str]]]:
    """Random DAGs: a node may only require nodes that come earlier in a random order."""
    n = draw(st.integers(min_value=0, max_value=30))
    nodes = [f"r{i}" for i in range(n)]
    deps: dict[str, set[str]] = {}
    for i, node in enumerate(nodes):
        deps[node] = set(draw(st.lists(st.sampled_from(nodes[:i]), max_size=4))) if i else set()
    shuffled = draw(st.permutations(nodes))
    return list(shuffled), deps


@given(dags())
def test_topological_order_puts_requirements_first(dag: tuple[list[str], dict[str, set[str]]],
                                                   ) -> None:
    nodes, deps = dag
    order = Graph.from_edges(nodes, deps).topological_order()
    assert sorted(order) == sorted(nodes)
    pos = {n: i for i, n in enumerate(order)}
    for node, reqs in deps.items():
        for req in reqs:
            assert pos[req] < pos[node]


@given(dags())
def test_reversed_order_puts_requirers_first(dag: tuple[list[str], dict[str, set[str]]]) -> None:
    nodes, deps = dag
    graph = Graph.from_edges(nodes, deps)
    order = graph.reversed().topological_order()
    pos = {n: i for i, n in enumerate(order)}
    for node, reqs in deps.items():
        for req in reqs:
            assert pos[node] < pos[req]
    assert graph.cycles() == []


def test_requires_and_dependants() -> None:
    g = Graph.from_edges(["a", "b", "c"], {"b": ["a"], "c": ["a", "b"]})
    assert g.requires("c") == {"a", "b"}
    assert g.dependants("a") == {"b", "c"}
    assert g.reversed().requires("a") == {"b", "c"}
    assert sorted(g.downstream("a")) == ["b", "c"]
    assert set(g.edges()) == {("b", "a"), ("c", "a"), ("c", "b")}


def test_cycle_is_reported_with_its_names_as_heat_does() -> None:
    g = Graph.from_edges(["a", "b", "c"], {"a": ["b"], "b": ["a"]})
    assert g.cycles() == [["a", "b"]]
    with pytest.raises(CircularDependencyException) as info:
        g.topological_order()
    # Heat lists the nodes it could not order with their unresolved requirements
    assert info.value.message == "Circular Dependency Found: {a: {b}, b: {a}}"
    assert isinstance(info.value, StackValidationFailed)
    assert info.value.error_type == "CircularDependencyException"
    assert info.value.http_status == 400


def test_self_reference_is_a_cycle() -> None:
    g = Graph.from_edges(["a"], {"a": ["a"]})
    assert g.cycles() == [["a"]]


# What Heat 27 answered to POST /stacks (and /validate) for OS::Heat::None resources
# a <-> b (get_resource both ways), a -> c -> b -> a (depends_on), a -> a, and a <-> b
# with a also requiring "leaf" and "top" requiring a. Heat prints the entries in the
# order of a hash-seeded set, so that order changes between Heat processes.
HEAT_CYCLES = [
    (["a", "b"], {"a": ["b"], "b": ["a"]},
     'Circular Dependency Found: {NoneResource "b": {NoneResource "a"}, '
     'NoneResource "a": {NoneResource "b"}}'),
    (["a", "b", "c"], {"a": ["c"], "b": ["a"], "c": ["b"]},
     'Circular Dependency Found: {NoneResource "b": {NoneResource "a"}, '
     'NoneResource "c": {NoneResource "b"}, NoneResource "a": {NoneResource "c"}}'),
    (["a"], {"a": ["a"]},
     'Circular Dependency Found: {NoneResource "a": {NoneResource "a"}}'),
    (["leaf", "a", "b", "top"], {"a": ["b", "leaf"], "b": ["a"], "top": ["a"]},
     'Circular Dependency Found: {NoneResource "a": {NoneResource "b"}, '
     'NoneResource "top": {NoneResource "a"}, NoneResource "b": {NoneResource "a"}}'),
]


def _entries(message: str) -> dict[str, set[str]]:
    """Heat's cycle text as {resource: {requirements}} (its order is not stable)."""
    body = message.removeprefix("Circular Dependency Found: ")
    found = re.findall(r'(\w+ "[^"]+"): \{([^}]*)\}', body)
    assert body == "{" + ", ".join(f"{k}: {{{v}}}" for k, v in found) + "}"
    return {k: set(v.split(", ")) for k, v in found}


@pytest.mark.parametrize(("nodes", "deps", "heat"), HEAT_CYCLES)
def test_cycle_message_is_heats_with_resource_labels(
        nodes: list[str], deps: dict[str, list[str]], heat: str) -> None:
    g = Graph.from_edges(nodes, deps)
    with pytest.raises(CircularDependencyException) as info:
        g.check_acyclic(lambda n: resource_label("NoneResource", n))
    assert _entries(info.value.message) == _entries(heat)


def test_cycle_entries_follow_the_graph_order() -> None:
    # the same entries as Heat's first answer above, in the order Heat printed them
    g = Graph.from_edges(["b", "a"], {"a": ["b"], "b": ["a"]})
    with pytest.raises(CircularDependencyException) as info:
        g.check_acyclic(lambda n: resource_label("NoneResource", n))
    assert info.value.message == HEAT_CYCLES[0][2]


def test_node_behind_a_cycle_is_not_a_cycle_itself() -> None:
    g = Graph.from_edges(["x", "a", "b"], {"x": ["a"], "a": ["b"], "b": ["a"]})
    assert g.cycles() == [["a", "b"]]


def test_unknown_requirement_is_refused() -> None:
    with pytest.raises(ValueError):
        Graph.from_edges(["a"], {"a": ["missing"]})


def test_subgraph_keeps_only_inner_edges() -> None:
    g = Graph.from_edges(["a", "b", "c"], {"b": ["a"], "c": ["b"]})
    sub = g.subgraph(["b", "c"])
    assert list(sub) == ["b", "c"]
    assert sub.requires("b") == frozenset()
    assert sub.requires("c") == {"b"}
