"""How many resources of nested stacks an engine holds in memory at once.

A stack's resources are created, updated and deleted in parallel, and so are its nested
stacks: a stack of 100 ResourceGroups of 1,000 members built all 100 children at once,
100,000 slots (plugin, properties, state) alive together, about 6 KB each: 600 MB for
work that two CPUs do one resource at a time anyway. The engine-wide limit on running
resource actions (``max_concurrency``) does not bound this: a nested stack's parent
resource does not count against it (it would deadlock waiting for its own children),
and a child's slots exist before any of its resources runs.

The :class:`NestedBudget` bounds the resources of the nested stacks whose action is
running: a child stack waits for its share (its number of resources) before it is
built or loaded, and gives it back when its action ends, so memory stays flat in the
number of children while each child still runs its resources in parallel (5,000 in
flight is five times ``max_concurrency``'s default; measured with 20 groups of 1,000:
peak 149 MB against 170 MB at 10,000, at the same CPU time). A child of a stack that already
holds a share (directly or through its own parent) never waits: its ancestor cannot
finish without it, so waiting there could deadlock; only the outermost nested stacks
queue. A child bigger than the whole budget runs alone.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib

from kiln.engine.runtime.memory import release_freed_memory

#: resources of running nested-stack actions held at once (see the module docstring)
NESTED_RESOURCES_IN_FLIGHT = 5000
#: resources granted since the budget was last idle past which its next idle moment
#: gives the freed memory back to the OS (:mod:`kiln.engine.runtime.memory`)
TRIM_AFTER = 5000


class Share:
    """One child's part of the budget, from before it is built until its action ends."""

    def __init__(self, budget: NestedBudget, weight: int) -> None:
        self._budget = budget
        self.weight = weight
        self.stack_id: str | None = None
        self._released = False

    def bind(self, stack_id: str) -> None:
        """The child this share is for: its own children will pass without waiting."""
        self.stack_id = stack_id
        self._budget.holders[stack_id] = self._budget.holders.get(stack_id, 0) + 1

    def release(self) -> None:
        """Give the share back (idempotent: an error path and the task may both call)."""
        if self._released:
            return
        self._released = True
        if self.stack_id is not None:
            left = self._budget.holders.pop(self.stack_id, 1) - 1
            if left > 0:
                self._budget.holders[self.stack_id] = left
        self._budget.give_back(self.weight)

    def until_done(self, task: asyncio.Task[None]) -> None:
        """Give the share back when ``task`` (the child's action) ends, however it ends
        (a task cancelled before its first step never runs a ``finally``)."""
        task.add_done_callback(lambda _task: self.release())


class NestedBudget:
    """A weighted, first-come first-served semaphore of nested-stack resources."""

    def __init__(self, size: int = NESTED_RESOURCES_IN_FLIGHT) -> None:
        self.size = max(1, size)
        self.used = 0
        #: resources granted since the budget was last idle
        self.granted = 0
        #: stacks whose running action holds (or is covered by) a share
        self.holders: dict[str, int] = {}
        self._waiting: collections.deque[tuple[int, asyncio.Future[None]]] = (
            collections.deque())

    async def acquire(self, weight: int, *, parent_stack_id: str | None,
                      stack_id: str | None = None) -> Share:
        """A share of ``weight`` resources for a child of ``parent_stack_id``; free (weight
        0, no wait) when that parent's action is itself covered by a share, or when the
        child ``stack_id`` has one already (a delete preempting its running create must
        not wait for the share that create holds)."""
        if any(s is not None and s in self.holders for s in (parent_stack_id, stack_id)):
            return Share(self, 0)
        weight = min(max(1, weight), self.size)
        if not self._waiting and self.used + weight <= self.size:
            self.used += weight
            self.granted += weight
            return Share(self, weight)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (weight, future)
        self._waiting.append(entry)
        try:
            await future
        except BaseException:
            if future.done() and not future.cancelled():
                self.give_back(weight)  # granted as it was cancelled: pass it on
            else:
                with contextlib.suppress(ValueError):  # _wake may have dropped it
                    self._waiting.remove(entry)
                self._wake()
            raise
        return Share(self, weight)

    def give_back(self, weight: int) -> None:
        self.used -= weight
        self._wake()
        if self.used == 0 and not self._waiting and self.granted >= TRIM_AFTER:
            # the last big child is done: what its slots took goes back to the OS
            self.granted = 0
            release_freed_memory()

    def _wake(self) -> None:
        """Grant waiting shares in order while they fit (the first that does not fit
        blocks the rest, so a big child is not starved by small ones)."""
        while self._waiting:
            weight, future = self._waiting[0]
            if future.done():
                self._waiting.popleft()
                continue
            if self.used + weight > self.size:
                return
            self._waiting.popleft()
            self.used += weight
            self.granted += weight
            future.set_result(None)
