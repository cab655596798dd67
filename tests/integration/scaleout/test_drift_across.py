"""Drift detection (issue 28) in a deployment of several processes (issue 24): a
detection is durable work run by an engine, so the API process that accepted it may
die right after its answer, and an engine that dies mid-detection has it taken over.

A real resource plugin loaded through ``plugin_dirs`` stands in for a cloud object
changed behind Kiln's back; its live-state read waits until the test opens a gate (a
file), so the detection is certainly still running when a process is killed."""

from __future__ import annotations

import signal
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from botocore.exceptions import ClientError

from tests.integration.scaleout.conftest import Cluster, client, wait_for, wait_status
from tests.support.aws import cfn_client, issue_keypair

PLUGIN = '''
import asyncio
import os

from kiln.resources.base import Resource
from kiln.resources.live_state import LiveState

GATE = {gate!r}
READING = {reading!r}


class Changed(Resource):
    """An object recoloured behind Kiln's back, whose read waits for the test's gate."""
    type_name = "Acme::GatedChanged"

    async def handle_create(self):
        self.resource_id = self.physical_resource_name()

    async def live_state(self, expected):
        open(READING + "." + str(os.getpid()), "w").close()
        while not os.path.exists(GATE):
            await asyncio.sleep(0.05)  # a slow cloud: the test opens the gate
        return LiveState(expected={{"colour": "blue"}}, actual={{"colour": "red"}})
'''

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {"changed": {"type": "Acme::GatedChanged"},
                  "steady": {"type": "OS::Heat::None"}},
}


def _with_plugin(cluster: Cluster, tmp_path: Path) -> tuple[Path, Path]:
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    gate, reading = tmp_path / "gate", tmp_path / "reading"
    (plugins / "gated.py").write_text(textwrap.dedent(
        PLUGIN.format(gate=str(gate), reading=str(reading))))
    cluster.extra = {"DEFAULT": {"plugin_dirs": str(plugins)}}
    return gate, reading


def _readers(tmp_path: Path) -> set[str]:
    """The pids of the processes whose live-state read has started."""
    return {p.name.rsplit(".", 1)[1] for p in tmp_path.glob("reading.*")}


def _detect(c: httpx.Client, path: str) -> dict[str, Any]:
    r = c.post(f"{path}/drift")
    assert r.status_code == 202, r.text
    run = r.json()["drift"]
    assert run["detection_status"] == "DETECTION_IN_PROGRESS", run
    return dict(run)


def _settled(c: httpx.Client, path: str, detection_id: str) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        run = c.get(f"{path}/drift", params={"detection_id": detection_id}).json()["drift"]
        return None if run["detection_status"] == "DETECTION_IN_PROGRESS" else run
    return dict(wait_for(done, 60, "the detection to end"))


def _drifted(run: dict[str, Any]) -> None:
    assert run["detection_status"] == "DETECTION_COMPLETE", run
    assert (run["stack_drift_status"], run["drifted_resource_count"]) == ("DRIFTED", 1), run
    by_name = {e["resource_name"]: e for e in run["resources"]}
    assert by_name["changed"]["status"] == "MODIFIED", by_name


def test_a_detection_survives_the_api_that_accepted_it(
    server_db: str, cluster_factory: Callable[[str], Cluster], tmp_path: Path
) -> None:
    cluster = cluster_factory(server_db)
    gate, _ = _with_plugin(cluster, tmp_path)
    engine = cluster.engine()
    accepting, other = cluster.api(), cluster.api()
    with client(accepting) as a, client(other) as b:
        r = a.post("/stacks", json={"stack_name": "drifty", "template": TEMPLATE})
        assert r.status_code == 201, r.text
        path = f"/stacks/drifty/{r.json()['stack']['id']}"
        wait_status(a, "drifty", "CREATE_COMPLETE")
        run = _detect(a, path)
        accepting.stop(signal.SIGKILL)
        # the read runs in the engine, not in the API process that was killed
        wait_for(lambda: _readers(tmp_path), 30, "the live state to be read")
        assert _readers(tmp_path) == {str(engine.proc.pid)}
        gate.touch()
        _drifted(_settled(b, path, run["detection_id"]))
        latest = b.get(f"{path}/drift").json()["drift"]
        assert latest["detection_id"] == run["detection_id"]


def test_an_engine_killed_mid_detection_has_it_taken_over(
    server_db: str, cluster_factory: Callable[[str], Cluster], tmp_path: Path
) -> None:
    cluster = cluster_factory(server_db)
    gate, _ = _with_plugin(cluster, tmp_path)
    first = cluster.engine()
    with client(cluster.api()) as c:
        r = c.post("/stacks", json={"stack_name": "drifty", "template": TEMPLATE})
        assert r.status_code == 201, r.text
        path = f"/stacks/drifty/{r.json()['stack']['id']}"
        wait_status(c, "drifty", "CREATE_COMPLETE")
        run = _detect(c, path)
        wait_for(lambda: _readers(tmp_path), 30, "the first engine to read the live state")
        first.stop(signal.SIGKILL)
        second = cluster.engine()
        wait_for(lambda: str(second.proc.pid) in _readers(tmp_path), 60,
                 "the second engine to take the detection over")
        gate.touch()
        _drifted(_settled(c, path, run["detection_id"]))


def test_a_one_resource_detection_is_read_by_an_engine_not_the_api(
    server_db: str, cluster_factory: Callable[[str], Cluster], tmp_path: Path
) -> None:
    """DetectStackResourceDrift (boto3 on ``kiln api-cfn``) and the native
    ``resources/{name}/drift`` (on ``kiln api``) are answered with the result of a read
    run by the engine: neither API process reads the cloud (before, each read it
    itself)."""
    cluster = cluster_factory(server_db)
    gate, _ = _with_plugin(cluster, tmp_path)
    gate.touch()  # no waiting here: each read answers at once
    engine = cluster.engine()
    api, cfn_api = cluster.api(), cluster.start("api-cfn")
    with client(api) as c:
        r = c.post("/stacks", json={"stack_name": "drifty", "template": TEMPLATE})
        assert r.status_code == 201, r.text
        path = f"/stacks/drifty/{r.json()['stack']['id']}"
        wait_status(c, "drifty", "CREATE_COMPLETE")

        r = c.post(f"{path}/resources/changed/drift")
        assert r.status_code == 200, r.text
        entry = r.json()["resource_drift"]
        assert (entry["resource_name"], entry["status"]) == ("changed", "MODIFIED"), entry
        assert _readers(tmp_path) == {str(engine.proc.pid)}
        r = c.post(f"{path}/resources/nope/drift")
        assert r.status_code == 404, r.text
        assert r.json()["error"]["type"] == "ResourceNotFound", r.text

    for reading in tmp_path.glob("reading.*"):
        reading.unlink()
    cfn = cfn_client(cfn_api, issue_keypair(cfn_api))
    drift = cfn.detect_stack_resource_drift(StackName="drifty",
                                            LogicalResourceId="changed")["StackResourceDrift"]
    assert drift["StackResourceDriftStatus"] == "MODIFIED", drift
    assert [d["PropertyPath"] for d in drift["PropertyDifferences"]] == ["/colour"], drift
    assert _readers(tmp_path) == {str(engine.proc.pid)}
    with pytest.raises(ClientError, match="Resource nope does not exist for stack drifty"):
        cfn.detect_stack_resource_drift(StackName="drifty", LogicalResourceId="nope")
