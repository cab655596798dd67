"""API latency with ``[heat_api] workers = 2`` against 1: stack show and list p99 with 20
concurrent clients, both measured in the same run on the same database, and their ratio.

    .venv/bin/python bench/api_workers_bench.py [--stacks 500] [--clients 20]
                                                [--requests 2000] [--rounds 2]
                                                [--db-url URL] [--write]

A ``kiln serve`` creates ``--stacks`` one-resource stacks on a shared database (a SQLite
file in a temporary directory, or ``--db-url``), then stops. Then, ``--rounds`` times
(alternating, so a change in the machine's load hits both alike), a ``kiln api`` with
``workers = 1`` and one with ``workers = 2`` each serve two phases with ``--clients``
keep-alive clients (bench/loadgen.py; each client sends its next GET as soon as the
previous answer is complete): GET of one stack (show; after one unmeasured phase that
warms each process's response cache) and GET /stacks (the list of all).
Several API processes need ``[DEFAULT] transport_url`` (kiln.workers); it is set for both
runs (RabbitMQ on 127.0.0.1, only reads are sent, so nothing uses it). The best round of
each is reported (the least disturbed by other work on the machine), with the CPU each
API process used and how many requests each answered (from the access log).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.api_bench import _raw_loop, create_stacks
from tests.support.server import start_kiln

BROKER = "rabbit://guest:guest@127.0.0.1:5672/"


def _cpu(procs: list[psutil.Process]) -> list[float]:
    out = []
    for proc in procs:
        try:
            times = proc.cpu_times()
            out.append(times.user + times.system)
        except psutil.Error:
            out.append(0.0)
    return out


async def phase(clients: int, requests: int, pick_url: Any,
                processes: list[psutil.Process]) -> dict[str, Any]:
    latencies: list[float] = []
    per_client = max(1, requests // clients)
    plans = [[pick_url() for _ in range(per_client)] for _ in range(clients)]
    before = _cpu(processes)
    began = time.perf_counter()
    await asyncio.gather(*(_raw_loop(plan, pick_url, latencies) for plan in plans))
    elapsed = time.perf_counter() - began
    used = [a - b for a, b in zip(_cpu(processes), before, strict=True)]
    latencies.sort()

    def pct(p: float) -> float:
        return round(latencies[min(len(latencies) - 1, int(len(latencies) * p))], 2)

    return {"requests": len(latencies), "p50_ms": pct(0.50), "p99_ms": pct(0.99),
            "max_ms": round(latencies[-1], 2), "mean_ms": round(statistics.fmean(latencies), 2),
            "requests_per_second": round(len(latencies) / elapsed, 1),
            "cpu_seconds_per_api_process": [round(u, 2) for u in used]}


async def measure(endpoint: str, urls: list[str], clients: int, requests: int,
                  processes: list[psutil.Process]) -> dict[str, Any]:
    # each process caches the bodies it built (kiln/api/response_cache.py): one phase
    # unmeasured first, so the figures are the steady state of both configurations
    # rather than two processes each building every body once
    await phase(clients, requests, lambda: random.choice(urls), processes)
    show = await phase(clients, requests, lambda: random.choice(urls), processes)
    listing = await phase(clients, max(clients, requests // 4),
                          lambda: endpoint + "/stacks", processes)
    return {"show": show, "list": listing}


def api_processes(pid: int) -> list[psutil.Process]:
    """The processes answering requests: the children with several workers, else the
    process itself."""
    parent = psutil.Process(pid)
    return parent.children() or [parent]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stacks", type=int, default=500)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--db-url", help="a shared database (default: a SQLite file)")
    parser.add_argument("--write", action="store_true",
                        help="record the result in bench/results/api_workers.json")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    runs: dict[int, list[dict[str, Any]]] = {1: [], 2: []}
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db_url or f"sqlite:///{Path(tmp) / 'shared.sqlite'}"
        base = {"database": {"connection": db}}
        maker = start_kiln(Path(tmp) / "create", options=base)
        try:
            urls = asyncio.run(create_stacks(maker.endpoint("bench"), args.stacks))
        finally:
            maker.stop()
        # the stack links name the creating server's port: keep the paths only
        paths = ["/" + u.split("/", 3)[3] for u in urls]
        for round_ in range(args.rounds):
            for workers in (1, 2):
                api = start_kiln(Path(tmp) / f"api-{workers}-{round_}", command="api",
                                 options={**base, "DEFAULT": {"transport_url": BROKER},
                                          "heat_api": {"workers": workers}})
                try:
                    # every process serves (the parent's one line), not only the first
                    deadline = time.monotonic() + 120
                    while "Kiln is serving" not in api.logs():
                        assert time.monotonic() < deadline, api.logs()
                        time.sleep(0.1)  # start-up poll, bounded by the deadline
                    procs = api_processes(api.proc.pid)
                    assert len(procs) == workers, procs
                    endpoint = api.endpoint("bench")
                    result = asyncio.run(measure(endpoint, [api.url + p for p in paths],
                                                 args.clients, args.requests, procs))
                finally:
                    status = api.stop()
                assert status == 0, api.logs()
                # how the requests were spread over the processes (access log lines)
                served: dict[str, int] = {}
                for record in api.log_records():
                    if record.get("logger") == "kiln.access":
                        pid = str(record.get("pid", api.proc.pid))
                        served[pid] = served.get(pid, 0) + 1
                result["requests_per_process"] = sorted(served.values(), reverse=True)
                runs[workers].append(result)
    best = {w: {kind: min((r[kind] for r in rs), key=lambda x: x["p99_ms"])
                for kind in ("show", "list")} for w, rs in runs.items()}
    ratio = {kind: round(best[2][kind]["p99_ms"] / best[1][kind]["p99_ms"], 2)
             for kind in ("show", "list")}
    result = {
        "benchmark": f"kiln api p99, workers = 2 vs 1: {args.stacks} stacks, "
                     f"{args.clients} concurrent keep-alive clients",
        "command": "python bench/api_workers_bench.py " + " ".join(sys.argv[1:]),
        "database": db.split(":", 1)[0],
        "python": platform.python_version(), "cpus": os.cpu_count(),
        "load_average_at_start": round(load, 2),
        "load_average_at_end": round(os.getloadavg()[0], 2),
        "workers_1": best[1], "workers_2": best[2],
        "p99_ratio_workers_2_over_1": ratio,
        "all_rounds": {str(w): rs for w, rs in runs.items()},
    }
    print(json.dumps(result, indent=2))
    if args.write:
        out = Path(__file__).parent / "results" / "api_workers.json"
        out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
