"""The API latency benchmark still runs end to end (5 stacks, 2 clients), so its recorded
numbers stay reproducible. No timing is asserted; every request it timed got a 200 (the
script exits non-zero otherwise) and the result carries each phase's figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.server import clean_env

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "api_bench.py"


def test_api_bench_runs_with_both_load_generators(tmp_path: Path) -> None:
    for client in ("raw", "httpx"):
        done = subprocess.run(
            [sys.executable, str(SCRIPT), "--stacks", "5", "--clients", "2",
             "--requests", "20", "--client", client],
            capture_output=True, text=True, timeout=240, env=clean_env(), cwd=tmp_path,
            check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        record = json.loads(done.stdout[done.stdout.index("{"):])
        assert record["client"] == client
        for phase in ("show", "list", "show_1_client", "list_1_client",
                      "first_show_of_each_stack_1_client"):
            figures = record[phase]
            assert figures["requests"] > 0
            assert 0 < figures["p50_ms"] <= figures["p99_ms"] <= figures["max_ms"]
            assert figures["server_cpu_ms_per_request"] >= 0


SOAK = ROOT / "bench" / "soak_bench.py"


def test_soak_bench_runs_for_a_few_seconds(tmp_path: Path) -> None:
    """bench/soak_bench.py end to end at a few seconds: stacks go through their whole
    life without an error, and the RSS curve and its summary are recorded."""
    out = tmp_path / "soak.json"
    done = subprocess.run(
        [sys.executable, str(SOAK), "--minutes", "0.1", "--clients", "2",
         "--sample-seconds", "1", "--json", str(out)],
        capture_output=True, text=True, timeout=240, env=clean_env(), cwd=tmp_path,
        check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    record = json.loads(out.read_text())
    assert record["errors"] == 0 and record["first_errors"] == []
    assert record["stack_lives_completed"] >= 1
    assert record["server_exit_status"] == 0
    times = [t for t, _ in record["rss_mb_curve"]]
    assert len(times) >= 2 and times == sorted(times)
    assert all(mb > 0 for _, mb in record["rss_mb_curve"])
    summary = record["rss_mb_after_warmup"]
    assert 0 < summary["min"] <= summary["max"]
