"""The engine-wide scheduler: one concurrency limit, stack timeouts, per-stack cancel.

:func:`traverse` walks a stack's graph with a visit function. The engine-wide semaphore
is taken inside each visit (not by the walker), so a resource that only waits for a
nested stack (whose own resources need slots) can run without holding one: that is what
keeps small limits from deadlocking deep nesting. The walker itself keeps at most as many
visits in flight as the semaphore has slots (nested-stack waiters apart): more could not
run anyway, and each would hold a parked coroutine for the whole wait.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from kiln.engine.model.states import CANCELLED, TIMED_OUT, resource_failed
from kiln.engine.runtime.runner import failure_reason
from kiln.graph import Graph, walk


@dataclass
class Outcome:
    ok: bool
    reason: str = ""
    timed_out: bool = False
    cancelled: bool = False
    failed: dict[str, str] = field(default_factory=dict)


class Limit(asyncio.Semaphore):
    """The engine-wide limit on resource actions running at once; knows its size."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


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

    async def guarded(name: str) -> None:
        if limit is None or unlimited(name):
            await visit(name)
        else:
            async with limit:
                await visit(name)

    concurrency = limit.size if isinstance(limit, Limit) else None
    walker = asyncio.ensure_future(walk(graph, guarded, fail_fast=fail_fast,
                                        concurrency=concurrency, unbounded=unlimited))
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
        return Outcome(ok=False, reason=resource_failed(own, failed[name]), failed=failed)
    return Outcome(ok=True)


async def _stop(task: asyncio.Task[Any]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
