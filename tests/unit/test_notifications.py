"""The notification seam without a broker: Heat's event types and priorities, the options
oslo.messaging registers (only when a file sets them), which notifier a configuration
gets, and a notifier that sends through oslo.messaging's in-memory ``fake://`` transport."""

from __future__ import annotations

from pathlib import Path

import pytest
from oslo_config import cfg

from kiln import notifications, oslo_notifier
from kiln.conf import default_opts
from kiln.conf_loader import _register_messaging


@pytest.mark.parametrize(("action", "status", "event_type", "priority"), [
    ("CREATE", "IN_PROGRESS", "orchestration.stack.create.start", "INFO"),
    ("UPDATE", "COMPLETE", "orchestration.stack.update.end", "INFO"),
    ("DELETE", "FAILED", "orchestration.stack.delete.error", "ERROR"),
    ("ROLLBACK", "COMPLETE", "orchestration.stack.rollback.end", "INFO"),
])
def test_stack_states_are_heats_event_types(action: str, status: str, event_type: str,
                                            priority: str) -> None:
    assert notifications.stack_event(action, status) == (event_type, priority)


def test_autoscaling_error_is_sent_at_error_priority() -> None:
    assert notifications.autoscaling_event("start") == ("orchestration.autoscaling.start",
                                                        "INFO")
    assert notifications.autoscaling_event("error") == ("orchestration.autoscaling.error",
                                                        "ERROR")


def fresh() -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    conf.register_opts(default_opts)
    conf.set_default("host", "node-1")
    return conf


def sent_through_oslo(**defaults: str) -> list[tuple[str, str, str, dict[str, object]]]:
    """(event type, priority, publisher, payload) of what a notifier with oslo.messaging's
    in-memory ``test`` driver sent for one INFO and one ERROR notification."""
    oslo_notifier._oslo_messaging()  # imported with its import-time warnings silenced
    from oslo_messaging.notify import _impl_test

    conf = fresh()
    oslo_notifier.register_options(conf)
    conf([])
    for name, value in defaults.items():
        conf.set_override(name, value)
    conf.set_override("driver", ["test"], group="oslo_messaging_notifications")
    conf.set_override("transport_url", "fake://", group="oslo_messaging_notifications")
    _impl_test.reset()
    notifier = oslo_notifier.build_notifier(conf)
    notifier.send("orchestration.stack.create.end", "INFO", {"stack_name": "s"}, {})
    notifier.send("orchestration.stack.create.error", "ERROR", {"stack_name": "s"}, {})
    notifier.close()
    return [(m["event_type"], priority, m["publisher_id"], m["payload"])
            for _ctx, m, priority, _retry in _impl_test.NOTIFICATIONS]


def test_heats_publisher_and_priorities() -> None:
    assert sent_through_oslo() == [
        ("orchestration.stack.create.end", "INFO", "orchestration.node-1", {"stack_name": "s"}),
        ("orchestration.stack.create.error", "ERROR", "orchestration.node-1",
         {"stack_name": "s"}),
    ]


def test_heats_default_publisher_id_and_notification_level() -> None:
    sent = sent_through_oslo(default_publisher_id="heat.cloud-a",
                             default_notification_level="WARN")
    assert [(priority, publisher) for _, priority, publisher, _ in sent] == [
        ("WARN", "heat.cloud-a"), ("ERROR", "heat.cloud-a")]


@pytest.mark.parametrize(("text", "wanted"), [
    ("[DEFAULT]\ndebug = true\n[database]\nconnection = sqlite://\n", False),
    ("[DEFAULT]\ntransport_url = rabbit://h/\n", True),
    ("[oslo_messaging_notifications]\ndriver = messagingv2\n", True),
    ("[oslo_messaging_rabbit]\nheartbeat_timeout_threshold = 30\n", True),
])
def test_messaging_options_are_registered_only_when_a_file_sets_one(
        tmp_path: Path, text: str, wanted: bool) -> None:
    path = tmp_path / "kiln.conf"
    path.write_text(text)
    conf = fresh()
    _register_messaging([str(path)], conf)
    assert ("oslo_messaging_notifications" in conf) is wanted


def test_no_driver_is_the_null_notifier() -> None:
    conf = fresh()
    assert oslo_notifier.build_notifier(conf) is notifications.NULL  # nothing registered
    oslo_notifier.register_options(conf)
    conf([])
    assert conf.control_exchange == "heat"  # Heat's exchange, as heat-engine sets it
    assert conf.oslo_messaging_notifications.topics == ["notifications"]
    assert oslo_notifier.build_notifier(conf) is notifications.NULL
    conf.set_override("driver", ["noop"], group="oslo_messaging_notifications")
    assert oslo_notifier.build_notifier(conf) is notifications.NULL


def test_a_configured_driver_sends_from_its_thread() -> None:
    conf = fresh()
    oslo_notifier.register_options(conf)
    conf([])
    conf.set_override("driver", ["messagingv2"], group="oslo_messaging_notifications")
    conf.set_override("transport_url", "fake://", group="oslo_messaging_notifications")
    notifier = oslo_notifier.build_notifier(conf)
    assert notifier.enabled
    assert notifier._queue.maxsize == 10000  # type: ignore[attr-defined]  # docs/notifications.md's bound
    notifier.send("orchestration.stack.create.start", "INFO", {"stack_name": "s"},
                  {"user_id": "u"})
    notifier.close()
    assert not notifier._thread.is_alive()  # type: ignore[attr-defined]


def test_a_full_queue_drops_and_logs_instead_of_blocking(
        caplog: pytest.LogCaptureFixture) -> None:
    import threading

    conf = fresh()
    oslo_notifier.register_options(conf)
    conf([])
    conf.set_override("driver", ["messagingv2"], group="oslo_messaging_notifications")
    conf.set_override("transport_url", "fake://", group="oslo_messaging_notifications")
    notifier = oslo_notifier.OsloNotifier(conf, queue_size=1)
    sending, release = threading.Event(), threading.Event()

    def stuck(*args: object) -> None:  # a broker that does not answer
        sending.set()
        release.wait(10)

    notifier._notifier.info = stuck  # type: ignore[method-assign]
    notifier.send("first", "INFO", {}, {})
    assert sending.wait(10)
    with caplog.at_level("WARNING", logger="kiln.oslo_notifier"):
        notifier.send("queued", "INFO", {}, {})
        notifier.send("dropped", "INFO", {}, {})  # returns at once
    assert "1 notifications dropped, the latest dropped" in caplog.text
    release.set()
    notifier.close()
