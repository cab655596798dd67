"""Heat's notifications from a real ``kiln serve`` to the machine's RabbitMQ, read by a
consumer on the broker (kombu) as a telemetry or billing service reads Heat's.

The server is configured as a Heat operator configures Heat (``[oslo_messaging_notifications]
driver = messagingv2``, ``transport_url``) with a topic of its own, so the test shares the
broker with others safely.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.clients import heat_client, wait_for_stack_status
from tests.support.ports import free_port
from tests.support.rabbitmq import TRANSPORT_URL, NotificationListener
from tests.support.server import KilnProcess, start_kiln

HOST = "kiln-notify-test"

TEMPLATE = """heat_template_version: 2021-04-16
description: notified stack
parameters:
  value: {type: string, default: one}
resources:
  a: {type: OS::Heat::Value, properties: {value: {get_param: value}}}
"""

FAILING = """heat_template_version: 2021-04-16
resources:
  broken: {type: OS::Heat::TestResource, properties: {fail: true}}
"""

GROUP = """heat_template_version: 2021-04-16
resources:
  group:
    type: OS::Heat::AutoScalingGroup
    properties:
      min_size: 1
      max_size: 3
      resource: {type: OS::Heat::None}
  scale_up:
    type: OS::Heat::ScalingPolicy
    properties:
      auto_scaling_group_id: {get_resource: group}
      adjustment_type: change_in_capacity
      scaling_adjustment: 1
      cooldown: 0
