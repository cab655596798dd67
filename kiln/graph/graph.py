"""An immutable dependency graph over hashable nodes.

Edges point from a node to the nodes it *requires*; a create walks requirements first,
a delete walks the reversed graph. The graph is built once per action and only read
afterwards, so both directions are precomputed and every query is O(1) or O(degree).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from typing import Any, Generic, TypeVar

from kiln.errors import StackValidationFailed

N = TypeVar("N", bound=Hashable)


#: one shared empty set: CPython makes a new 216-byte object for every ``frozenset()``,
#: and most nodes of a wide graph require nothing or have no dependants
_EMPTY: frozenset[Any] = frozenset()


class CircularDependencyException(StackValidationFailed):
    """A cycle among resources; the message lists what could not be ordered."""

    heat_type = "CircularDependencyException"

    def __init__(self, cycle: str) -> None:
        super().__init__(f"Circular Dependency Found: {cycle}")
        self.cycle = cycle


def resource_label(kind: str, name: str) -> str:
    """How Heat names a resource in a cycle message: its plugin class and its name
    (``NoneResource "a"``), as Heat 27 prints a resource of a stack not yet stored.
    Pass ``lambda n: resource_label(<class name of n's plugin>, n)`` as the ``label``
    of :meth:`Graph.check_acyclic` to get Heat's exact text."""
    return f'{kind} "{name}"'


class Graph(Generic[N]):
    """Nodes in insertion order, each with the set it requires and the set requiring it."""

    __slots__ = ("_dependants", "_requires")

    def __init__(self, requires: Mapping[N, frozenset[N]],
                 dependants: Mapping[N, frozenset[N]]) -> None:
        self._requires = dict(requires)
        self._dependants = dict(dependants)

    @classmethod
    def from_edges(cls, nodes: Iterable[N], deps: Mapping[N, Iterable[N]]) -> Graph[N]:
        """Build from ``deps[node] = nodes it requires``; every endpoint must be a node."""
        order = list(dict.fromkeys(nodes))
        known = set(order)
        requires: dict[N, frozenset[N]] = {}
        dependants: dict[N, set[N]] = {}
        for node in order:
            reqs = frozenset(deps.get(node, ())) or _EMPTY
            unknown = reqs - known
            if unknown:
                raise ValueError(f"{node!r} requires unknown nodes {sorted(map(repr, unknown))}")
            requires[node] = reqs
            for req in reqs:
                found = dependants.get(req)
                if found is None:
                    dependants[req] = {node}
                else:
                    found.add(node)
        for node in deps:
            if node not in known:
                raise ValueError(f"dependencies given for unknown node {node!r}")
        return cls(requires, {n: frozenset(dependants[n]) if n in dependants else _EMPTY
                              for n in order})

    # -- queries ----------------------------------------------------------------------

    def __iter__(self) -> Iterator[N]:
        return iter(self._requires)

    def __len__(self) -> int:
        return len(self._requires)

    def __contains__(self, node: object) -> bool:
        return node in self._requires

    def requires(self, node: N) -> frozenset[N]:
        return self._requires[node]

    def dependants(self, node: N) -> frozenset[N]:
        return self._dependants[node]

    def edges(self) -> Iterator[tuple[N, N]]:
        """(requirer, required) pairs."""
        for node, reqs in self._requires.items():
            for req in reqs:
                yield node, req

    def reversed(self) -> Graph[N]:
        """The same graph with every edge flipped: the order a delete must follow."""
        return Graph(self._dependants, self._requires)

    def subgraph(self, nodes: Iterable[N]) -> Graph[N]:
        """Only ``nodes`` and the edges among them."""
        wanted = set(nodes)
        keep = [n for n in self._requires if n in wanted]
        kept = set(keep)
        return Graph({n: self._requires[n] & kept for n in keep},
                     {n: self._dependants[n] & kept for n in keep})

    def downstream(self, node: N) -> list[N]:
        """Every node that (transitively) requires ``node``, excluding ``node`` itself,
        each once, nearest first (the order a walk reports them skipped in)."""
        seen: set[N] = set()
        out: list[N] = []
        todo = deque(self._dependants[node])
        while todo:
            cur = todo.popleft()
            if cur not in seen:
                seen.add(cur)
                out.append(cur)
                todo.extend(self._dependants[cur])
        return out

    # -- ordering ---------------------------------------------------------------------

    def _kahn(self) -> tuple[list[N], list[N]]:
        """(sorted prefix, nodes left over because they sit on or behind a cycle)."""
        remaining = {n: len(r) for n, r in self._requires.items()}
        ready = deque(n for n, c in remaining.items() if c == 0)
        out: list[N] = []
        while ready:
            node = ready.popleft()
            out.append(node)
            for dep in self._dependants[node]:
                remaining[dep] -= 1
                if remaining[dep] == 0:
                    ready.append(dep)
        placed = set(out)
        return out, [n for n in self._requires if n not in placed]

    def cycles(self) -> list[list[N]]:
        """One representative cycle per strongly connected tangle (empty if acyclic)."""
        _, left = self._kahn()
        if not left:
            return []
        leftover = set(left)
        found: list[list[N]] = []
        covered: set[N] = set()
        for start in left:
            if start in covered:
                continue
            cycle = self._find_cycle_from(start, leftover)
            if cycle and not covered.intersection(cycle):
                found.append(cycle)
            covered.update(cycle or [start])
        return found

    def _find_cycle_from(self, start: N, allowed: set[N]) -> list[N]:
        """Follow requirements inside ``allowed`` until a node repeats (iteratively)."""
        path: list[N] = []
        index: dict[N, int] = {}
        node = start
        while node not in index:
            index[node] = len(path)
            path.append(node)
            nxt = [r for r in self._requires[node] if r in allowed]
            if not nxt:
                return []
            node = sorted(nxt, key=repr)[0]
        return path[index[node]:]

    def check_acyclic(self, label: Callable[[N], str] = str) -> None:
        """Raise Heat's CircularDependencyException naming the unorderable nodes.

        Heat's text: ``{<node>: {<requirement>, ...}, ...}`` over the nodes left once
        everything orderable is taken away (the cycles and what requires them), each
        with the requirements still left. Heat's order of entries varies from process
        to process (it iterates a set); here it is the graph's node order, and each
        node's requirements sorted. ``label`` renders a node (see
        :func:`resource_label`).
        """
        _, left = self._kahn()
        if left:
            stuck = set(left)

            def needs(n: N) -> str:
                return ", ".join(label(r) for r in sorted(self._requires[n] & stuck, key=repr))

            pairs = ", ".join(f"{label(n)}: {{{needs(n)}}}" for n in left)
            raise CircularDependencyException("{" + pairs + "}")

    def topological_order(self) -> list[N]:
        """Requirements before requirers; raises on a cycle."""
        out, left = self._kahn()
        if left:
            self.check_acyclic()
        return out
