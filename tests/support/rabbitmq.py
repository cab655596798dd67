"""A notification consumer on the machine's RabbitMQ (kombu, as a telemetry service
would read Heat's notifications).

Each listener binds its own exclusive queue to the ``heat`` exchange for one topic that
only its test uses, so parallel tests and other users of the shared broker never see each
other's messages; the queues oslo.messaging declares for that topic are deleted after.
RabbitMQ absent: the test skips, or fails under ``KILN_REQUIRE_SERVICES=1``.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import uuid
from collections.abc import Callable
from typing import Any

from tests.support.services import unavailable

URL = os.environ.get("KILN_TEST_RABBIT_URL", "amqp://guest:guest@127.0.0.1:5672//")
#: what the server is configured with for the same broker
TRANSPORT_URL = "rabbit://guest:guest@127.0.0.1:5672/"


class NotificationListener:
    """Notifications on ``<topic>.*`` of the ``heat`` exchange, unwrapped from oslo's
    messaging v2 envelope; ``routing_key`` is kept with each."""

    def __init__(
        self, topic: str | None = None, *, exchange: str = "heat", auto_delete: bool = False
    ) -> None:
        """``exchange``: the servers' ``control_exchange`` (Heat's default ``heat``);
        ``auto_delete`` as their ``[oslo_messaging_rabbit] amqp_auto_delete`` (RabbitMQ
        refuses to declare one exchange two ways)."""
        import kombu

        self.topic = topic or f"kiln-test-{uuid.uuid4().hex[:12]}"
        self.messages: list[dict[str, Any]] = []
        self._conn = kombu.Connection(URL, connect_timeout=5)
        try:
            self._conn.ensure_connection(max_retries=1)
        except Exception as exc:  # noqa: BLE001 - any failure to reach it is "absent"
            unavailable(f"RabbitMQ not reachable at {URL}: {exc}")
        exchange = kombu.Exchange(exchange, type="topic", durable=False, auto_delete=auto_delete)
        queue = kombu.Queue(
            f"{self.topic}-listener",
            exchange,
            routing_key=f"{self.topic}.*",
            exclusive=True,
            auto_delete=True,
        )
        self._consumer = kombu.Consumer(
            self._conn, queues=[queue], callbacks=[self._received], accept=["json"]
        )
        self._consumer.consume()

    def _received(self, body: Any, message: Any) -> None:
        envelope = json.loads(body) if isinstance(body, str | bytes) else body
        inner = json.loads(envelope["oslo.message"])
        inner["routing_key"] = message.delivery_info["routing_key"]
        inner["oslo.version"] = envelope["oslo.version"]
        self.messages.append(inner)
        message.ack()

    def wait_for(
        self,
        event_type: str,
        match: Callable[[dict[str, Any]], bool] = lambda m: True,
        timeout: float = 30.0,
    ) -> dict[str, Any]:
        """The first notification of ``event_type`` that ``match`` accepts (waiting for it
        to arrive)."""
        deadline = time.monotonic() + timeout
        while True:
            for m in self.messages:
                if m["event_type"] == event_type and match(m):
                    return m
            left = deadline - time.monotonic()
            if left <= 0:
                seen = [(m["event_type"], m["payload"].get("stack_name")) for m in self.messages]
                raise AssertionError(f"no {event_type} within {timeout}s; got {seen}")
            with contextlib.suppress(TimeoutError):
                self._conn.drain_events(timeout=min(left, 1.0))

    def event_types(self, stack_id: str) -> list[str]:
        return [
            m["event_type"] for m in self.messages if m["payload"].get("stack_identity") == stack_id
        ]

    def close(self) -> None:
        try:
            for priority in ("info", "error"):
                # a queue that was never declared is an error that closes the channel
                with contextlib.suppress(Exception):
                    channel = self._conn.channel()
                    channel.queue_delete(f"{self.topic}.{priority}")
                    channel.close()
        finally:
            self._conn.release()
