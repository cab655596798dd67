"""``GET .../events?stream=true``: a stack's events as server-sent events, live.

The route is Heat's own event list with one more query parameter, which no Heat client
sends, so heatclient and the openstack CLI see nothing new. The other list parameters
keep their meaning (``resource_name`` and the other filters, ``nested_depth`` for the
events of nested stacks); ``limit``, ``sort_keys`` and ``sort_dir`` do not apply (a
stream is oldest first, every event once).

What a client receives (``text/event-stream``):

- ``event: event`` messages whose ``id:`` is the event's id (Heat's event uuid) and whose
  ``data:`` is the event as the list shows it, plus ``resource_type``, ``stack_name`` and
  ``stack_id`` (the stack it belongs to, a nested one with ``nested_depth``). A stack's own
  state changes are events too (``physical_resource_id`` is the stack's id).
- first every event already stored (after the resume point), then each new one as it is
  committed, until the stack reaches DELETE_COMPLETE (then an ``event: end`` message and
  the response ends) or the client goes away.
- ``: keepalive`` comments while nothing happens, so proxies and clients see a live
  connection.

Resume: a reconnecting client sends ``Last-Event-ID`` (browsers' EventSource does so
itself), or ``marker=<event id>`` as in the list; the stream starts after that event.
An id that is no longer stored (purged by ``max_events_per_stack``) replays what is kept.

How it wakes: this process's commits of event rows are published by the database layer
(``kiln.notify``), so an action run by this process is streamed as it happens, without
polling. Another process on the same database (a second ``kiln serve``/``kiln api``, or a
``kiln engine`` that took a stack over) publishes nothing here; for that the stream
re-reads every ``[kiln_api] event_stream_recheck_interval`` seconds, but only while the
stack is IN_PROGRESS or after the database's stack change counter moved (an action
started elsewhere writes the stack row). Events committed out of order by two processes
(possible on PostgreSQL/MariaDB) are still delivered: each read looks back over the
last events sent and skips those already sent.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import AsyncIterator, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

from oslo_config import cfg
from starlette.responses import Response, StreamingResponse

from kiln import notify
from kiln.api import identity as ident
from kiln.api import views
from kiln.api.openstack_v1.common import Call, dumps

#: Events read per query.
PAGE = 500
#: Events sent that each read looks back over (late commits of other processes).
LOOKBACK = 64
#: Seconds of silence before a keepalive comment.
KEEPALIVE = 15.0
#: Foreign stack ids remembered (see ``_Reader.relevant``) before the memory is reset.
MAX_FOREIGN = 10_000
#: The client's reconnection delay (ms) announced at the start of every stream.
RETRY_MS = 2000


class StreamRegistry:
    """The open streams of one app, so that a stopping server can end them (an open
    stream would otherwise hold the graceful shutdown until its timeout)."""

    def __init__(self) -> None:
        self.closed = False
        self._subs: set[notify.Subscription] = set()

    def add(self, sub: notify.Subscription) -> None:
        self._subs.add(sub)

    def discard(self, sub: notify.Subscription) -> None:
        self._subs.discard(sub)

    def close(self) -> None:
        """End every open stream (and refuse new ones); called before the server stops."""
        self.closed = True
        for sub in list(self._subs):
            sub.loop.call_soon_threadsafe(sub.wake)

    def __len__(self) -> int:
        return len(self._subs)


def recheck_interval(conf: cfg.ConfigOpts) -> float:
    try:
        return float(conf.kiln_api.event_stream_recheck_interval)
    except (cfg.NoSuchOptError, AttributeError):
        return 2.0


class _Reader:
    """Reads what is new for one stream: the stack's events after the last one sent."""

    def __init__(self, call: Call, identity: Mapping[str, Any],
                 filters: Mapping[str, Any] | None, nested_depth: int,
                 resume: str | None) -> None:
        self.call = call
        self.identity = identity
        self.stack_id = str(identity["stack_id"])
        self.filters = dict(filters) if filters else None
        self.nested_depth = nested_depth
        self.resume = resume
        self.window: deque[str] = deque(maxlen=LOOKBACK)
        self.tree: set[str] = {self.stack_id}
        self.foreign: set[str] = set()
        self.status = ""

    def relevant(self, woken: set[str]) -> bool:
        """Whether committed events of ``woken`` stacks may concern this stream. With
        ``nested_depth``, a stack never seen before may be a new nested stack: it is
        read once, and remembered as foreign if none of its events belong here."""
        if woken & self.tree:
            return True
        return self.nested_depth > 0 and bool(woken - self.foreign)

    def _marker(self) -> str | None:
        return self.window[0] if len(self.window) == LOOKBACK else self.resume

    async def read(self, woken: AbstractSet[str] = frozenset()) -> list[dict[str, Any]]:
        """The events not yet sent, oldest first."""
        call, sent = self.call, set(self.window)
        out: list[dict[str, Any]] = []
        marker = self._marker()
        while True:
            page = await call.service.list_events(
                call.ctx, stack_identity=self.identity, filters=self.filters, limit=PAGE,
                marker=marker, sort_dir="asc", nested_depth=self.nested_depth or None)
            for item in page:
                if item["id"] in sent:
                    continue
                sent.add(item["id"])
                out.append(dict(item))
            if len(page) < PAGE:
                break
            marker = page[-1]["id"]
        for event in out:
            self.window.append(event["id"])
            owner = ident.coerce(event.get("stack_identity"), call.tenant)
            if owner is not None:
                self.tree.add(str(owner["stack_id"]))
                if str(owner["stack_id"]) == self.stack_id \
                        and event.get("physical_resource_id") == self.stack_id:
                    self.status = str(event.get("resource_status", ""))
        if self.nested_depth:
            if len(self.foreign) > MAX_FOREIGN:
                self.foreign.clear()
            self.foreign |= woken - self.tree
        return out

    def message(self, event: Mapping[str, Any]) -> bytes:
        call = self.call
        owner = ident.coerce(event.get("stack_identity"), call.tenant) or self.identity
        data = views.format_event(call.api_root, self.identity, event, detail=False)
        data["resource_type"] = event.get("resource_type")
        data["stack_name"] = owner["stack_name"]
        data["stack_id"] = owner["stack_id"]
        return b"id: %s\nevent: event\ndata: %s\n\n" % (str(event["id"]).encode(),
                                                        dumps(data))

    @property
    def in_progress(self) -> bool:
        return self.status.endswith("_IN_PROGRESS")

    @property
    def ended(self) -> bool:
        return self.status == "DELETE_COMPLETE"


