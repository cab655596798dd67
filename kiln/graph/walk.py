"""A parallel walk over a :class:`~kiln.graph.graph.Graph`.

A node starts the moment its last requirement succeeds: completions are handled in a
done-callback that decrements counters, so the walk is O(nodes + edges) however wide
the graph is (no polling, no ``asyncio.wait`` over every running task). Parallelism is
bounded by a semaphore that callers share across walks (one engine-wide limit), never by
the shape of the graph.

``concurrency`` caps how many visits of this walk exist at once: ready nodes beyond it
wait in a queue as bare names. Without it a 10,000-wide graph would start 10,000 tasks
at once, each a coroutine frame parked on the shared semaphore (about 2 KB apiece), to
run no faster than the semaphore lets them. Nodes for which ``unbounded`` is true (a
resource that only waits for a child stack) start at once and are not counted, so a
walk can never wait on itself.

Outcomes per node:
- *succeeded* — ``visit`` returned;
- *failed* — ``visit`` raised; the exception is kept, once;
- *skipped* — never started because something it requires failed (or, with
  ``fail_fast``, because anything failed); the failure is not repeated for it;
- *cancelled* — never started because ``cancel`` was set.
Nodes already running when ``cancel`` is set or a failure happens run to completion;
cancelling the task that awaits :func:`walk` cancels them too.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Hashable
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


_PENDING, _RUNNING, _DONE = 0, 1, 2


class _Walker(Generic[N]):
    def __init__(self, graph: Graph[N], visit: Callable[[N], Awaitable[object]],
                 limit: asyncio.Semaphore | None, cancel: asyncio.Event | None,
                 fail_fast: bool, concurrency: int | None = None,
                 unbounded: Callable[[N], bool] | None = None) -> None:
        self.graph = graph
        self.visit = visit
        self.limit = limit
        self.cancel = cancel
        self.fail_fast = fail_fast
        self.concurrency = concurrency if concurrency is None else max(1, concurrency)
        self.unbounded = unbounded
        self.result: WalkResult[N] = WalkResult()
        self.waiting = {n: len(graph.requires(n)) for n in graph}
        self.state = dict.fromkeys(graph, _PENDING)
        self.running: set[asyncio.Task[None]] = set()
        #: ready nodes not yet started because ``concurrency`` visits are running
        self.ready: deque[N] = deque()
        #: started visits that count against ``concurrency``
        self.active = 0
        self.outstanding = len(self.waiting)
        self.stopping = False
        #: the walk itself was cancelled: nothing more may start
        self.closed = False
        self.finished: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def _cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    def start(self) -> None:
        if self.outstanding == 0:
            self.finished.set_result(None)
            return
        for node in [n for n, c in self.waiting.items() if c == 0]:
            self._launch(node)

    def _launch(self, node: N) -> None:
        if self.stopping or self._cancelled():
            self._settle_unstarted()
            return
        counted = self.unbounded is None or not self.unbounded(node)
        if counted and self.concurrency is not None and self.active >= self.concurrency:
            self.ready.append(node)  # still _PENDING: a stop settles it like the others
            return
        self._start(node, counted)

    def _start(self, node: N, counted: bool) -> None:
        self.state[node] = _RUNNING
        if counted:
            self.active += 1
        task = asyncio.ensure_future(self._run(node, counted))
        self.running.add(task)
        task.add_done_callback(self.running.discard)

    def _pump(self) -> None:
        """Start queued nodes while there is room (a finished visit made some)."""
        while not self.closed and self.ready and (
                self.concurrency is None or self.active < self.concurrency):
            node = self.ready.popleft()
            if self.state[node] != _PENDING:
                continue  # settled as skipped/cancelled while it waited
            if self.stopping or self._cancelled():
                self._settle_unstarted()
                return
            self._start(node, True)

    async def _run(self, node: N, counted: bool) -> None:
        try:
            if self.limit is not None:
                async with self.limit:
                    await self._visit(node)
            else:
                await self._visit(node)
        finally:
            if counted:
                self.active -= 1
                self._pump()

    async def _visit(self, node: N) -> None:
        if self.stopping or self._cancelled():
            self.state[node] = _PENDING
            self._settle_unstarted()
            return
        try:
            await self.visit(node)
        except asyncio.CancelledError as exc:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            self._complete(node, exc)  # raised by the visitor itself, not by us
        except Exception as exc:  # a node's failure is data, not a crash of the walk
            self._complete(node, exc)
        else:
            self._complete(node, None)

    def _finish_one(self) -> None:
        self.outstanding -= 1
        if self.outstanding == 0 and not self.finished.done():
            self.finished.set_result(None)

    def _complete(self, node: N, error: BaseException | None) -> None:
        self.state[node] = _DONE
        self._finish_one()
        if error is not None:
            self.result.failed[node] = error
            for down in self.graph.downstream(node):
                if self.state[down] == _PENDING:
                    self.state[down] = _DONE
                    self.result.skipped.append(down)
                    self._finish_one()
            if self.fail_fast:
                self.stopping = True
                self._settle_unstarted()
            return
        self.result.succeeded.append(node)
        for dep in self.graph.dependants(node):
            self.waiting[dep] -= 1
            if self.waiting[dep] == 0 and self.state[dep] == _PENDING:
                self._launch(dep)

    def _settle_unstarted(self) -> None:
        """Once stopping or cancelled, nothing pending will ever start: account for it."""
        bucket = self.result.cancelled if self._cancelled() and not self.stopping \
            else self.result.skipped
        for node, st in self.state.items():
            if st == _PENDING:
                self.state[node] = _DONE
                bucket.append(node)
                self._finish_one()


async def walk(graph: Graph[N], visit: Callable[[N], Awaitable[object]], *,
               limit: asyncio.Semaphore | None = None,
               cancel: asyncio.Event | None = None,
               fail_fast: bool = False,
               concurrency: int | None = None,
               unbounded: Callable[[N], bool] | None = None) -> WalkResult[N]:
    """Visit every node of ``graph`` after all it requires, in parallel (at most
    ``concurrency`` visits at once, not counting ``unbounded`` nodes)."""
    walker = _Walker(graph, visit, limit, cancel, fail_fast, concurrency, unbounded)
    waiter: asyncio.Task[bool] | None = None
    if cancel is not None:
        async def on_cancel() -> bool:
            await cancel.wait()
            walker._settle_unstarted()
            return True
        waiter = asyncio.ensure_future(on_cancel())
    walker.start()
    try:
        await walker.finished
    except asyncio.CancelledError:
        walker.closed = True
        for task in list(walker.running):
            task.cancel()
        if walker.running:
            await asyncio.gather(*walker.running, return_exceptions=True)
        raise
    finally:
        if waiter is not None:
            waiter.cancel()
    return walker.result
