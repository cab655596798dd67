"""The scenario benchmark still runs end to end (at size 10), so its numbers stay reproducible.

No timing is asserted: this proves that every scenario's create, update and delete go
through a real ``kiln serve`` and python-heatclient and reach their COMPLETE states, and
that the recorded JSON carries what a reader of bench/results needs (the command, the
machine, the load average, the server's memory).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.server import clean_env

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "scenarios_bench.py"


def test_every_scenario_completes_at_size_ten(tmp_path: Path) -> None:
    out = tmp_path / "scenarios.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--sizes", "10", "--json", str(out)],
        capture_output=True, text=True, timeout=240, env=clean_env(), cwd=tmp_path,
        check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    record = json.loads(out.read_text())
    assert record["command"].endswith("--sizes 10 --json " + str(out))
    assert record["machine"]["cpus"] >= 1
    assert len(record["load_average_at_start"]) == 3
    assert record["server_peak_rss_mb"] > 0
    results = record["results"]
    assert [r["scenario"] for r in results] == ["flat", "rg", "chain", "fanin", "testres",
                                                "nested", "yaqlchain", "groups"]
    for result in results:
        assert result["size"] == 10
        assert result["create_status"] == "CREATE_COMPLETE", result
        assert result["update_status"] == "UPDATE_COMPLETE", result
        assert result["delete_status"] == "DELETE_COMPLETE", result
        assert result["server_peak_rss_mb"] > 0


def test_the_heat_ratio_bench_alternates_its_targets(tmp_path: Path) -> None:
    """bench/heat_ratio_bench.py against a second ``kiln serve`` standing in for Heat
    (any Heat-compatible endpoint), with this tree again as the "old" tree: every target
    measured each round, the ratios computed, the JSON written."""
    from tests.support.server import start_kiln

    peer = start_kiln(tmp_path / "peer")
    out = tmp_path / "ratio.json"
    try:
        done = subprocess.run(
            [sys.executable, str(ROOT / "bench" / "heat_ratio_bench.py"), "--size", "5",
             "--runs", "2", "--heat-url", peer.endpoint("bench"),
             "--heat-pid", str(peer.proc.pid), "--old-tree", str(ROOT), "--json", str(out)],
            capture_output=True, text=True, timeout=240, env=clean_env(), cwd=tmp_path,
            check=False)
    finally:
        peer.stop()
    assert done.returncode == 0, done.stdout + done.stderr
    record = json.loads(out.read_text())
    assert sorted(record["results"]) == ["heat", "kiln", "kiln_old"]
    for runs in record["results"].values():
        assert [r["round"] for r in runs] == [0, 1]
        assert {r["create_status"] for r in runs} == {"CREATE_COMPLETE"}
        assert {r["delete_status"] for r in runs} == {"DELETE_COMPLETE"}
    summary = record["summary"]
    assert len(summary["heat_over_kiln_per_round"]) == 2
    assert summary["heat_over_kiln_median"] > 0
    assert summary["heat"]["create_delete_server_cpu_s"][0] > 0  # --heat-pid's CPU
    assert summary["old_over_new_median"] > 0


def test_the_wall_breakdown_reads_every_server_thread(tmp_path: Path) -> None:
    """bench/wall_breakdown.py: each action's wall time, answer and polls from the client,
    and the server's CPU and run-queue time from the kernel, the event loop's apart."""
    out = tmp_path / "wall.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "wall_breakdown.py"), "--size", "5",
         "--runs", "1", "--json", str(out)],
        capture_output=True, text=True, timeout=240, env=clean_env(), cwd=tmp_path,
        check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    (run,) = json.loads(out.read_text())["runs"]
    assert run["create"]["status"] == "CREATE_COMPLETE"
    assert run["delete"]["status"] == "DELETE_COMPLETE"
    for action in ("create", "delete"):
        assert 0 < run[action]["answer_s"] <= run[action]["wall_s"]
        assert run[action]["polls"] >= 1
        server = run[action]["server_until_answer"]
        assert server["cpu_s"] > 0
        assert "event loop" in server["threads"]
