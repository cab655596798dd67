"""The performance regression gate: instruction counts against a recorded baseline.

    python scripts/perf_gate.py            # compare; exit 1 on a regression
    python scripts/perf_gate.py --update   # record the current counts as the baseline

Runs bench/gate_cases.py once under ``valgrind --tool=callgrind`` and counts, for each
case, the instructions it executed -- its own, plus those of any child process it
started -- and how many processes it started. Instruction counts do not depend on the
machine's load, so the gate cannot be fooled by a noisy machine (nor fail because of
one): a case fails when it executes more than ``--threshold`` (25%) more instructions
than bench/perf_baseline.json records, or starts more processes. Counts depend on the
Python and library builds; the baseline records them, and a different build is
reported so the baseline can be recorded again for it.

valgrind is installed with apt-get when missing and this runs as root (CI).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "bench" / "perf_baseline.json"
CASES = ROOT / "bench" / "gate_cases.py"


def valgrind() -> str:
    found = shutil.which("valgrind")
    if found is None and os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(["apt-get", "install", "-y", "-q", "valgrind"], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        found = shutil.which("valgrind")
    if found is None:
        sys.exit("perf_gate: valgrind is not installed (apt-get install valgrind)")
    return found


def _total(path: Path) -> int:
    match = re.search(r"^(?:totals|summary):\s*(\d+)", path.read_text(), re.MULTILINE)
    return int(match.group(1)) if match else 0


def measure() -> dict[str, dict[str, int]]:
    """Each case's instructions (itself and its children) and processes started."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(ROOT)}
        run = subprocess.run(
            [valgrind(), "--tool=callgrind", f"--callgrind-out-file={out}/cg.%p",
             "--dump-before=getpgrp", "--dump-instr=no", "--compress-strings=no",
             sys.executable, str(CASES), "--markers", str(out)],
            env=env, capture_output=True, text=True, cwd=ROOT)
        if run.returncode != 0:
            sys.exit(f"perf_gate: the cases failed under callgrind:\n{run.stderr[-3000:]}")
        children: dict[str, list[str]] = json.loads(run.stdout.strip().splitlines()[-1])
        names = list(children)
        [first_dump] = out.glob("cg.*.1")  # only the cases' process has dump points
        pid = first_dump.name.split(".")[1]
        results = {}
        for index, name in enumerate(names):
            own = _total(out / f"cg.{pid}.{2 * (index + 1)}")
            kids = [out / f for f in children[name]]
            results[name] = {"instructions": own + sum(_total(k) for k in kids),
                             "processes": len(kids)}
        return results


def builds() -> dict[str, str]:
    version = subprocess.run([valgrind(), "--version"], capture_output=True, text=True)
    return {"python": platform.python_version(), "machine": platform.machine(),
            "valgrind": version.stdout.strip()}


def compare(now: dict[str, dict[str, int]], baseline: dict[str, Any],
            threshold: float) -> list[str]:
    failures = []
    recorded = baseline["cases"]
    print(f"{'case':28} {'baseline':>14} {'now':>14} {'ratio':>7}  processes")
    for name, counts in now.items():
        base = recorded.get(name)
        if base is None:
            failures.append(f"{name}: not in the baseline (record it: --update)")
            continue
        ratio = counts["instructions"] / base["instructions"]
        print(f"{name:28} {base['instructions']:>14,} {counts['instructions']:>14,} "
              f"{ratio:>7.3f}  {base['processes']} -> {counts['processes']}")
        if ratio > 1 + threshold:
            failures.append(f"{name}: {ratio:.2f}x the baseline's instructions "
                            f"(more than +{threshold:.0%})")
        if counts["processes"] > base["processes"]:
            failures.append(f"{name}: starts {counts['processes']} processes "
                            f"(baseline {base['processes']})")
    for name in set(recorded) - set(now):
        failures.append(f"{name}: in the baseline but no longer measured")
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true",
                        help=f"record the counts in {BASELINE.relative_to(ROOT)}")
    parser.add_argument("--threshold", type=float, default=0.25)
    parser.add_argument("--baseline", type=Path, default=BASELINE)
    args = parser.parse_args()
    began = time.monotonic()
    now = measure()
    if args.update:
        args.baseline.write_text(json.dumps({
            "command": "python scripts/perf_gate.py --update",
            "recorded_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "builds": builds(), "cases": now}, indent=2) + "\n")
        print(json.dumps(now, indent=2))
        print(f"perf_gate: baseline recorded in {args.baseline} "
              f"({time.monotonic() - began:.0f} s)")
        return 0
    baseline = json.loads(args.baseline.read_text())
    if baseline.get("builds", {}).get("python") != platform.python_version():
        print(f"perf_gate: the baseline was recorded with Python "
              f"{baseline.get('builds', {}).get('python')}; counts may differ")
    failures = compare(now, baseline, args.threshold)
    print(f"perf_gate: {len(now)} cases in {time.monotonic() - began:.0f} s")
    for failure in failures:
        print(f"perf_gate: FAILED {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
