"""The engine-wide scheduler: one concurrency limit, stack timeouts, per-stack cancel.

:func:`traverse` walks a stack's graph with a visit function. The engine-wide semaphore
is taken inside each visit (not by the walker), so a resource that only waits for a
nested stack (whose own resources need slots) can run without holding one: that is what
keeps small limits from deadlocking deep nesting.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from kiln.engine.actions import TIMED_OUT, resource_failed
from kiln.engine.runner import failure_reason
from kiln.graph import Graph, walk


@dataclass
class Outcome:
    ok: bool
    reason: str = ""
    timed_out: bool = False
    cancelled: bool = False
    failed: dict[str, str] = field(default_factory=dict)


class Deadline:
    """A stack action's end time on the loop clock; None means no limit."""

    def __init__(self, seconds: float | None) -> None:
        loop = asyncio.get_running_loop()
        self.at = None if seconds is None else loop.time() + seconds

    def expired(self) -> bool:
        return self.at is not None and asyncio.get_running_loop().time() >= self.at

    def reason(self) -> str | None:
        return TIMED_OUT if self.expired() else None


async def traverse(graph: Graph[str], visit: Callable[[str], Awaitable[None]], *,
                   action: str, limit: asyncio.Semaphore | None,
                   unlimited: Callable[[str], bool] = lambda name: False,
                   deadline: Deadline | None = None,
                   cancel: asyncio.Event | None = None) -> Outcome:
    """Walk ``graph``; the first failure stops new starts (as Heat does) and names the
    stack's reason ``Resource <ACTION> failed: <resource reason>``."""

    async def guarded(name: str) -> None:
        if limit is None or unlimited(name):
            await visit(name)
        else:
            async with limit:
                await visit(name)

    try:
        async with asyncio.timeout_at(deadline.at if deadline else None):
            result = await walk(graph, guarded, cancel=cancel, fail_fast=True)
    except TimeoutError:
        return Outcome(ok=False, reason=TIMED_OUT, timed_out=True)
    failed = {name: failure_reason(name, exc) for name, exc in result.failed.items()}
    if failed:
        first = next(iter(failed.values()))
        return Outcome(ok=False, reason=resource_failed(action, first), failed=failed)
    if result.cancelled:
        return Outcome(ok=False, cancelled=True, reason=f"Stack {action} cancelled")
    return Outcome(ok=True)
