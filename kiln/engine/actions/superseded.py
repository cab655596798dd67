"""Deleting the resources an update replaced as soon as nothing can need them again.

Heat's convergence engine cleans a replaced resource up inside the update's own
traversal, once the resources that depend on it have been updated to its replacement;
the update is complete when the rest is. Kiln does the same, so an update of N
replacements holds about N resources, not 2N, at any moment (the old ones were what
made a 10,000-resource replace-all update the engine's largest memory peak).

An old resource ``x`` goes when all of these hold:

- its replacement's visit finished without error;
- every resource that requires ``x`` in the new template has finished its own update
  (none can read the old one any more);
- no resource still waiting for deletion requires ``x`` (dependants go first, as in
  the cleanup walk).

Anything else (a failure, a cancel, a timeout) stops further early deletes: what is
left stays for the final cleanup walk, or for a rollback to put back.
"""

from __future__ import annotations

import asyncio
import contextlib

from kiln.engine.actions.delete import delete_with_row
from kiln.engine.model.live_stack import LiveStack, Slot
from kiln.engine.runtime.engine import Engine
from kiln.engine.runtime.runner import failure_reason, is_nested
from kiln.engine.runtime.scheduler import Deadline
from kiln.graph import Graph


class SupersededCleaner:
    """Tracks the update's walk and deletes replaced resources the moment they are free."""

    def __init__(self, engine: Engine, stack: LiveStack, graph: Graph[str],
                 doomed: dict[int, Slot], deadline: Deadline) -> None:
        self.engine = engine
        self.stack = stack
        self.doomed = doomed
        self.deadline = deadline
        self.graph = graph
        #: new-template dependants of each name not yet through their update
        self.waiting = {n: len(graph.dependants(n)) for n in graph}
        #: doomed resources (by identity) still alive that require each name
        self.users: dict[str, int] = {}
        for slot in doomed.values():
            self._count_users(slot, +1)
        #: name -> the old resource its replacement superseded in this update
        self.replaced: dict[str, Slot] = {}
        self.visited: set[str] = set()
        self.tasks: set[asyncio.Task[None]] = set()
        self.stopped = False
        self.failure: str | None = None

    def _count_users(self, slot: Slot, delta: int) -> None:
        for name in slot.requires:
            self.users[name] = self.users.get(name, 0) + delta

    # -- what the update reports ----------------------------------------------------------
    def superseded(self, name: str, old: Slot) -> None:
        """``old`` was replaced (it is now in ``doomed``)."""
        self.replaced[name] = old
        self._count_users(old, +1)

    def visited_ok(self, name: str) -> None:
        """``name``'s update finished without error."""
        self.visited.add(name)
        self._consider(name)
        for req in self.graph.requires(name):
            self.waiting[req] -= 1
            self._consider(req)

    def stop(self) -> None:
        """The walk is failing or being stopped: start nothing more."""
        self.stopped = True

    # -- deleting -------------------------------------------------------------------------
    def _consider(self, name: str) -> None:
        old = self.replaced.get(name)
        if (old is None or self.stopped or name not in self.visited
                or self.waiting.get(name, 0) > 0 or self.users.get(name, 0) > 0):
            return
        del self.replaced[name]
        task = asyncio.ensure_future(self._delete(old))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _delete(self, old: Slot) -> None:
        engine = self.engine
        try:
            limit = contextlib.nullcontext() if is_nested(old) else engine.limit
            async with limit:
                if self.stopped:
                    return
                await delete_with_row(engine, self.stack, old, self.deadline)
        except Exception as exc:  # a plugin's delete failure fails the update  # noqa: BLE001
            self.stopped = True
            if self.failure is None:
                self.failure = failure_reason(old.name, exc)
            return
        self.doomed.pop(id(old), None)
        self._count_users(old, -1)
        for name in old.requires:
            self._consider(name)

    async def drain(self) -> None:
        """Wait for the deletes under way (they finish even when the walk failed)."""
        while self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)

    async def cancel(self) -> None:
        self.stopped = True
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)
