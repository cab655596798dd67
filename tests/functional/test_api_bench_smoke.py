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
