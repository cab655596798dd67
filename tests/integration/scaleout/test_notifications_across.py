"""Heat's notifications from a deployment of ``kiln api`` and ``kiln engine`` processes,
read by a consumer on the machine's RabbitMQ (kombu), as telemetry reads Heat's: every
stack action sent through the API processes and run by the engine gives its
``orchestration.stack.<action>.start`` and ``.end`` exactly once each (the API process
admitting an action and the engine running it do not both announce its start), in
oslo.messaging's v2 envelope with Heat's payload keys and ``orchestration.<host>`` as
publisher; a scaling signal gives ``orchestration.autoscaling.start``/``.end``."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from typing import Any

from tests.functional.test_notifications import ADDED_KEYS, AUTOSCALING_KEYS, GROUP, HEAT_KEYS
from tests.integration.scaleout.conftest import Cluster, wait_for
from tests.support.clients import heat_client
from tests.support.rabbitmq import NotificationListener

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "parameters": {"value": {"type": "string", "default": "one"}},
    "resources": {
        "r": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "value"}}}
    },
}


@contextlib.contextmanager
def _notifying(cluster: Cluster) -> Iterator[NotificationListener]:
    """A consumer of ``cluster``'s notifications (on its ``control_exchange``, as Heat
    sends them), its processes configured to send them, and an engine started."""
    listener = NotificationListener(exchange=cluster.exchange, auto_delete=True)
    try:
        cluster.extra = {
            "oslo_messaging_notifications": {"driver": "messagingv2", "topics": listener.topic}
        }
        cluster.engine()
        yield listener
    finally:
        listener.close()


def _settled(hc: Any, sid: str) -> Any:
    return wait_for(
        lambda: (lambda s: s if not s.stack_status.endswith("IN_PROGRESS") else None)(
            hc.stacks.get(sid)
        ),
        60,
        f"stack {sid}",
    )


def test_every_action_is_announced_once_by_the_deployment(
    sqlite_url: str,
    cluster_factory: Callable[[str], Cluster],
) -> None:
    cluster = cluster_factory(sqlite_url)
    with _notifying(cluster) as listener:
        h1 = heat_client(cluster.api().endpoint("demo"))
        h2 = heat_client(cluster.api().endpoint("demo"))
        sid = h1.stacks.create(stack_name="told", template=TEMPLATE)["stack"]["id"]
        _settled(h2, sid)
        h2.stacks.update(sid, template=TEMPLATE, parameters={"value": "two"})
        _settled(h1, sid)
        for call in (h1.actions.suspend, h2.actions.resume, h1.actions.check):
            call(sid)
            _settled(h2, sid)
        snap = h2.stacks.snapshot(sid)["id"]
        wait_for(
            lambda: h1.stacks.snapshot_show(sid, snap)["snapshot"]["status"] == "COMPLETE",
            60,
            "the snapshot",
        )
        h1.stacks.restore(sid, snap)
        _settled(h2, sid)
        data = h2.stacks.abandon(sid)
        adopted = h1.stacks.create(
            stack_name="adopted", adopt_stack_data=json.dumps(data), template=TEMPLATE
        )["stack"]["id"]
        _settled(h2, adopted)
        h2.stacks.delete(adopted)

        def of(stack_id: str) -> Callable[[dict[str, Any]], bool]:
            return lambda m: bool(m["payload"]["stack_identity"] == stack_id)

        listener.wait_for("orchestration.stack.delete.end", of(adopted))
        actions = ("create", "update", "suspend", "resume", "check", "snapshot", "restore")
        for action in actions:
            for suffix in ("start", "end"):
                message = listener.wait_for(f"orchestration.stack.{action}.{suffix}", of(sid))
                assert message["oslo.version"] == "2.0"
                assert message["priority"] == "INFO"
                assert message["publisher_id"] == "orchestration.kiln"
                assert message["routing_key"] == f"{listener.topic}.info"
                assert set(message["payload"]) == HEAT_KEYS | ADDED_KEYS
            assert message["payload"]["state"] == f"{action.upper()}_COMPLETE"
        for action in ("adopt", "delete"):
            for suffix in ("start", "end"):
                listener.wait_for(f"orchestration.stack.{action}.{suffix}", of(adopted))
        # each once: the API's admission and the engine's run are one action
        for stack_id in (sid, adopted):
            seen = listener.event_types(stack_id)
            assert not {t for t in seen if seen.count(t) > 1}, seen


def test_a_scaling_signal_through_the_api_is_announced(
    sqlite_url: str,
    cluster_factory: Callable[[str], Cluster],
) -> None:
    cluster = cluster_factory(sqlite_url)
    with _notifying(cluster) as listener:
        hc = heat_client(cluster.api().endpoint("demo"))
        sid = hc.stacks.create(stack_name="scaled", template=GROUP)["stack"]["id"]
        assert _settled(hc, sid).stack_status == "CREATE_COMPLETE"
        hc.resources.signal(sid, "scale_up")

        def ours(m: dict[str, Any]) -> bool:
            return bool(m["payload"]["stack_identity"] == sid)

        start = listener.wait_for("orchestration.autoscaling.start", ours)
        end = listener.wait_for("orchestration.autoscaling.end", ours)
        for message in (start, end):
            assert set(message["payload"]) == HEAT_KEYS | ADDED_KEYS | AUTOSCALING_KEYS
            assert message["payload"]["adjustment"] == 1
        assert (start["payload"]["capacity"], end["payload"]["capacity"]) == (1, 2)
