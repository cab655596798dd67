"""Wake-ups for readers waiting on a stack's new events, inside one process.

Every state change the engine makes is committed together with its event row
(``kiln.engine.store.recorder``), so "new events of stack S were committed" is the one signal a
live view needs. The database layer publishes the stack ids of the event rows each
transaction inserted, once that transaction has committed (``kiln.db.events``), from
whatever thread committed it; a subscriber (the event stream of the API) is woken on its
own event loop and then reads the rows like any other reader. Nothing is carried in the
notification but ids, so a reader never sees an event that is not yet readable.

Only this process's commits are published: readers that must also see what another
process writes to the same database combine this with a periodic check of their own
(see ``kiln.api.openstack_v1.event_stream``).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterable


class Subscription:
    """Stack ids committed since the last :meth:`wait`, delivered on one event loop."""

    def __init__(self, bus: EventBus, loop: asyncio.AbstractEventLoop) -> None:
        self._bus = bus
        self.loop = loop
        self._pending: set[str] = set()
        self._ready = asyncio.Event()

    def _deliver(self, stack_ids: frozenset[str]) -> None:
        self._pending |= stack_ids
        self._ready.set()

    def wake(self) -> None:
        """End the current :meth:`wait` early, with no ids (the owner is closing)."""
        self._ready.set()

    async def wait(self, timeout: float | None) -> set[str]:  # noqa: ASYNC109
        """The stack ids committed since the previous call (waiting up to ``timeout``
        seconds for one; an empty set when none came)."""
        if not self._pending:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ready.wait(), timeout)
        self._ready.clear()
        woken, self._pending = self._pending, set()
        return woken

    def close(self) -> None:
        self._bus._remove(self)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class EventBus:
    """Subscribers by event loop; :meth:`publish` may be called from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subs: dict[asyncio.AbstractEventLoop, set[Subscription]] = {}

    def subscribe(self) -> Subscription:
        sub = Subscription(self, asyncio.get_running_loop())
        with self._lock:
            self._subs.setdefault(sub.loop, set()).add(sub)
        return sub

    def _remove(self, sub: Subscription) -> None:
        with self._lock:
            subs = self._subs.get(sub.loop)
            if subs is not None:
                subs.discard(sub)
                if not subs:
                    del self._subs[sub.loop]

    def publish(self, stack_ids: Iterable[str]) -> None:
        """Tell every subscriber that events of ``stack_ids`` were committed: one
        call into each loop that has subscribers, none when nobody listens."""
        ids = frozenset(stack_ids)
        if not ids:
            return
        with self._lock:
            targets = [(loop, tuple(subs)) for loop, subs in self._subs.items()]
        for loop, subs in targets:
            with contextlib.suppress(RuntimeError):  # that loop has closed meanwhile
                loop.call_soon_threadsafe(_deliver_all, subs, ids)


def _deliver_all(subs: tuple[Subscription, ...], ids: frozenset[str]) -> None:
    for sub in subs:
        sub._deliver(ids)


#: The process's bus (the database layer publishes, the API subscribes).
EVENTS = EventBus()
