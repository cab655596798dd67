"""The engine-wide scheduler: the one place for limits, deadlines and cancellation.

:func:`traverse` walks a stack's graph with a visit function; the graph package only
says which resources may start (:class:`~kiln.graph.walk.Frontier`), everything about
*running* them is here:

- one engine-wide :class:`Limit` on resource actions running at once, taken inside each
  visit, so a resource that only waits for a nested stack (whose own resources need
  places) runs without holding one: that keeps small limits from deadlocking deep
  nesting;
- at most as many visits of one walk in flight as the limit has places (nested-stack
  waiters apart): ready resources beyond that wait as names, since more could not run
  anyway and each would hold a parked coroutine for the whole wait (a 10,000-wide
  stack would otherwise start 10,000 tasks at once);
- the first failure stops new starts (``fail_fast``, as Heat does); the stack's
  deadline and a user's cancel interrupt the running resource actions;
- cancelling the task that awaits :func:`traverse` cancels the running visits too.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from kiln.engine.model.states import CANCELLED, TIMED_OUT, resource_failed
from kiln.engine.runtime.runner import ActionFailed, failure_reason
from kiln.graph import Graph
from kiln.graph.walk import Frontier, WalkResult


@dataclass
class Outcome:
    ok: bool
    reason: str = ""
    timed_out: bool = False
    cancelled: bool = False
    failed: dict[str, str] = field(default_factory=dict)


class Limit(asyncio.Semaphore):
    """The engine-wide limit on resource actions running at once; knows its size.

    First come, first served, with O(1) hand-offs: a release passes its place straight
    to the oldest waiter still waiting. ``asyncio.Semaphore`` (3.11) scans its waiters
    from the start on every release, past those already woken but not yet run, and
    removes each waiter from the middle of its deque: with many walks sharing the limit
    (100 nested stacks of 1,000 deleting at once: ~20,000 waiters) that was quadratic,
    half of such a delete's CPU.
    """

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size
        self._free = size
        self._queue: deque[asyncio.Future[None]] = deque()

    def locked(self) -> bool:
        return self._free <= 0

    async def acquire(self) -> Literal[True]:
        # a free place means nobody waits: release hands places to waiters directly
        if self._free > 0:
            self._free -= 1
            return True
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed a place as it was cancelled: pass it on
            raise
        return True

    def release(self) -> None:
        queue = self._queue
        while queue:
            waiter = queue.popleft()
            if not waiter.done():  # a cancelled waiter stays queued until here
                waiter.set_result(None)
                return
        self._free += 1


class Deadline:
    """A stack action's end time on the loop clock; None means no limit."""

    def __init__(self, seconds: float | None) -> None:
        loop = asyncio.get_running_loop()
        self.at = None if seconds is None else loop.time() + seconds
        #: set when a user cancel interrupts the action
        self.cancelled = False

    def expired(self) -> bool:
        return self.at is not None and asyncio.get_running_loop().time() >= self.at

    def reason(self) -> str | None:
        """Why running resource actions were interrupted (their FAILED reason)."""
        if self.cancelled:
            return CANCELLED
        return TIMED_OUT if self.expired() else None


async def traverse(graph: Graph[str], visit: Callable[[str], Awaitable[None]], *,
                   action: str, limit: asyncio.Semaphore | None,
                   unlimited: Callable[[str], bool] = lambda name: False,
                   deadline: Deadline | None = None,
                   cancel: asyncio.Event | None = None, fail_fast: bool = True) -> Outcome:
    """Walk ``graph``; the first failure stops new starts (as Heat does) and names the
    stack's reason ``Resource <ACTION> failed: <resource reason>``."""
    walker = asyncio.ensure_future(
        walk(graph, visit, limit=limit, unlimited=unlimited, fail_fast=fail_fast))
    waiter = asyncio.ensure_future(cancel.wait()) if cancel is not None else None
    try:
        async with asyncio.timeout_at(deadline.at if deadline else None):
            pending = {walker} if waiter is None else {walker, waiter}
            await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
    except TimeoutError:
        await _stop(walker)
        return Outcome(ok=False, reason=TIMED_OUT, timed_out=True)
    except asyncio.CancelledError:
        # the action itself is cancelled (a delete pre-empting it, engine stop): its
        # resource actions must stop too, not run on beside whatever comes next
        await asyncio.shield(_stop(walker))
        raise
    finally:
        if waiter is not None:
            waiter.cancel()
    if not walker.done():
        # a user cancel: running resource actions are interrupted, as Heat's
        # stop_traversal cancels its workers
        if deadline is not None:
            deadline.cancelled = True
        await _stop(walker)
        return Outcome(ok=False, cancelled=True, reason=f"Stack {action} cancelled")
    result = walker.result()
    failed = {name: failure_reason(name, exc) for name, exc in result.failed.items()}
    if failed:
        # Heat names the failing resource's own action (a create inside an update
        # fails the stack with "Resource CREATE failed: ...")
        name, exc = next(iter(result.failed.items()))
        own = getattr(exc, "action", "") or action
        quoted = exc.stack_reason if isinstance(exc, ActionFailed) else failed[name]
        return Outcome(ok=False, reason=resource_failed(own, quoted), failed=failed)
    return Outcome(ok=True)