async def stream_events(call: Call, filters: Mapping[str, Any] | None,
                        nested_depth: int) -> Response:
    """The streaming response; a stack that does not exist is a 404 before it starts."""
    identity = call.identity()
    stack = await call.service.show_stack(call.ctx, stack_identity=identity,
                                          resolve_outputs=False)
    if isinstance(stack, list):
        stack = stack[0]
    resume = (call.request.headers.get("last-event-id") or call.query.get("marker")
              or None)
    reader = _Reader(call, identity, filters, nested_depth, resume)
    reader.status = str(stack.get("stack_status", ""))
    registry: StreamRegistry = call.request.app.state.event_streams
    return StreamingResponse(
        _messages(reader, registry, recheck_interval(call.conf)),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


async def _messages(reader: _Reader, registry: StreamRegistry,
                    recheck: float) -> AsyncIterator[bytes]:
    if registry.closed:
        return
    sub = notify.EVENTS.subscribe()   # before the first read: nothing committed is missed
    registry.add(sub)
    try:
        yield b": kiln event stream\nretry: %d\n\n" % RETRY_MS
        generation = await reader.call.service.stacks_generation()
        events = await reader.read()
        last_write = time.monotonic()
        while True:
            for event in events:
                yield reader.message(event)
                last_write = time.monotonic()
            if reader.ended:
                yield b"event: end\ndata: {}\n\n"
                return
            events = []
            woken = await sub.wait(min(recheck, KEEPALIVE))
            if registry.closed:
                return
            if woken:
                if reader.relevant(woken):
                    events = await reader.read(woken)
            else:
                # nothing committed here: look for what another process committed
                now_gen = await reader.call.service.stacks_generation()
                if reader.in_progress or now_gen != generation:
                    generation = now_gen
                    events = await reader.read()
            if not events and time.monotonic() - last_write >= KEEPALIVE:
                yield b": keepalive\n\n"
                last_write = time.monotonic()
    finally:
        registry.discard(sub)
        sub.close()
