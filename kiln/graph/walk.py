"""What a walk over a :class:`~kiln.graph.graph.Graph` may start next: dependencies only.

A :class:`Frontier` is the bookkeeping of one walk and nothing else: a node becomes ready
the moment its last requirement succeeds (counters decremented as nodes finish, so a walk
is O(nodes + edges) however wide the graph is); a failed node's downstream nodes are
skipped, once, without being started. It starts no task, holds no clock and knows no
limit: whoever walks (the engine's scheduler, :mod:`kiln.engine.runtime.scheduler`) runs
the visits, bounds how many run at once and decides when to stop.

Outcomes per node, in :class:`WalkResult`:
- *succeeded* — its visit returned;
- *failed* — its visit raised; the exception is kept, once;
- *skipped* — never started because something it requires failed (or because the walker
  stopped after a failure); the failure is not repeated for it;
- *cancelled* — never started because the walk was cancelled.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from kiln.graph.graph import Graph

N = TypeVar("N", bound=Hashable)


@dataclass
class WalkResult(Generic[N]):
    succeeded: list[N] = field(default_factory=list)
    failed: dict[N, BaseException] = field(default_factory=dict)
    skipped: list[N] = field(default_factory=list)
    cancelled: list[N] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.skipped and not self.cancelled


_PENDING, _STARTED, _DONE = 0, 1, 2


class Frontier(Generic[N]):
    """Which nodes of ``graph`` may start, as the walker reports what happened.

    Call :meth:`ready` once for the nodes that need nothing, :meth:`start` as each node
    is started, then :meth:`succeeded` (which returns the nodes it made ready) or
    :meth:`failed` for it; :meth:`stop` settles every node not started yet.
    """

    def __init__(self, graph: Graph[N]) -> None:
        self.graph = graph
        self.result: WalkResult[N] = WalkResult()
        self._waiting = {n: len(graph.requires(n)) for n in graph}
        self._state = dict.fromkeys(graph, _PENDING)
        self._open = len(self._state)

    @property
    def finished(self) -> bool:
        """Every node succeeded, failed or was settled unstarted."""
        return self._open == 0

    def ready(self) -> list[N]:
        """The nodes that require nothing (where a walk begins)."""
        return [n for n, count in self._waiting.items() if count == 0]

    def pending(self, node: N) -> bool:
        """Not started and not settled: it may still start."""
        return self._state[node] == _PENDING

    def start(self, node: N) -> None:
        if self._state[node] != _PENDING:
            raise ValueError(f"{node!r} cannot start: it already started or was settled")
        self._state[node] = _STARTED

    def succeeded(self, node: N) -> list[N]:
        """Record ``node`` done; the dependants whose last requirement it was."""
        self._settle(node)
        self.result.succeeded.append(node)
        ready = []
        for dep in self.graph.dependants(node):
            self._waiting[dep] -= 1
            if self._waiting[dep] == 0 and self._state[dep] == _PENDING:
                ready.append(dep)
        return ready

    def failed(self, node: N, error: BaseException) -> None:
        """Record ``node`` failed: what lies downstream and has not started is skipped."""
        self._settle(node)
        self.result.failed[node] = error
        for down in self.graph.downstream(node):
            if self._state[down] == _PENDING:
                self._state[down] = _DONE
                self._open -= 1
                self.result.skipped.append(down)

    def not_run(self, node: N) -> None:
        """``node`` was started but the walker stopped before its visit ran: skipped."""
        self._settle(node)
        self.result.skipped.append(node)

    def stop(self, *, cancelled: bool) -> None:
        """Nothing not yet started will start: settle it as cancelled or skipped."""
        bucket = self.result.cancelled if cancelled else self.result.skipped
        for node, state in self._state.items():
            if state == _PENDING:
                self._state[node] = _DONE
                self._open -= 1
                bucket.append(node)

    def _settle(self, node: N) -> None:
        if self._state[node] != _STARTED:
            raise ValueError(f"{node!r} finished without being started")
        self._state[node] = _DONE
        self._open -= 1
