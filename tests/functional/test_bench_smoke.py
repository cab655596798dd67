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