"""

#: Heat 27's body (heat.engine.api.format_notification_body) and what Kiln adds
HEAT_KEYS = {"tenant_id", "user_id", "user_identity", "username", "stack_identity",
             "stack_name", "state", "state_reason", "create_at", "updated_at", "tags",
             "description"}
ISOTIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"  # Heat's isotime
ADDED_KEYS = {"name", "root_stack_id", "parent"}
AUTOSCALING_KEYS = {"adjustment", "adjustment_type", "capacity", "groupname", "message"}


@pytest.fixture(scope="module")
def listener() -> Iterator[NotificationListener]:
    lis = NotificationListener()
    yield lis
    lis.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory,
           listener: NotificationListener) -> Iterator[KilnProcess]:
    proc = start_kiln(tmp_path_factory.mktemp("kiln"), options={
        # the notifications' own transport_url unset: [DEFAULT]'s is used, as in Heat
        "DEFAULT": {"host": HOST, "transport_url": TRANSPORT_URL},
        "oslo_messaging_notifications": {"driver": "messagingv2",
                                         "topics": listener.topic}})
    yield proc
    assert proc.stop() == 0, proc.logs()


@pytest.fixture(scope="module")
def heat(server: KilnProcess) -> Any:
    return heat_client(server.endpoint("demo"))


def create(heat: Any, name: str, template: str, **kwargs: Any) -> str:
    stack_id: str = heat.stacks.create(stack_name=name, template=template,
                                       **kwargs)["stack"]["id"]
    return stack_id


def wait_until_deleted(heat: Any, stack_id: str) -> None:
    from heatclient import exc

    with contextlib.suppress(exc.HTTPNotFound):
        assert wait_for_stack_status(heat, stack_id).stack_status == "DELETE_COMPLETE"


def test_create_sends_start_and_end_with_heats_body_and_publisher(
        heat: Any, listener: NotificationListener) -> None:
    stack_id = create(heat, "notified", TEMPLATE, tags="billing,blue")
    wait_for_stack_status(heat, stack_id)

    def ours(m: dict[str, Any]) -> bool:
        return bool(m["payload"]["stack_identity"] == stack_id)

    start = listener.wait_for("orchestration.stack.create.start", ours)
    end = listener.wait_for("orchestration.stack.create.end", ours)
    for message in (start, end):
        assert message["oslo.version"] == "2.0"
        assert message["publisher_id"] == f"orchestration.{HOST}"
        assert message["priority"] == "INFO"
        assert message["routing_key"] == f"{listener.topic}.info"
        assert set(message["payload"]) == HEAT_KEYS | ADDED_KEYS
    assert listener.event_types(stack_id).index("orchestration.stack.create.start") < \
        listener.event_types(stack_id).index("orchestration.stack.create.end")
    body = end["payload"]
    assert body["state"] == "CREATE_COMPLETE"
    assert body["state_reason"] == "Stack CREATE completed successfully"
    assert start["payload"]["state"] == "CREATE_IN_PROGRESS"
    assert body["stack_name"] == body["name"] == "notified"
    assert body["tenant_id"] == "demo"
    assert body["description"] == "notified stack"
    assert body["tags"] == ["billing", "blue"]
    assert body["root_stack_id"] == stack_id and body["parent"] is None
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", body["create_at"])
    assert body["updated_at"] is None


def test_update_suspend_resume_and_delete_send_start_and_end(
        heat: Any, listener: NotificationListener) -> None:
    stack_id = create(heat, "lifecycle", TEMPLATE)
    wait_for_stack_status(heat, stack_id)
    heat.stacks.update(stack_id, template=TEMPLATE, parameters={"value": "two"})
    wait_for_stack_status(heat, stack_id)
    heat.actions.suspend(stack_id)
    wait_for_stack_status(heat, stack_id)
    heat.actions.resume(stack_id)
    wait_for_stack_status(heat, stack_id)
    heat.stacks.delete(stack_id)

    def ours(m: dict[str, Any]) -> bool:
        return bool(m["payload"]["stack_identity"] == stack_id)

    for action in ("update", "suspend", "resume", "delete"):
        listener.wait_for(f"orchestration.stack.{action}.start", ours)
        end = listener.wait_for(f"orchestration.stack.{action}.end", ours)
        assert end["payload"]["state"] == f"{action.upper()}_COMPLETE"
        assert re.fullmatch(ISOTIME, end["payload"]["create_at"])
    updated = listener.wait_for("orchestration.stack.update.end", ours)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", updated["payload"]["updated_at"])


def test_a_failed_create_sends_error_at_error_priority(
        heat: Any, listener: NotificationListener) -> None:
    stack_id = create(heat, "failing", FAILING)
    wait_for_stack_status(heat, stack_id)
    error = listener.wait_for("orchestration.stack.create.error",
                              lambda m: bool(m["payload"]["stack_identity"] == stack_id))
    assert error["priority"] == "ERROR"
    assert error["routing_key"] == f"{listener.topic}.error"
    assert error["payload"]["state"] == "CREATE_FAILED"
    assert "orchestration.stack.create.end" not in listener.event_types(stack_id)


def test_a_scaling_signal_sends_autoscaling_start_and_end(
        heat: Any, listener: NotificationListener) -> None:
    stack_id = create(heat, "scaled", GROUP)
    wait_for_stack_status(heat, stack_id)
    heat.resources.signal(stack_id, "scale_up")

    def ours(m: dict[str, Any]) -> bool:
        return bool(m["payload"]["stack_identity"] == stack_id)

    start = listener.wait_for("orchestration.autoscaling.start", ours)
    end = listener.wait_for("orchestration.autoscaling.end", ours)
    group = heat.resources.get(stack_id, "group").physical_resource_id
    for message in (start, end):
        assert message["priority"] == "INFO"
        assert message["publisher_id"] == f"orchestration.{HOST}"
        assert set(message["payload"]) == HEAT_KEYS | ADDED_KEYS | AUTOSCALING_KEYS
        assert message["payload"]["adjustment"] == 1
        assert message["payload"]["adjustment_type"] == "change_in_capacity"
        assert message["payload"]["groupname"] == group
    assert start["payload"]["capacity"] == 1
    assert start["payload"]["message"] == f"Start resizing the group {group}"
    assert end["payload"]["capacity"] == 2
    assert end["payload"]["message"] == f"End resizing the group {group}"


def test_a_broker_that_cannot_be_reached_fails_no_action(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """Notifications are best-effort: with nothing listening at the transport's address
    the stack is still created and deleted, each notification is logged as not sent, and
    the server stops cleanly."""
    proc = start_kiln(tmp_path_factory.mktemp("kiln"), options={
        "oslo_messaging_notifications": {
            "driver": "messagingv2", "retry": 0,
            "transport_url": f"rabbit://guest:guest@127.0.0.1:{free_port()}/"}})
    try:
        heat = heat_client(proc.endpoint("demo"))
        stack_id = create(heat, "unheard", TEMPLATE)
        assert wait_for_stack_status(heat, stack_id).stack_status == "CREATE_COMPLETE"
        heat.stacks.delete(stack_id)
        wait_until_deleted(heat, stack_id)
    finally:
        assert proc.stop() == 0, proc.logs()
    # each one dropped is logged (by oslo.messaging, as in Heat)
    logs = proc.logs()
    assert "Could not send notification" in logs and "orchestration.stack.delete.end" in logs


def test_check_snapshot_and_restore_send_start_and_end(
        heat: Any, listener: NotificationListener) -> None:
    stack_id = create(heat, "kept", TEMPLATE)
    wait_for_stack_status(heat, stack_id)
    heat.actions.check(stack_id)
    wait_for_stack_status(heat, stack_id)
    snapshot = heat.stacks.snapshot(stack_id)["id"]
    wait_for_stack_status(heat, stack_id)
    heat.stacks.restore(stack_id, snapshot)
    wait_for_stack_status(heat, stack_id)

    def ours(m: dict[str, Any]) -> bool:
        return bool(m["payload"]["stack_identity"] == stack_id)

    for action in ("check", "snapshot", "restore"):
        listener.wait_for(f"orchestration.stack.{action}.start", ours)
        end = listener.wait_for(f"orchestration.stack.{action}.end", ours)
        assert end["payload"]["state"] == f"{action.upper()}_COMPLETE"
        assert re.fullmatch(ISOTIME, end["payload"]["create_at"])


def test_a_failed_create_with_rollback_sends_the_rollbacks_start_and_end(
        heat: Any, listener: NotificationListener) -> None:
    stack_id = create(heat, "rolled-back", FAILING, disable_rollback=False)

    def ours(m: dict[str, Any]) -> bool:
        return bool(m["payload"]["stack_identity"] == stack_id)

    listener.wait_for("orchestration.stack.create.error", ours)
    listener.wait_for("orchestration.stack.rollback.start", ours)
    end = listener.wait_for("orchestration.stack.rollback.end", ours)
    assert end["payload"]["state"] == "ROLLBACK_COMPLETE"


def test_a_nested_stack_names_its_parent_and_root(
        heat: Any, listener: NotificationListener) -> None:
    template = """heat_template_version: 2021-04-16
