"""yaql's cost before and after a change, in one run: per evaluation and per chain create.

    .venv/bin/python bench/yaql_bench.py [--before REV] [--sizes 100,1000] [--evals 300]
        [--write | --json PATH]

``--before REV`` (default: the working tree only) exports that commit with ``git archive``
into a temporary directory, and every measurement is taken for it and for this working
tree, alternately, in the same run, on the same machine:

- ``eval_us``: microseconds per ``yaql`` evaluation of the common expression
  ``int($.data) + 1`` through the template layer (a bound template's output resolved
  again and again, in a fresh process importing that tree);
- ``yaqlchain`` at each size, then ``flat`` 1,000 RandomStrings (the issue's yardstick:
  a 1,000-link chain should cost at most 5x that create), each on a fresh ``kiln serve``
  of that tree (bench/scenarios_bench.py: create, update, delete timed through
  python-heatclient, with the server's CPU seconds);
- then, with ``--cold``, the smallest ``yaqlchain`` again as the first stack of a fresh
  server (no warm-up stack), which pays yaql's first use in the process;

Why: until 30a6829 each evaluation forked a child process (~20 ms on this machine and
more as the server grows); issue 26 asked for microseconds in-process.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import scenarios_bench  # noqa: E402  (bench/ is on sys.path when run as a script)

MICRO = r"""
import json, sys, time
from kiln.template import load_template
from tests.unit.template.tplhelpers import IDENTITY, FakeResolver
n = int(sys.argv[1])
tpl = load_template({"heat_template_version": "2018-08-31", "outputs": {"o": {"value": {
    "yaql": {"expression": "int($.data) + 1", "data": "41"}}}}})
def once():
    bound = tpl.bind(user_params={}, identity=IDENTITY, resolver=FakeResolver())
    assert bound.resolve(bound.template.outputs["o"].value) == 42
for _ in range(20):
    once()
began = time.perf_counter(); cpu = time.process_time()
for _ in range(n):
    once()
wall = time.perf_counter() - began; cpu = time.process_time() - cpu
print(json.dumps({"eval_us": round(wall / n * 1e6, 1), "eval_cpu_us": round(cpu / n * 1e6, 1)}))
"""


def micro(tree: Path, evals: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, "-c", MICRO, str(evals)], env=env, cwd=tree,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def scenarios(tree: Path, sizes: list[int], cold: bool = False) -> list[dict[str, Any]]:
    only = [("yaqlchain", n) for n in sizes] + ([] if cold else [("flat", 1000)])
    args = scenarios_bench.parse(["--runs", "1"] + (["--no-warm-up"] if cold else []))
    record: dict[str, Any] = {}
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(tree)  # the server started imports this tree's kiln
    try:
        return scenarios_bench.run_on_new_server(args, record, only)
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


def export(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def ratios(before: dict[str, Any], after: dict[str, Any]) -> dict[str, float]:
    out = {"eval_us": round(before["micro"]["eval_us"] / after["micro"]["eval_us"], 1)}
    for b, a in zip(before["scenarios"], after["scenarios"], strict=True):
        key = f"{b['scenario']}_{b['size']}_create_s"
        if "create_s" in a and "create_s" in b:
            out[key] = round(b["create_s"] / a["create_s"], 1)
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="a commit to measure beside the working tree")
    parser.add_argument("--sizes", default="100,1000",
                        type=lambda s: [int(x) for x in s.split(",")])
    parser.add_argument("--evals", type=int, default=300)
    parser.add_argument("--cold", action="store_true",
                        help="also the smallest chain as a fresh server's first stack (no "
                             "warm-up stack: it pays yaql's first use in the process)")
    parser.add_argument("--write", action="store_true", help="record in bench/results/yaql.json")
    parser.add_argument("--json", type=Path, help="record in this file")
    args = parser.parse_args(argv)
    record: dict[str, Any] = {
        "benchmark": "yaql per evaluation and per chain create (issue 26)",
        "command": "python bench/yaql_bench.py " + " ".join(argv or sys.argv[1:]),
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "machine": scenarios_bench.machine()}
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"after": ROOT}
        if args.before:
            trees = {"before": export(args.before, Path(tmp)), **trees}
            record["before"] = {"commit": args.before}
        for label, tree in trees.items():
            record.setdefault(label, {})["micro"] = micro(tree, args.evals)
            print(label, record[label]["micro"], flush=True)
        for label, tree in trees.items():
            record[label]["scenarios"] = scenarios(tree, args.sizes)
            if args.cold:
                record[label]["cold"] = scenarios(tree, [min(args.sizes)], cold=True)
    after = record["after"]["scenarios"]
    flat = next(r for r in after if r["scenario"] == "flat")
    record["after"]["chain_over_flat_create"] = {
        f"yaqlchain_{r['size']}": round(r["create_s"] / flat["create_s"], 2)
        for r in after if r["scenario"] == "yaqlchain" and "create_s" in r}
    if args.before:
        record["before_over_after"] = ratios(record["before"], record["after"])
    text = json.dumps(record, indent=2) + "\n"
    target = args.json or (ROOT / "bench" / "results" / "yaql.json" if args.write else None)
    if target is not None:
        target.write_text(text)
    print(text)
    return record


if __name__ == "__main__":
    main()
