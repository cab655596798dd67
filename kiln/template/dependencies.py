"""The cycle check on a template's resource dependencies.

The template layer's one use of :mod:`kiln.graph` (allowed by docs/contracts.md): the
graph package finds the cycle and words Heat's ``CircularDependencyException``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from kiln.graph import Graph
from kiln.graph.graph import resource_label


def check_acyclic(deps: Mapping[str, Iterable[str]],
                  class_name: Callable[[str], str] | None = None) -> None:
    """Raise ``CircularDependencyException`` if the dependency map has a cycle.

    Heat names each resource in the message by its plugin class (``NoneResource "a"``);
    only the resource layer knows classes, so ``class_name`` (a resource's plugin class
    name, from the resolver) gives Heat's exact text; without it the bare names are
    used.
    """
    if _declared_in_order(deps):
        return
    graph = Graph.from_edges(list(deps), {k: list(v) for k, v in deps.items()})
    if class_name is None:
        graph.check_acyclic()
    else:
        graph.check_acyclic(lambda name: resource_label(class_name(name), name))


def _declared_in_order(deps: Mapping[str, Iterable[str]]) -> bool:
    """True if every resource requires only resources declared before it (so there is
    no cycle): one pass over the map, instead of building a graph, for the usual
    template."""
    seen: set[str] = set()
    for name, requires in deps.items():
        for required in requires:
            if required not in seen:
                return False
        seen.add(name)
    return True
