"""Which resources a resource needs: explicit ``depends_on``/``DependsOn`` plus every
get_resource / get_attr / Ref / Fn::GetAtt in its properties and metadata.

Cycles are found with :mod:`kiln.graph` and reported with the names in the cycle.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kiln.graph import Graph


def check_acyclic(deps: Mapping[str, Iterable[str]]) -> None:
    """Raise ``CircularDependencyException`` (Heat's message, the cycle's names) if the
    dependency map has a cycle."""
    Graph.from_edges(list(deps), {k: list(v) for k, v in deps.items()}).check_acyclic()


def topological_order(deps: Mapping[str, Iterable[str]]) -> list[str]:
    """Resources in an order where each comes after everything it depends on."""
    return Graph.from_edges(list(deps), {k: list(v) for k, v in deps.items()}
                            ).topological_order()
