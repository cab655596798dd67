"""The cycle check on a template's resource dependencies.

The template layer's one use of :mod:`kiln.graph` (allowed by docs/contracts.md): the
graph package finds the cycle and words Heat's ``CircularDependencyException``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kiln.graph import Graph


def check_acyclic(deps: Mapping[str, Iterable[str]]) -> None:
    """Raise ``CircularDependencyException`` (Heat's message, the cycle's names) if the
    dependency map has a cycle."""
    Graph.from_edges(list(deps), {k: list(v) for k, v in deps.items()}).check_acyclic()

