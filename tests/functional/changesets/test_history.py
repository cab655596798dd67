"""A stack's history on a real ``kiln serve``: every create and update kept (bounded by
``max_stack_versions``), listed with its action, diffable with hidden values masked,
and "update to version N" made as a change set first, then executed; through httpx
and the ``kiln`` CLI as a subprocess."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.functional.changesets.support import cli, ok, settled
from tests.support.clients import heat_client
from tests.support.server import KilnProcess, start_kiln

TEMPLATE = """\
heat_template_version: 2018-08-31
parameters:
  length: {type: number, default: 8}
  password: {type: string, hidden: true}
resources:
  rand:
    type: OS::Heat::RandomString
    properties: {length: {get_param: length}}
  note:
    type: OS::Heat::Value
    properties: {value: {get_param: password}}
"""


@pytest.fixture(scope="module")
def kiln(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    proc = start_kiln(
        tmp_path_factory.mktemp("history"), options={"DEFAULT": {"max_stack_versions": "3"}}
    )
    yield proc
    assert proc.stop() == 0, proc.logs()


def test_history_kept_bounded_diffed_and_restored(kiln: KilnProcess, tmp_path: Path) -> None:
    heat = heat_client(kiln.endpoint("demo"))
    heat.stacks.create(
        stack_name="hist", template=TEMPLATE, parameters={"password": "pw-one-secret"}
    )
    stack = settled(heat, "hist")
    base = f"{kiln.endpoint('demo')}/stacks/hist/{stack.id}/versions"
    for length in (10, 12, 14):
        heat.stacks.update(
            stack.id, template=TEMPLATE, parameters={"password": "pw-one-secret", "length": length}
        )
        assert settled(heat, "hist").stack_status == "UPDATE_COMPLETE"
    listed = httpx.get(base, timeout=30).json()["versions"]
    # four kept changes, three kept versions: the create is gone
    assert [(v["version"], v["action"]) for v in listed] == [
        (2, "UPDATE"),
        (3, "UPDATE"),
        (4, "UPDATE"),
    ]
    shown = httpx.get(f"{base}/2", timeout=30).json()["version"]
    assert shown["environment"]["parameters"] == {"password": "******", "length": 10}
    diff = httpx.get(f"{base}/4/diff", params={"from": 2}, timeout=30).json()["diff"]
    assert "-    length: 10" in diff and "+    length: 14" in diff
    assert "pw-one-secret" not in diff
    assert httpx.get(f"{base}/1", timeout=30).status_code == 404
    assert httpx.get(f"{base}/x", timeout=30).status_code == 400
    assert httpx.get(f"{base}/4/diff", timeout=30).status_code == 400
    # back to version 2, through the CLI: first the change set, then its execution
    table = ok(cli(kiln, tmp_path, "history", "diff", "hist", "3", "4")).stdout
    assert "+    length: 14" in table
    restore = ("history", "restore", "hist", "2", "--name", "back-to-2", "-f", "json")
    made = json.loads(ok(cli(kiln, tmp_path, *restore)).stdout)
    assert made["execution_status"] == "AVAILABLE"
    (rand,) = [c for c in made["changes"] if c["logical_resource_id"] == "rand"]
    assert (rand["details"][0]["before"], rand["details"][0]["after"]) == (14, 10)
    ok(cli(kiln, tmp_path, "changeset", "execute", "--wait", "hist", "back-to-2"))
    after = settled(heat, "hist")
    assert after.parameters["length"] == "10"
    assert after.parameters["password"] == "******"
    versions = json.loads(ok(cli(kiln, tmp_path, "history", "list", "hist", "-f", "json")).stdout)
    assert [v["version"] for v in versions] == [3, 4, 5]


def _snapshot_done(heat: Any, stack_id: str, snap_id: str) -> dict[str, Any]:
    """The snapshot once it is over (bounded by the settled poll's deadline)."""
    deadline = time.monotonic() + 60
    while True:
        snap: dict[str, Any] = heat.stacks.snapshot_show(stack_id, snap_id)["snapshot"]
        if snap["status"] != "IN_PROGRESS":
            return snap
        assert time.monotonic() < deadline, snap
        time.sleep(0.1)  # status poll bounded by the deadline


def test_a_restore_and_an_adopt_are_versions_with_their_action(kiln: KilnProcess) -> None:
    heat = heat_client(kiln.endpoint("demo"))
    heat.stacks.create(stack_name="snapped", template=TEMPLATE, parameters={"password": "pw"})
    stack = settled(heat, "snapped")
    snap = heat.stacks.snapshot(stack.id, "before")
    assert _snapshot_done(heat, stack.id, snap["id"])["status"] == "COMPLETE"
    heat.stacks.update(stack.id, template=TEMPLATE, parameters={"password": "pw", "length": 20})
    assert settled(heat, "snapped").stack_status == "UPDATE_COMPLETE"
    heat.stacks.restore(stack.id, snap["id"])
    assert settled(heat, "snapped").stack_status == "RESTORE_COMPLETE"
    base = f"{kiln.endpoint('demo')}/stacks/snapped/{stack.id}/versions"
    listed = httpx.get(base, timeout=30).json()["versions"]
    assert [v["action"] for v in listed] == ["CREATE", "UPDATE", "RESTORE"]
    restored = httpx.get(f"{base}/{listed[-1]['version']}", timeout=30).json()["version"]
    # the snapshot's environment: the length the stack had before the update
    assert "length" not in (restored["environment"].get("parameters") or {})

    data = heat.stacks.abandon(stack.id)
    adopted = heat.stacks.create(
        stack_name="adopted",
        adopt_stack_data=json.dumps(data),
        template=TEMPLATE,
        parameters={"password": "pw"},
    )["stack"]["id"]
    assert settled(heat, "adopted").stack_status == "ADOPT_COMPLETE"
    kept = httpx.get(f"{kiln.endpoint('demo')}/stacks/adopted/{adopted}/versions", timeout=30)
    assert [v["action"] for v in kept.json()["versions"]] == ["ADOPT"]