resources:
  inner: {type: child.yaml}
"""
    child_template = """heat_template_version: 2021-04-16
resources: {v: {type: OS::Heat::None}}
"""
    stack_id = create(heat, "outer", template, files={"child.yaml": child_template})
    wait_for_stack_status(heat, stack_id)
    child = heat.resources.get(stack_id, "inner").physical_resource_id
    end = listener.wait_for("orchestration.stack.create.end",
                            lambda m: bool(m["payload"]["stack_identity"] == child))
    assert end["payload"]["parent"] == stack_id
    assert end["payload"]["root_stack_id"] == stack_id


def test_a_failed_resize_sends_autoscaling_error_at_error_priority(
        heat: Any, listener: NotificationListener) -> None:
    template = GROUP.replace("min_size: 1", "min_size: 0").replace(
        "resource: {type: OS::Heat::None}",
        "resource: {type: OS::Heat::TestResource, properties: {fail: true}}")
    stack_id = create(heat, "scaled-badly", template)
    assert wait_for_stack_status(heat, stack_id).stack_status == "CREATE_COMPLETE"
    heat.resources.signal(stack_id, "scale_up")

    def ours(m: dict[str, Any]) -> bool:
        return bool(m["payload"]["stack_identity"] == stack_id)

    listener.wait_for("orchestration.autoscaling.start", ours)
    error = listener.wait_for("orchestration.autoscaling.error", ours)
    assert error["priority"] == "ERROR"
    assert error["routing_key"] == f"{listener.topic}.error"
    assert error["payload"]["message"]  # what went wrong, as Heat sends it
    assert "orchestration.autoscaling.end" not in listener.event_types(stack_id)
