"""Kiln beside the real Heat 27 in one run: flat N RandomStrings, create + delete.

    .venv/bin/python bench/heat_ratio_bench.py --heat-url http://127.0.0.1:8180/v1/admin \
        [--heat-pid PID] [--size 1000] [--runs 2] [--poll 0.05] [--old-tree DIR] \
        [--json PATH]

Issue 26's last row: "flat 1,000 create + delete against Heat 27.0.1's fastest mode, one
run". One ``kiln serve`` of this working tree (SQLite, bench/scenarios_bench.py's
configuration, warmed up with the same small stack) and the Heat at ``--heat-url``
(e.g. /work/shared/peer-heat started with ``PEER_HEAT_CONVERGENCE=false``, its legacy
engine, which is the faster of its two) are measured alternately, run after run, by the
same client: bench/scenarios_bench.py's ``run_case`` (python-heatclient, ``stacks.get``
polled every ``--poll`` seconds until the action has left IN_PROGRESS). Each result
carries the server's CPU seconds for the action (Heat's only with ``--heat-pid``, the
pid of its one process). The ratio is Heat's create + delete wall time over Kiln's, per
round and overall (medians).

Heat 27 finishes a flat 1,000 in neither engine on /work/shared/peer-heat (a stack's
thread group is capped at 1,000 threads, never emptied, and Heat starts one per event;
bench/README.md, "Kiln beside Heat 27"), so a Heat run can end FAILED or never:
the summary keeps each run's statuses beside its seconds, and ``--timeout`` bounds the
wait.

``--old-tree DIR`` adds a second ``kiln serve`` importing that tree (e.g. ``git
archive`` of main extracted there), measured in the same rounds, for a before/after.
``--heat-url ''`` leaves Heat out (Kiln trees only).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import scenarios_bench  # noqa: E402  (bench/ is on sys.path when run as a script)
from heatclient import client as heat_client  # noqa: E402

from tests.support.server import start_kiln  # noqa: E402


@contextmanager
def kiln_server(tree: Path, workdir: Path, args: argparse.Namespace
                ) -> Iterator[tuple[Any, scenarios_bench.RssSampler]]:
    """A warmed-up ``kiln serve`` importing ``tree``: its client and its CPU/RSS sampler."""
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(tree)  # the server started imports this tree's kiln
    try:
        kiln = start_kiln(workdir, options=scenarios_bench.KILN_OPTIONS)
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved
    rss = scenarios_bench.RssSampler(kiln.proc.pid)
    rss.start()
    try:
        hc = heat_client.Client("1", endpoint=kiln.endpoint("bench"), token="x")
        scenarios_bench.warm_up(hc, args)
        yield hc, rss
    finally:
        rss.stop()
        kiln.stop()


def total(result: dict[str, Any]) -> float:
    return float(result["create_s"]) + float(result["delete_s"])


def summary(results: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, runs in results.items():
        # a run whose create FAILED is kept (Heat 27's legacy engine fails one resource of
        # a flat 1,000, below) but its statuses go beside its figures
        ok = [r for r in runs if "delete_s" in r]
        out[name] = {"create_delete_s": [round(total(r), 3) for r in ok],
                     "statuses": [f"{r.get('create_status')}/{r.get('delete_status')}"
                                  for r in ok],
                     "median_create_delete_s": round(statistics.median(map(total, ok)), 3)
                     if ok else None}
        cpu = [r["create_server_cpu_s"] + r["delete_server_cpu_s"] for r in ok
               if "create_server_cpu_s" in r]
        if cpu:
            out[name]["create_delete_server_cpu_s"] = [round(c, 3) for c in cpu]
    if results.get("heat") and results.get("kiln"):
        pairs = list(zip(results["heat"], results["kiln"], strict=False))
        per_round = [round(total(h) / total(k), 1) for h, k in pairs]
        out["heat_over_kiln_per_round"] = per_round
        out["heat_over_kiln_median"] = round(
            out["heat"]["median_create_delete_s"] / out["kiln"]["median_create_delete_s"], 1)
        heat_cpu = out["heat"].get("create_delete_server_cpu_s")
        kiln_cpu = out["kiln"].get("create_delete_server_cpu_s")
        if heat_cpu and kiln_cpu and statistics.median(kiln_cpu) > 0:
            out["heat_over_kiln_server_cpu_median"] = round(
                statistics.median(heat_cpu) / statistics.median(kiln_cpu), 1)
    if results.get("kiln_old") and results.get("kiln"):
        out["old_over_new_median"] = round(out["kiln_old"]["median_create_delete_s"]
                                           / out["kiln"]["median_create_delete_s"], 2)
    return out


def bench(args: argparse.Namespace) -> dict[str, Any]:
    record: dict[str, Any] = {
        "benchmark": f"flat {args.size} RandomStrings, create + delete, Kiln beside Heat "
                     f"(python-heatclient, stacks.get polled every {args.poll}s)",
        "command": "python bench/heat_ratio_bench.py " + " ".join(sys.argv[1:]),
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "machine": scenarios_bench.machine(),
        "targets": {"kiln": {"server": "kiln serve", "tree": str(ROOT),
                             "database": "sqlite (state_path, WAL)"}}}
    results: dict[str, list[dict[str, Any]]] = {"kiln": []}
    with ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        clients: dict[str, tuple[Any, scenarios_bench.RssSampler | None]] = {}
        clients["kiln"] = stack.enter_context(kiln_server(ROOT, Path(tmp) / "new", args))
        if args.old_tree:
            record["targets"]["kiln_old"] = {"server": "kiln serve",
                                             "tree": str(args.old_tree)}
            results["kiln_old"] = []
            clients["kiln_old"] = stack.enter_context(
                kiln_server(args.old_tree, Path(tmp) / "old", args))
        if args.heat_url:
            record["targets"]["heat"] = {"endpoint": args.heat_url, "pid": args.heat_pid}
            results["heat"] = []
            hc = heat_client.Client("1", endpoint=args.heat_url, token="x")
            heat_rss = scenarios_bench.RssSampler(args.heat_pid) if args.heat_pid else None
            if heat_rss is not None:
                heat_rss.start()
                stack.callback(heat_rss.stop)
            record["heat_warm_up_s"] = scenarios_bench.warm_up(hc, args)
            clients["heat"] = (hc, heat_rss)
        case_args = scenarios_bench.parse(["--no-update", "--poll", str(args.poll),
                                           "--timeout", str(args.timeout)])
        for run in range(args.runs):
            # alternate the order each round, so neither side always runs after the other
            names = list(clients) if run % 2 == 0 else list(reversed(clients))
            for name in names:
                hc, rss = clients[name]
                result = scenarios_bench.run_case(hc, "flat", args.size, case_args, rss)
                result["target"], result["round"] = name, run
                print(json.dumps(result), flush=True)
                results[name].append(result)
                if args.json is not None:  # a run stopped half-way keeps what it measured
                    record["results"] = results
                    args.json.write_text(json.dumps(record, indent=2) + "\n")
    record["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    record["results"] = results
    record["summary"] = summary(results)
    return record


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heat-url", default="",
                        help="the Heat endpoint (…/v1/<project>); '' leaves Heat out")
    parser.add_argument("--heat-pid", type=int, help="Heat's process, for its CPU seconds")
    parser.add_argument("--old-tree", type=Path, help="a second kiln tree measured beside")
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--poll", type=float, default=0.05)
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--json", type=Path, help="record in this file")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse(argv)
    record = bench(args)
    text = json.dumps(record, indent=2) + "\n"
    if args.json is not None:
        args.json.write_text(text)
    print(json.dumps(record["summary"], indent=2))
    return record


if __name__ == "__main__":
    main()
