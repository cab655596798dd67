"""A reader of server-sent events over a real HTTP connection (httpx), for tests.

Parses the ``text/event-stream`` format as a browser's EventSource does (fields ``id``,
``event``, ``data``; comments skipped; a blank line ends a message), message by message,
so a test can act between two messages while the response stays open.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx


@dataclass
class Message:
    event: str
    data: str
    id: str | None

    def json(self) -> Any:
        return json.loads(self.data)


class EventStream:
    """An open stream: ``next_message()`` blocks until the next message (bounded by the
    client's read timeout, so a stream that stops delivering fails the test)."""

    def __init__(self, client: httpx.Client, url: str, *,
                 headers: dict[str, str] | None = None) -> None:
        self._cm = client.stream("GET", url, headers=headers, follow_redirects=True)
        self.response = self._cm.__enter__()
        self._lines: Iterator[str] = self.response.iter_lines()
        self.comments: list[str] = []

    def close(self) -> None:
        self._cm.__exit__(None, None, None)

    def __enter__(self) -> EventStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def next_message(self) -> Message | None:
        """The next message, or None when the server ended the response."""
        event, data, last_id = "message", [], None
        for line in self._lines:
            if line == "":
                if data:
                    return Message(event, "\n".join(data), last_id)
                event, last_id = "message", None
                continue
            if line.startswith(":"):
                self.comments.append(line[1:].strip())
                continue
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "event":
                event = value
            elif name == "data":
                data.append(value)
            elif name == "id":
                last_id = value
        return None

    def until(self, predicate: Callable[[Message], bool]) -> list[Message]:
        """Messages up to and including the first one ``predicate`` accepts."""
        seen: list[Message] = []
        while True:
            msg = self.next_message()
            if msg is None:
                raise AssertionError(f"stream ended before the awaited message; got {seen}")
            seen.append(msg)
            if predicate(msg):
                return seen
