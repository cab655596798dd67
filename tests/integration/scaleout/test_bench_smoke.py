"""bench/scaleout_bench.py still runs end to end at a tiny size, so issue 24's numbers
stay reproducible (bench/README.md, "Scale-out").

No timing is asserted: this proves that the throughput run creates its stacks through
two real ``kiln api`` processes with one and then two ``kiln engine`` processes on
PostgreSQL and RabbitMQ, that the signal run clears hooks in-process and across
processes, and that the JSON carries the counts a reader of bench/results needs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.server import clean_env

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "bench" / "scaleout_bench.py"

pytestmark = pytest.mark.postgresql


def _run(tmp_path: Path, *args: str) -> dict[str, object]:
    out = tmp_path / "result.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--api-periodic", "3600", *args, "--json", str(out)],
        capture_output=True, text=True, timeout=300, env=clean_env(), cwd=ROOT,
        check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    record: dict[str, object] = json.loads(out.read_text())
    assert str(record["command"]).endswith(str(out))
    return record


def test_throughput_with_one_and_two_engines(rabbit: None, postgresql_url: str,
                                             tmp_path: Path) -> None:
    record = _run(tmp_path, "throughput", "--stacks", "2", "--resources", "5")
    runs = record["runs"]
    assert isinstance(runs, list)
    assert [r["engines"] for r in runs] == [1, 2]
    for run in runs:
        assert run["complete"] == 2, run
        assert run["errors"] == [], run
        assert set(run["cpu_seconds"]) >= {"api1", "api2", "engine1", "postgresql"}
        # each admitted create wakes an engine: one publish per stack, from the APIs
        published = sum(c.get("publish", 0) for c in run["counted"].values())
        assert published == 2, run["counted"]
        assert run["per_resource"]["sql_statements"] > 0


def test_signal_latency_in_process_and_across(rabbit: None, postgresql_url: str,
                                              tmp_path: Path) -> None:
    record = _run(tmp_path, "signal", "--signals", "3", "--kind", "hook")
    for where in ("in_process", "cross_process"):
        series = record[where]
        assert isinstance(series, dict)
        assert series["state_seen_ms"]["n"] == 3
    cross = record["cross_process"]
    assert isinstance(cross, dict)
    # each signal through the other API is one forwarded call to the engine running the
    # stack (after a ping of that engine), each answered by the engine
    api2, engine = cross["counted"]["api2"], cross["counted"]["engine1"]
    assert api2["publish.method.invoke.resource_signal"] == 3, api2
    assert engine["publish.reply"] == api2["publish.request"], (api2, engine)
