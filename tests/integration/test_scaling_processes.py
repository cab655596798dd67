"""Autoscaling across separate processes on one PostgreSQL database: ``kiln api``
takes the stack, ``kiln api-cloudwatch`` takes boto3's metrics, and ``kiln engine``
(the only one running the watcher) evaluates the alarms, signals the policies and
resizes the group; the API reads the new size back from the database. The metric goes
up and the group grows, it falls and the group shrinks, as with ``kiln serve``."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.functional.scaling.test_alarm_scaling import TEMPLATE, push_until
from tests.support.clients import heat_client, wait_for_stack_status
from tests.support.server import KilnProcess, kiln_command, start_kiln

pytestmark = [pytest.mark.slow, pytest.mark.postgresql]


@pytest.fixture
def processes(tmp_path: Path, postgresql_url: str) -> Iterator[dict[str, KilnProcess]]:
    options: dict[str, dict[str, Any]] = {"database": {"connection": postgresql_url},
                                          "kiln_alarms": {"evaluation_interval": 0.5}}
    started: dict[str, KilnProcess] = {}
    try:
        # the engine first: it upgrades the new database before the others open it
        for role in ("engine", "api", "api-cloudwatch"):
            started[role] = start_kiln(tmp_path / role, command=role, options=options)
        yield started
    finally:
        for proc in reversed(list(started.values())):
            assert proc.stop() == 0, proc.logs()


def test_three_processes_scale_a_group_on_metrics(processes: dict[str, KilnProcess]
                                                  ) -> None:
    import boto3

    api, watch, engine = processes["api"], processes["api-cloudwatch"], processes["engine"]
    made = subprocess.run([*kiln_command(), "ec2-credentials", "create", "--config-file",
                           str(api.config_file), "--project", "demo"],
                          capture_output=True, text=True, check=True, timeout=60)
    cred = json.loads(made.stdout)
    cloudwatch = boto3.client("cloudwatch", endpoint_url=watch.cloudwatch_url,
                              region_name="RegionOne", aws_access_key_id=cred["access"],
                              aws_secret_access_key=cred["secret"])
    heat = heat_client(api.endpoint("demo"))
    name = f"procs_{uuid.uuid4().hex[:6]}"
    group = f"g-{name}"
    heat.stacks.create(stack_name=name, template=TEMPLATE, parameters={"group_name": group})
    assert wait_for_stack_status(heat, name).stack_status == "CREATE_COMPLETE"

    def size() -> int | None:
        outputs = {o["output_key"]: o.get("output_value")
                   for o in heat.stacks.get(name).outputs}
        value = outputs.get("size")
        return None if value is None else int(value)

    assert size() == 1
    push_until(cloudwatch, group, 95.0, lambda: size() == 2)
    push_until(cloudwatch, group, 5.0, lambda: size() == 1)
    history = cloudwatch.describe_alarm_history(AlarmName=f"{name}-cpu_high",
                                                HistoryItemType="Action")
    assert any(i["HistorySummary"].startswith("Successfully executed action")
               for i in history["AlarmHistoryItems"])
    # the engine process did the resizing (the API process runs no watcher)
    assert "adjusting group group" in engine.logs()
    assert "adjusting group" not in api.logs()
    members = [r for r in heat.resources.list(name, nested_depth=1)
               if getattr(r, "parent_resource", None) == "group"]
    assert len(members) == 1
    heat.stacks.delete(name)
