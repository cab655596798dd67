"""Where a followed action's new events come from: a live stream when the endpoint has one,
else polling the event list.

- :class:`StreamSource`: ``GET .../events?stream=true`` (Kiln's server-sent events), read
  on a background thread into a queue, so each event arrives the moment it is committed
  with one request for the whole action. An endpoint without the stream (Heat ignores the
  unknown parameter and answers the usual JSON list) is recognised by its content type.
- :class:`PollingSource`: the event list after the last event seen (``marker``,
  ``sort_dir=asc``), which every Heat-compatible endpoint has.

Both resume after ``marker``, so a stream that breaks mid-action hands over to polling
without losing or repeating an event.
"""

from __future__ import annotations

import contextlib
import json
import queue
import threading
from collections.abc import Iterator
from typing import Protocol

import httpx

from kiln.client.api import JSON, HeatAPI

#: Seconds without a byte (Kiln sends a keepalive every 15 s) before a stream is given up.
STREAM_READ_TIMEOUT = 45.0


class EventSource(Protocol):
    streaming: bool

    def fetch(self, marker: str | None, wait: float) -> list[JSON]:
        """The events after ``marker`` that have arrived, waiting up to ``wait`` seconds
        for one when a stream has none yet (a poll returns at once)."""

    def close(self) -> None: ...


class PollingSource:
    """The event list, after the marker."""

    streaming = False

    def __init__(self, api: HeatAPI, ref: str) -> None:
        self.api, self.ref = api, ref

    def fetch(self, marker: str | None, wait: float) -> list[JSON]:
        params: dict[str, str] = {"sort_dir": "asc"}
        if marker:
            params["marker"] = marker
        return self.api.events(self.ref, params)

    def close(self) -> None:
        pass


class StreamUnavailable(Exception):
    """The endpoint has no event stream, or the stream broke."""


def _messages(lines: Iterator[str]) -> Iterator[tuple[str, str]]:
    """``(event type, data)`` per server-sent-events message; comments skipped."""
    kind: str = "message"
    data: list[str] = []
    for line in lines:
        if not line:
            if data:
                yield kind, "\n".join(data)
            kind, data = "message", []
        elif line.startswith(":"):
            continue
        else:
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                kind = value
            elif field == "data":
                data.append(value)


class StreamSource:
    """Kiln's live event stream, read by a daemon thread into a queue."""

    streaming = True

    def __init__(self, api: HeatAPI, ref: str, marker: str | None,
                 nested_depth: int = 0) -> None:
        self._queue: queue.Queue[JSON | Exception | None] = queue.Queue()
        self._client = httpx.Client(timeout=httpx.Timeout(30.0, read=STREAM_READ_TIMEOUT),
                                    verify=api.verify, follow_redirects=True)
        params = {"stream": "true", **({"marker": marker} if marker else {}),
                  **({"nested_depth": str(nested_depth)} if nested_depth else {})}
        headers = {"Accept": "text/event-stream", **api.auth_headers()}
        request = self._client.build_request("GET", f"{api.endpoint}/stacks/{ref}/events",
                                             params=params, headers=headers)
        try:
            self._response = self._client.send(request, stream=True)
        except httpx.HTTPError as exc:
            self._client.close()
            raise StreamUnavailable(str(exc)) from exc
        kind = self._response.headers.get("content-type", "")
        if self._response.status_code != 200 or not kind.startswith("text/event-stream"):
            self.close()
            raise StreamUnavailable(f"no event stream ({self._response.status_code} {kind})")
        self.ended = False
        threading.Thread(target=self._read, name="kiln-event-stream", daemon=True).start()

    def _read(self) -> None:
        try:
            for kind, data in _messages(self._response.iter_lines()):
                if kind == "event":
                    self._queue.put(json.loads(data))
                elif kind == "end":
                    break
            self._queue.put(None)
        except Exception as exc:  # stream broke: the watcher polls instead  # noqa: BLE001
            self._queue.put(exc)

    def fetch(self, marker: str | None, wait: float) -> list[JSON]:
        events: list[JSON] = []
        block = True
        while True:
            try:
                item = self._queue.get(block=block, timeout=wait if block else None)
            except queue.Empty:
                return events
            block = False
            if item is None:
                self.ended = True
                return events
            if isinstance(item, Exception):
                if events:  # deliver what came before the break; report it next time
                    self._queue.put(item)
                    return events
                raise StreamUnavailable(str(item))
            events.append(item)

    def close(self) -> None:
        # closing under the reader thread may raise there (it reports and ends) or here
        with contextlib.suppress(Exception):
            self._response.close()
        self._client.close()


def open_source(api: HeatAPI, ref: str, marker: str | None,
                nested_depth: int = 0) -> EventSource:
    """The live stream if the endpoint has one (with the events of nested stacks down to
    ``nested_depth``), else polling (the stack's own resources only)."""
    try:
        return StreamSource(api, ref, marker, nested_depth)
    except StreamUnavailable:
        return PollingSource(api, ref)
