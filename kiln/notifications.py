"""The seam through which the engine announces stack actions to the outside (Heat's
notifications: ``orchestration.stack.<action>.start/end/error`` and
``orchestration.autoscaling.start/end/error``).

The engine builds the payload and calls :meth:`Notifier.send`; what carries it (oslo.messaging
to RabbitMQ, :mod:`kiln.oslo_notifier`) is chosen by the process wiring, so the engine never
imports a messaging library and the all-in-one server, with no driver configured, pays
nothing: :data:`NULL` is the default and callers check :attr:`Notifier.enabled` before
building a payload. ``send`` must return at once and never raise (notifications are
best-effort in Heat too): an action must not wait for, or fail because of, a broker.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

#: oslo.messaging's priorities, as Heat uses them
INFO, ERROR = "INFO", "ERROR"


class Notifier(Protocol):
    """Where notifications go; implementations hand them to another thread."""

    @property
    def enabled(self) -> bool: ...

    def send(self, event_type: str, priority: str, payload: Mapping[str, Any],
             context: Mapping[str, Any]) -> None:
        """Queue one notification; never blocks, never raises."""

    def close(self) -> None:
        """Send what is queued (for a bounded time), then stop."""


class NullNotifier:
    """No driver configured: nothing is built, nothing is sent."""

    enabled = False

    def send(self, event_type: str, priority: str, payload: Mapping[str, Any],
             context: Mapping[str, Any]) -> None:
        return None

    def close(self) -> None:
        return None


NULL: Notifier = NullNotifier()


def stack_event(action: str, status: str) -> tuple[str, str]:
    """(event type, priority) of a stack state, as Heat names them: IN_PROGRESS is
    ``start``, COMPLETE ``end``, anything else ``error`` at ERROR priority."""
    if status == "IN_PROGRESS":
        suffix, priority = "start", INFO
    elif status == "COMPLETE":
        suffix, priority = "end", INFO
    else:
        suffix, priority = "error", ERROR
    return f"orchestration.stack.{action.lower()}.{suffix}", priority


def autoscaling_event(suffix: str) -> tuple[str, str]:
    """(event type, priority) of a group resize's ``start``, ``end`` or ``error``."""
    return f"orchestration.autoscaling.{suffix}", ERROR if suffix == "error" else INFO
