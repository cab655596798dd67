"""Autoscaling through a real ``kiln serve`` and the real clients: the ``openstack`` CLI
creates a group and a policy, ``openstack stack resource signal`` and a POST to the
policy's ``signal_url`` (heatclient's session) resize it, and the group's attributes,
members and metadata show it as Heat 27 would."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.clients import OpenStackCLI
from tests.support.ports import free_port
from tests.support.server import KilnProcess, start_kiln

pytestmark = pytest.mark.slow  # each CLI call starts a Python process

TEMPLATE = """heat_template_version: 2021-04-16
parameters:
  cooldown: {type: number, default: 0}
resources:
  group:
    type: OS::Heat::AutoScalingGroup
    properties:
      min_size: 1
      max_size: 3
      cooldown: {get_param: cooldown}
      resource:
        type: member.yaml
        properties: {greeting: hello}
  scale_up:
    type: OS::Heat::ScalingPolicy
    properties:
      auto_scaling_group_id: {get_resource: group}
      adjustment_type: change_in_capacity
      scaling_adjustment: 1
  scale_down:
    type: OS::Heat::ScalingPolicy
    properties:
      auto_scaling_group_id: {get_resource: group}
      adjustment_type: change_in_capacity
      scaling_adjustment: -1
outputs:
  size: {value: {get_attr: [group, current_size]}}
  greetings: {value: {get_attr: [group, outputs_list, said]}}
  up_url: {value: {get_attr: [scale_up, signal_url]}}
"""

MEMBER = """heat_template_version: 2021-04-16
parameters:
  greeting: {type: string}
resources:
  v: {type: OS::Heat::Value, properties: {value: {get_param: greeting}}}
outputs:
  said: {value: {get_attr: [v, value]}}
"""


@pytest.fixture(scope="module")
def kiln_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    """A server that knows its own address, so the policy's URLs are absolute."""
    port = free_port()
    proc = start_kiln(tmp_path_factory.mktemp("kiln"), port=port, options={
        "DEFAULT": {"heat_metadata_server_url": f"http://127.0.0.1:{port}"}})
    yield proc
    assert proc.stop() == 0, proc.logs()


@pytest.fixture
def cli(kiln_server: KilnProcess, tmp_path: Path) -> OpenStackCLI:
    (tmp_path / "group.yaml").write_text(TEMPLATE)
    (tmp_path / "member.yaml").write_text(MEMBER)
    return OpenStackCLI(kiln_server.endpoint("demo"), cwd=tmp_path)


def output(cli: OpenStackCLI, stack: str, key: str) -> Any:
    shown = cli.json("stack", "output", "show", stack, key)
    return shown["output_value"]


def test_signals_resize_the_group(cli: OpenStackCLI, kiln_server: KilnProcess) -> None:
    name = f"asg_{uuid.uuid4().hex[:6]}"
    cli.run("stack", "create", "-t", "group.yaml", "--wait", name)
    assert output(cli, name, "size") == 1
    cli.run("stack", "resource", "signal", name, "scale_up")
    assert output(cli, name, "size") == 2
    assert output(cli, name, "greetings") == ["hello", "hello"]
    members = [r for r in cli.json("stack", "resource", "list", "-n", "1", name)
               if r["stack_name"] != name]
    assert len(members) == 2

    # the native signal URL, POSTed as an alarm would (heatclient's session, no auth)
    from keystoneauth1 import session
    from keystoneauth1.noauth import NoAuth

    url = output(cli, name, "up_url")
    assert url.startswith("http://127.0.0.1:")
    sess = session.Session(auth=NoAuth())
    assert sess.post(url, json={"previous": "ok", "current": "alarm",
                                "reason": "cpu high"}).status_code == 200
    assert output(cli, name, "size") == 3
    events = cli.json("stack", "event", "list", "--resource", "scale_up", name)
    reasons = [e["resource_status_reason"] for e in events]
    assert "alarm state changed from ok to alarm (cpu high)" in reasons

    cli.run("stack", "resource", "signal", name, "scale_up")   # at max_size: nothing
    assert output(cli, name, "size") == 3
    cli.run("stack", "resource", "signal", name, "scale_down")
    assert output(cli, name, "size") == 2
    metadata = cli.json("stack", "resource", "metadata", name, "group")
    assert metadata["scaling_in_progress"] is False
    assert list(metadata["cooldown_end"].values()) == ["change_in_capacity : -1"]
    cli.run("stack", "delete", "--yes", "--wait", name)


def test_cooldown_holds_the_group(cli: OpenStackCLI) -> None:
    name = f"asg_{uuid.uuid4().hex[:6]}"
    cli.run("stack", "create", "-t", "group.yaml", "--parameter", "cooldown=3600", "--wait",
            name)
    cli.run("stack", "resource", "signal", name, "scale_up")
    assert output(cli, name, "size") == 1
    events = cli.json("stack", "event", "list", "--resource", "scale_up", name)
    assert all(e["resource_status"] != "SIGNAL_COMPLETE" for e in events)
    cli.run("stack", "delete", "--yes", "--wait", name)
