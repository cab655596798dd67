"""Start-up time of `kiln serve`: exec to the first answer on GET /.

    .venv/bin/python bench/startup_bench.py [--runs 10] [--write]

Each run starts the installed `kiln serve` on a fresh state directory (so the SQLite
schema is created too) and a free port, polls GET / until it answers (Heat's versions
document, 300), and stops it with SIGTERM. Reports wall-clock seconds and the CPU seconds
the process had used by then (the start-up work itself, independent of machine load),
and the seconds SIGTERM took to a clean exit. ``--write`` records the result in
bench/results/startup.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.server import start_kiln


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    walls, cpus, stops = [], [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            proc = start_kiln(Path(tmp) / "kiln")
            walls.append(proc.startup_seconds)
            cpus.append(proc.startup_cpu_seconds)
            began = time.monotonic()
            status = proc.stop()
            stops.append(time.monotonic() - began)
            if status != 0:
                raise SystemExit(f"kiln serve exited {status} on SIGTERM:\n{proc.logs()}")

    def summary(values: list[float]) -> dict[str, float]:
        return {"min": round(min(values), 3), "median": round(statistics.median(values), 3),
                "max": round(max(values), 3)}

    result = {
        "benchmark": "kiln serve: exec to first answer on GET / (fresh SQLite state_path)",
        "python": platform.python_version(), "machine": platform.machine(),
        "cpus": os.cpu_count(), "load_average_at_start": round(load, 2), "runs": args.runs,
        "wall_seconds": summary(walls), "cpu_seconds": summary(cpus),
        "sigterm_to_exit_seconds": summary(stops),
    }
    print(json.dumps(result, indent=2))
    if args.write:
        out = Path(__file__).resolve().parent / "results" / "startup.json"
        out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
