"""Kiln killed mid-scale: ``kiln serve`` is SIGKILLed while a policy's signal is adding a
member (the new member still creating); after a restart the members stack settles
(recovery resumes or fails it), and the next signal scales the group again, its size
matching its live members."""

from __future__ import annotations

import contextlib
import signal
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.clients import heat_client
from tests.support.server import start_kiln

pytestmark = pytest.mark.slow

OPTIONS = {
    "DEFAULT": {"periodic_interval": 1},
    "kiln_engine": {"heartbeat_interval": 0.15, "engine_dead_after": 0.8,
                    "poll_initial_delay": 0.01, "poll_max_delay": 0.1},
}

TEMPLATE = """heat_template_version: 2021-04-16
resources:
  group:
    type: OS::Heat::AutoScalingGroup
    properties:
      min_size: 1
      max_size: 5
      cooldown: 0
      resource:
        type: OS::Heat::TestResource
        properties: {value: m, action_wait_secs: {create: 3}}
  up:
    type: OS::Heat::ScalingPolicy
    properties:
      auto_scaling_group_id: {get_resource: group}
      adjustment_type: change_in_capacity
      scaling_adjustment: 1
outputs:
  size: {value: {get_attr: [group, current_size]}}
"""


def wait_for(what: str, check: Any, deadline: float = 60.0) -> Any:
    until = time.monotonic() + deadline
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > until:
            raise AssertionError(f"{what}: not within {deadline}s")
        time.sleep(0.1)  # polling the API, bounded by the deadline


def members(heat: Any, name: str) -> list[Any]:
    return [r for r in heat.resources.list(name, nested_depth=1)
            if r.resource_type == "OS::Heat::TestResource"]


def test_a_kill_mid_scale_leaves_the_group_consistent_and_scalable(tmp_path: Path) -> None:
    workdir = tmp_path / "kiln"
    kiln = start_kiln(workdir, options=OPTIONS)
    heat = heat_client(kiln.endpoint("demo"))
    name = f"crash_{uuid.uuid4().hex[:6]}"
    heat.stacks.create(stack_name=name, template=TEMPLATE)
    wait_for("create", lambda: heat.stacks.get(name).stack_status == "CREATE_COMPLETE")
    url = f"{kiln.endpoint('demo')}/stacks/{name}/{heat.stacks.get(name).id}" \
          "/resources/up/signal"

    def send() -> None:
        with contextlib.suppress(httpx.HTTPError):   # the server dies under this request
            httpx.post(url, json={}, timeout=60)

    sender = threading.Thread(target=send)
    sender.start()
    wait_for("a member creating", lambda: any(
        r.resource_status == "CREATE_IN_PROGRESS" for r in members(heat, name)))
    assert kiln.stop(signal.SIGKILL) != 0
    sender.join(timeout=30)

    kiln = start_kiln(workdir, options=OPTIONS)
    try:
        heat = heat_client(kiln.endpoint("demo"))
        wait_for("the members stack settled", lambda: all(
            not r.resource_status.endswith("IN_PROGRESS") for r in members(heat, name)))
        url = f"{kiln.endpoint('demo')}/stacks/{name}/{heat.stacks.get(name).id}" \
              "/resources/up/signal"
        before = [r for r in members(heat, name) if r.resource_status.endswith("COMPLETE")]
        assert httpx.post(url, json={}, timeout=60).status_code == 200

        def settled_size() -> int | None:
            stack = heat.stacks.get(name)
            outputs = {o["output_key"]: o.get("output_value") for o in stack.outputs}
            live = [r for r in members(heat, name)
                    if r.resource_status.endswith("COMPLETE")]
            size = outputs.get("size")
            return size if size == len(live) and size == len(before) + 1 else None

        assert wait_for("the next signal scaled", settled_size) >= 2
        metadata = heat.resources.metadata(name, "group")
        assert metadata["scaling_in_progress"] is False
    finally:
        assert kiln.stop() == 0, kiln.logs()
