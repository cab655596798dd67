"""A small dependency-graph package: an immutable DAG and a parallel async walker.

Pure: it imports nothing from Kiln but :mod:`kiln.errors`.
"""

from __future__ import annotations

from kiln.graph.graph import CircularDependencyException, Graph
from kiln.graph.walk import WalkResult, walk

__all__ = ["CircularDependencyException", "Graph", "WalkResult", "walk"]
