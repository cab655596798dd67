"""A small dependency-graph package: an immutable DAG and the frontier of a walk over it.

Pure: it imports nothing from Kiln but :mod:`kiln.errors`.
"""

from __future__ import annotations

from kiln.graph.graph import CircularDependencyException, Graph
from kiln.graph.walk import Frontier, WalkResult

__all__ = ["CircularDependencyException", "Frontier", "Graph", "WalkResult"]
