"""Follow one stack action through the stack's events until it settles.

It works against any Heat-compatible endpoint with nothing but the events API: each poll
asks for the events after the last one seen (``marker``, ``sort_dir=asc``), so nothing is
read twice however long the action runs. The action has settled when a stack-level event
(the one whose physical id is the stack's) after the starting marker reports it finished
and the stack itself is no longer ``*_IN_PROGRESS`` — the stack's status alone cannot
tell, because right after an update is accepted it may still show the previous update's
``UPDATE_COMPLETE``. A failed create or update of a stack with rollback enabled is
followed on to its rollback's end. A deleted stack that is no longer found has settled
as ``DELETE_COMPLETE``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kiln.client.api import JSON, HeatAPI, NotFound
from kiln.client.events import EventSource, PollingSource, StreamUnavailable, open_source

#: Seconds a failed action with rollback enabled may stay FAILED before its rollback shows;
#: after that it is taken as final (an endpoint that does not roll back that action).
ROLLBACK_GRACE = 20.0
#: Seconds a stream read waits for the next event before the display moves on.
STREAM_WAIT = 0.5
#: Seconds between reads of the stack while a stream is quiet (a safety net).
STREAM_STACK_CHECK = 5.0
#: How deep a stream follows nested stacks (groups of groups, stacks in groups...).
NESTED_DEPTH = 5


@dataclass
class ResourceProgress:
    """The latest state of one resource during the action: a top-level one by its name, a
    nested stack's by its path (``group.0``, ``group.0.server``) when a stream carries
    nested events."""

    name: str
    status: str
    reason: str = ""
    started: float | None = None
    finished: float | None = None

    @property
    def state(self) -> str:
        """``in_progress``, ``failed`` or ``done``."""
        if self.status.endswith("_IN_PROGRESS"):
            return "in_progress"
        if self.status.endswith("_FAILED"):
            return "failed"
        return "done"


@dataclass
class ActionWatch:
    """The progress of ``action`` on one stack, advanced by :meth:`poll`."""

    api: HeatAPI
    ref: str
    stack_name: str
    stack_id: str
    action: str
    marker: str | None = None
    #: resources the action is expected to touch (a create's template, an update's plan)
    expected: set[str] = field(default_factory=set)
    types: Mapping[str, str] = field(default_factory=dict)
    rollback: bool = False
    started: float = field(default_factory=time.monotonic)
    resources: dict[str, ResourceProgress] = field(default_factory=dict)
    events: list[JSON] = field(default_factory=list)
    stack_status: str = ""
    stack_reason: str = ""
    #: every failure seen during the action, kept when a rollback later deletes the
    #: resource: (resource or stack name, status, reason)
    failures: list[tuple[str, str, str]] = field(default_factory=list)
    final: JSON | None = None
    #: follow Kiln's live event stream when the endpoint has one (else poll)
    stream: bool = True
    _terminal_event: str | None = None
    _failed_at: float | None = None
    _source: EventSource | None = None
    _stack_read_at: float = 0.0
    #: nested stack id -> the path of the resource it belongs to, and the same by name
    _paths: dict[str, str] = field(default_factory=dict)
    _names: dict[str, str] = field(default_factory=dict)

    @classmethod
    def last_event_id(cls, api: HeatAPI, ref: str) -> str | None:
        """The newest event's id: the marker to start from before acting on a stack."""
        try:
            events = api.events(ref, {"sort_dir": "desc", "limit": 1})
        except NotFound:
            return None
        return str(events[0]["id"]) if events else None

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def counts(self) -> dict[str, int]:
        counts = {"done": 0, "in_progress": 0, "failed": 0}
        for progress in self.resources.values():
            counts[progress.state] += 1
        counts["waiting"] = len(self.expected - set(self.resources))
        return counts

    def _is_stack_event(self, event: Mapping[str, Any]) -> bool:
        return (event.get("physical_resource_id") == self.stack_id
                and event.get("resource_name") == self.stack_name)

    def is_nested(self, event: Mapping[str, Any]) -> bool:
        """An event of a nested stack (only a stream with nested_depth sends those)."""
        owner = event.get("stack_id")
        return bool(owner) and owner != self.stack_id

    def path(self, event: Mapping[str, Any]) -> str:
        """The name progress is kept under: a nested resource's path from the top."""
        name = str(event.get("resource_name") or event.get("logical_resource_id") or "?")
        if not self.is_nested(event):
            return name
        return f"{self._stack_path(str(event['stack_id']), str(event.get('stack_name')))}.{name}"

    def _stack_path(self, stack_id: str, stack_name: str) -> str:
        """A nested stack is named ``<parent stack>-<resource>-<suffix>`` (as Heat names
        them): its path is its parent's path and that resource's name. Worked out from the
        name, so the first event of a member already has the key the later ones get."""
        known = self._paths.get(stack_id)
        if known is not None:
            return known
        names = self._names
        if not names:
            names[self.stack_name] = ""
        known = stack_name
        cut = stack_name.rfind("-")                      # before the suffix
        while cut > 0:
            cut = stack_name.rfind("-", 0, cut)          # the longest known parent first
            parent = stack_name[:cut] if cut > 0 else None
            if parent is not None and parent in names:
                resource = stack_name[cut + 1:stack_name.rfind("-")]
                known = f"{names[parent]}.{resource}" if names[parent] else resource
                break
        self._paths[stack_id] = known
        names[stack_name] = known
        return known

    def _apply(self, event: JSON) -> None:
        status = str(event.get("resource_status") or "")
        reason = str(event.get("resource_status_reason") or "")
        now = time.monotonic()
        if self.is_nested(event) and event.get("physical_resource_id") == event.get(
                "stack_id"):
            return   # a nested stack's own state: its parent resource's event says it
        name = self.path(event)
        if status.endswith("_FAILED"):
            is_stack = self._is_stack_event(event)
            self.failures.append((self.stack_name if is_stack else name, status, reason))
        if self._is_stack_event(event):
            self.stack_status, self.stack_reason = status, reason
            if not status.endswith("_IN_PROGRESS"):
                self._terminal_event = status
            return
        progress = self.resources.get(name)
        if progress is None:
            progress = self.resources[name] = ResourceProgress(name, status)
        progress.status, progress.reason = status, reason
        if status.endswith("_IN_PROGRESS"):
            progress.started, progress.finished = now, None
        else:
            progress.finished = now

    def _waits_for_rollback(self) -> bool:
        """After a failure with rollback on, until the rollback shows (for a while)."""
        terminal = self._terminal_event or ""
        if not (self.rollback and self.action in ("CREATE", "UPDATE")
                and terminal == f"{self.action}_FAILED"):
            return False
        if self._failed_at is None:
            self._failed_at = time.monotonic()
        return time.monotonic() - self._failed_at < ROLLBACK_GRACE

    def _all_deleted(self) -> None:
        """The stack's delete is complete, and so is whatever was still being deleted
        when we last looked, or not yet seen at all: a delete that ends before the first
        read (or between a read of the events and one of the stack) has deleted every
        resource it was expected to."""
        now = time.monotonic()
        for progress in self.resources.values():
            if progress.state == "in_progress":
                progress.status = "DELETE_COMPLETE"
                progress.finished = now
        for name in self.expected - set(self.resources):
            self.resources[name] = ResourceProgress(name, "DELETE_COMPLETE", finished=now)

    def _gone(self) -> None:
        """A deleted stack no longer found: the delete is complete."""
        self._all_deleted()
        self.stack_status = "DELETE_COMPLETE"
        self.final = {"stack_status": "DELETE_COMPLETE",
                      "stack_status_reason": self.stack_reason or "Stack deleted"}

    def _fetch(self) -> list[JSON]:
        if self._source is None:
            self._source = (open_source(self.api, self.ref, self.marker, NESTED_DEPTH)
                            if self.stream else PollingSource(self.api, self.ref))
        try:
            return self._source.fetch(self.marker, STREAM_WAIT)
        except StreamUnavailable:
            self._source.close()
            self._source = PollingSource(self.api, self.ref)
            return self._source.fetch(self.marker, 0)

    @property
    def streaming(self) -> bool:
        return self._source is not None and self._source.streaming

    def _stack_due(self) -> bool:
        """Whether to read the stack now: always when polling; with a stream only once
        the stack's own events say the action may have ended (and now and then, in case
        the stream missed that)."""
        if not self.streaming or self._terminal_event is not None:
            return True
        if getattr(self._source, "ended", False):
            return True
        return time.monotonic() - self._stack_read_at > STREAM_STACK_CHECK

    def poll(self) -> list[JSON]:
        """Read the new events (and the stack, when due); return the new events."""
        try:
            new = self._fetch()
            stack = self.api.get_stack(self.ref) if self._stack_due() else None
        except NotFound:
            if self.action == "DELETE":
                self._gone()
                return []
            raise
        for event in new:
            self._apply(event)
        own = [event for event in new if not self.is_nested(event)]
        if own:   # polling (after a broken stream) resumes from the stack's own events
            self.marker = str(own[-1]["id"])
        self.events.extend(new)
        if stack is None:
            return new
        self._stack_read_at = time.monotonic()
        status = str(stack.get("stack_status") or "")
        if status.endswith("_IN_PROGRESS") and status.startswith("ROLLBACK"):
            self._terminal_event = None  # a rollback began after the failure we saw
        finished = (self._terminal_event is not None and not status.endswith("_IN_PROGRESS")
                    and not (self._waits_for_rollback() and not status.startswith("ROLLBACK")))
        if self.action == "DELETE" and status == "DELETE_COMPLETE":
            self._all_deleted()
            finished = True
        if finished:
            self.final = stack
            self.close()
        elif getattr(self._source, "ended", False):
            self.close()  # the stream ended early: go on by polling
            self._source = PollingSource(self.api, self.ref)
        return new

    def close(self) -> None:
        if self._source is not None:
            self._source.close()

    @property
    def settled(self) -> bool:
        return self.final is not None

    @property
    def succeeded(self) -> bool:
        status = str((self.final or {}).get("stack_status") or "")
        return status == f"{self.action}_COMPLETE"


def wait(watch: ActionWatch, on_poll: Any = None, *, max_delay: float = 1.0) -> None:
    """Poll with short, growing pauses (reset whenever something happens) until settled."""
    delay = 0.1
    while True:
        new = watch.poll()
        if on_poll is not None:
            on_poll(new)
        if watch.settled:
            return
        if watch.streaming:
            continue  # the stream's read waits for the next event
        time.sleep(delay)  # poll interval of a progress display, not a synchronisation
        delay = 0.1 if new else min(delay * 1.5, max_delay)