def _being_cancelled() -> bool:
    """Whether the running task is being cancelled. Asked from a helper so that no frame
    of the cancelled task holds the task itself: the task keeps its CancelledError, whose
    traceback keeps the frames (a reference cycle holding the stack)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def _stop(task: asyncio.Task[Any]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def walk(graph: Graph[str], visit: Callable[[str], Awaitable[None]], *,
               limit: asyncio.Semaphore | None = None,
               unlimited: Callable[[str], bool] = lambda name: False,
               fail_fast: bool = False) -> WalkResult[str]:
    """Visit every node of ``graph`` after all it requires, in parallel: each visit holds
    a place of ``limit`` (unless ``unlimited``), and at most as many visits are in flight
    as ``limit`` has places (a :class:`Limit`; other semaphores leave it unbounded)."""
    run = _Walk(graph, visit, limit, unlimited, fail_fast)
    run.start()
    try:
        await run.finished
    except asyncio.CancelledError:
        run.closed = True
        for task in list(run.running):
            task.cancel()
        if run.running:
            await asyncio.gather(*run.running, return_exceptions=True)
        raise
    return run.frontier.result


class _Walk:
    """One walk's running visits over a :class:`Frontier`. Completions are handled as
    each visit ends (no polling, no ``asyncio.wait`` over every running task)."""

    def __init__(self, graph: Graph[str], visit: Callable[[str], Awaitable[None]],
                 limit: asyncio.Semaphore | None, unlimited: Callable[[str], bool],
                 fail_fast: bool) -> None:
        self.frontier = Frontier(graph)
        self.visit = visit
        self.limit = limit
        self.unlimited = unlimited
        self.fail_fast = fail_fast
        self.concurrency = limit.size if isinstance(limit, Limit) else None
        self.running: set[asyncio.Task[None]] = set()
        #: ready nodes not yet started because ``concurrency`` visits are in flight
        self.queued: deque[str] = deque()
        #: started visits that count against ``concurrency``
        self.active = 0
        self.stopping = False
        #: the walk itself was cancelled: nothing more may start
        self.closed = False
        self.finished: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def start(self) -> None:
        for node in self.frontier.ready():
            self._launch(node)
        self._check_finished()

    def _launch(self, node: str) -> None:
        if self.stopping:
            return
        counted = not self.unlimited(node)
        if counted and self.concurrency is not None and self.active >= self.concurrency:
            self.queued.append(node)
            return
        self._start(node, counted)

    def _start(self, node: str, counted: bool) -> None:
        self.frontier.start(node)
        if counted:
            self.active += 1
        task = asyncio.ensure_future(self._run(node, counted))
        self.running.add(task)
        task.add_done_callback(self.running.discard)

    def _pump(self) -> None:
        """Start queued nodes while there is room (a finished visit made some)."""
        while not self.closed and not self.stopping and self.queued and (
                self.concurrency is None or self.active < self.concurrency):
            node = self.queued.popleft()
            if self.frontier.pending(node):  # not skipped while it waited
                self._start(node, True)

    async def _run(self, node: str, counted: bool) -> None:
        try:
            if self.limit is None or not counted:
                await self._visit(node)
            else:
                async with self.limit:
                    await self._visit(node)
        finally:
            if counted:
                self.active -= 1
                self._pump()
            self._check_finished()

    async def _visit(self, node: str) -> None:
        if self.stopping:  # a failure came while this one waited for a place
            self.frontier.not_run(node)
            return
        try:
            await self.visit(node)
        except asyncio.CancelledError as exc:
            if _being_cancelled():
                raise
            self._failed(node, exc)  # raised by the visitor itself, not by us
        except Exception as exc:  # a node's failure is data, not a crash  # noqa: BLE001
            self._failed(node, exc)
        else:
            for ready in self.frontier.succeeded(node):
                self._launch(ready)

    def _failed(self, node: str, exc: BaseException) -> None:
        # the failure is kept as data (its type and message make the outcome), without
        # its traceback: that starts at this walk's own frame, so keeping it would make
        # a reference cycle (walk -> result -> traceback -> frame -> walk) holding the
        # stack until the cycle collector ran
        self.frontier.failed(node, exc.with_traceback(None))
        if self.fail_fast:
            self.stopping = True
            self.queued.clear()
            self.frontier.stop(cancelled=False)

    def _check_finished(self) -> None:
        if self.frontier.finished and not self.finished.done():
            self.finished.set_result(None)
