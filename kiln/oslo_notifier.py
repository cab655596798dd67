"""Heat's notifications over oslo.messaging: the options and the sending thread.

Operators configure Heat's notifications with oslo.messaging's own options
(``[DEFAULT] transport_url``, ``[oslo_messaging_notifications] driver/topics/...``,
``[oslo_messaging_rabbit]``), so Kiln reads exactly those, registered by oslo.messaging
itself. oslo.messaging is imported only when a configuration file sets one of them (or
``kiln config-reference`` lists them): ``kiln serve`` with no broker neither imports it nor
starts a thread. Sending blocks on the broker (and retries as ``retry`` says), so it happens
on one thread of its own fed by a bounded queue; when the queue is full (a broker down for
long) notifications are dropped and logged, as they are best-effort in Heat too.
"""

from __future__ import annotations

import logging
import queue
import threading
import warnings
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any

from oslo_config import cfg

from kiln.notifications import ERROR, NULL, Notifier

LOG = logging.getLogger(__name__)

#: the config file sections and [DEFAULT] keys that mean "notifications are configured"
SECTIONS = frozenset({"oslo_messaging_notifications", "oslo_messaging_rabbit"})
DEFAULT_KEYS = frozenset({"transport_url", "control_exchange", "rpc_response_timeout"})

#: notifications waiting for the broker before new ones are dropped
QUEUE_SIZE = 10000
#: seconds a stopping server gives the queue to drain
CLOSE_TIMEOUT = 5.0


def _oslo_messaging() -> ModuleType:
    # oslo.messaging pulls in eventlet (through oslo.service and futurist), which warns
    # on import although nothing here uses it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import oslo_messaging
    module: ModuleType = oslo_messaging
    return module


def wanted(sections: Mapping[str, Iterable[str]]) -> bool:
    """Whether a config file's sections set any messaging option."""
    for name, keys in sections.items():
        if name.lower() in SECTIONS or (name == "DEFAULT" and DEFAULT_KEYS & set(keys)):
            return True
    return False


def register_options(conf: cfg.ConfigOpts, *, reference_only: bool = False) -> None:
    """Register oslo.messaging's options Heat's operators set, with Heat's default
    exchange (``control_exchange = heat``). ``reference_only`` leaves out
    ``[oslo_messaging_rabbit]`` (oslo.messaging documents those)."""
    om = _oslo_messaging()
    om.set_transport_defaults("heat")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from oslo_messaging import opts  # after the default is set: list_opts copies them

    for group, group_opts in opts.list_opts():
        if group is None:
            conf.register_opts([o for o in group_opts if o.dest in DEFAULT_KEYS])
        elif group == "oslo_messaging_notifications" or (
                group == "oslo_messaging_rabbit" and not reference_only):
            conf.register_opts(group_opts, group=group)


def build_notifier(conf: cfg.ConfigOpts) -> Notifier:
    """The oslo.messaging notifier when ``[oslo_messaging_notifications] driver`` is set,
    else :data:`~kiln.notifications.NULL` (nothing imported, nothing sent)."""
    if "oslo_messaging_notifications" not in conf:
        return NULL
    drivers = [d for d in conf.oslo_messaging_notifications.driver if d and d != "noop"]
    if not drivers:
        return NULL
    return OsloNotifier(conf)


class OsloNotifier:
    """Sends on its own thread; :meth:`send` only queues."""

    enabled = True

    def __init__(self, conf: cfg.ConfigOpts, *, queue_size: int = QUEUE_SIZE) -> None:
        om = _oslo_messaging()
        self._transport = om.get_notification_transport(conf)
        # the publisher Heat uses: its service name and this host
        publisher = conf.default_publisher_id or f"orchestration.{conf.host}"
        self._notifier = om.Notifier(self._transport, publisher_id=publisher)
        self._level = str(conf.default_notification_level).lower()
        self._queue: queue.Queue[tuple[str, str, Mapping[str, Any], Mapping[str, Any]]
                                 | None] = queue.Queue(queue_size)
        self._dropped = 0
        self._thread = threading.Thread(target=self._run, name="kiln-notifications",
                                        daemon=True)
        self._thread.start()

    def send(self, event_type: str, priority: str, payload: Mapping[str, Any],
             context: Mapping[str, Any]) -> None:
        try:
            self._queue.put_nowait((event_type, priority, payload, context))
        except queue.Full:
            self._dropped += 1
            if self._dropped == 1 or self._dropped % 1000 == 0:
                LOG.warning("notification queue full (broker unreachable?): %d "
                            "notifications dropped, the latest %s", self._dropped, event_type)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                break
            event_type, priority, payload, context = item
            level = "error" if priority == ERROR else self._level
            method = getattr(self._notifier, level, self._notifier.info)
            try:
                method(dict(context), event_type, dict(payload))
            except Exception as exc:  # noqa: BLE001 - best-effort: an outage drops it
                LOG.warning("notification %s not sent: %s", event_type, exc)
        try:
            self._transport.cleanup()
        except Exception as exc:  # noqa: BLE001
            LOG.warning("closing the notification transport failed: %s", exc)

    def close(self) -> None:
        try:
            self._queue.put(None, timeout=CLOSE_TIMEOUT)
        except queue.Full:
            LOG.warning("notifications still queued at shutdown are dropped")
            return
        self._thread.join(CLOSE_TIMEOUT)
