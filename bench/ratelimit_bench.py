"""Issue 22's per-credential rate limits: what one flooding credential costs another
tenant's servers, with the limiter on and off.

    .venv-test/bin/python bench/ratelimit_bench.py [--seconds 20] [--flooders 16]
        [--flood-processes 2] [--victim-rate 10] [--write]

For each mode (``on``: the default ``[kiln_api] agent_signal_rate``/``_burst``; ``off``:
``agent_signal_rate = 0``) a fresh ``kiln serve`` gets two projects' stacks of
``AWS::CloudFormation::WaitConditionHandle`` + ``WaitCondition`` (conditions that wait
for more signals than are ever sent, and signal bounds raised so that every accepted
signal is stored, as a long-lived flood would be until the bounds):

- the *victim* tenant (project ``victim``) has four handles, and signals them in turn on
  an open-loop schedule, ``--victim-rate`` signals/s in all (each handle well within its
  own budget), through their pre-signed URLs as cfn-signal does; a request's latency
  counts from when it was due;
- first ``--seconds`` with nobody else (``idle``), then ``--seconds`` while a *flooder*
  (project ``flood``, one handle: one credential, its pre-signed URL) sends signals as
  fast as ``--flooders`` concurrent keep-alive connections go in each of
  ``--flood-processes`` processes of their own.

Reported per mode and phase: the victim's p50/p99/max latency and errors, the server's
CPU seconds per second during the flood, and the flooder's answers per second by status
(its 200s are signals stored). ``--write`` adds the run to
bench/results/ratelimit.json. Not a test: the numbers move with the machine's load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.server import KilnProcess, start_kiln

VICTIM_HANDLES = 4
#: every signal stored: the bounds a flood would otherwise reach first
SIGNAL_BOUNDS = {"max_signals_per_resource": 10_000_000,
                 "max_signals_size_per_resource": 1 << 30}


def template(handles: int) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    for i in range(handles):
        resources[f"handle{i}"] = {"Type": "AWS::CloudFormation::WaitConditionHandle"}
        resources[f"wait{i}"] = {"Type": "AWS::CloudFormation::WaitCondition",
                                 "Properties": {"Handle": {"Ref": f"handle{i}"},
                                                "Timeout": 3600, "Count": 10_000_000}}
    return {"AWSTemplateFormatVersion": "2010-09-09", "Resources": resources,
            "Outputs": {f"url{i}": {"Value": {"Ref": f"handle{i}"}} for i in range(handles)}}


def handle_urls(kiln: KilnProcess, project: str, handles: int) -> list[str]:
    """Create the project's stack and return its handles' pre-signed URLs."""
    native = kiln.endpoint(project)
    with httpx.Client(timeout=120) as client:
        made = client.post(f"{native}/stacks", json={"stack_name": "rl",
                                                     "template": template(handles)})
        made.raise_for_status()
        link = made.json()["stack"]["links"][0]["href"]
        deadline = time.monotonic() + 300
        while True:
            stack = client.get(link).json()["stack"]
            urls = {o["output_key"]: o["output_value"] for o in stack.get("outputs") or []}
            found = [urls.get(f"url{i}") for i in range(handles)]
            if all(isinstance(u, str) and "Signature=" in u for u in found):
                return [str(u) for u in found]
            if stack["stack_status"].endswith("FAILED") or time.monotonic() > deadline:
                raise SystemExit(f"stack not ready: {stack['stack_status']}")
            time.sleep(0.2)  # the handles' create; bounded by the deadline


# -- the flooder (a process of its own) -------------------------------------------------------

async def _flood(url: str, seconds: float, connections: int) -> dict[str, Any]:
    counts: Counter[str] = Counter()
    end = time.monotonic() + seconds
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)

    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        async def worker(n: int) -> None:
            i = 0
            while time.monotonic() < end:
                i += 1
                body = {"Status": "SUCCESS", "Reason": "flood", "UniqueId": f"{n}-{i}",
                        "Data": "x"}
                try:
                    answer = await client.put(url, json=body)
                    counts[str(answer.status_code)] += 1
                except httpx.HTTPError as exc:
                    counts[type(exc).__name__] += 1

        started = time.monotonic()
        await asyncio.gather(*(worker(n) for n in range(connections)))
        wall = time.monotonic() - started
    return {"seconds": round(wall, 2),
            "per_second": {k: round(v / wall, 1) for k, v in sorted(counts.items())},
            "total": dict(counts)}


def flood_main(argv: list[str]) -> None:
    url, seconds, connections = argv[0], float(argv[1]), int(argv[2])
    print(json.dumps(asyncio.run(_flood(url, seconds, connections))))


# -- the victim -----------------------------------------------------------------------------

async def victim(urls: list[str], rate: float, seconds: float) -> dict[str, Any]:
    """Signals sent in turn to ``urls`` at ``rate``/s on a fixed schedule; latency from
    when each was due."""
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    count = int(rate * seconds)
    async with httpx.AsyncClient(timeout=60) as client:
        start = time.monotonic() + 0.2

        async def one(n: int) -> None:
            due = start + n / rate
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            body = {"Status": "SUCCESS", "Reason": "victim", "UniqueId": f"v{n}",
                    "Data": "y"}
            try:
                answer = await client.put(urls[n % len(urls)], json=body)
                statuses[answer.status_code] += 1
            except httpx.HTTPError:
                statuses[0] += 1
            latencies.append((time.monotonic() - due) * 1000)

        await asyncio.gather(*(one(n) for n in range(count)))
    latencies.sort()

    def pct(p: float) -> float:
        return round(latencies[min(len(latencies) - 1, int(p * len(latencies)))], 1)

    return {"signals": len(latencies), "p50_ms": pct(0.50), "p99_ms": pct(0.99),
            "max_ms": round(latencies[-1], 1),
            "mean_ms": round(statistics.fmean(latencies), 1),
            "errors": sum(v for k, v in statuses.items() if k != 200)}


def run_mode(mode: str, args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, dict[str, Any]] = {"DEFAULT": {"graceful_shutdown_timeout": 2},
                                          "kiln_engine": SIGNAL_BOUNDS}
    if mode == "off":
        options["kiln_api"] = {"agent_signal_rate": 0}
    with tempfile.TemporaryDirectory() as tmp:
        kiln = start_kiln(Path(tmp) / "kiln", options=options)
        try:
            victim_urls = handle_urls(kiln, "victim", VICTIM_HANDLES)
            (flood_url,) = handle_urls(kiln, "flood", 1)
            idle = asyncio.run(victim(victim_urls, args.victim_rate, args.seconds))
            flooders = [subprocess.Popen(
                [sys.executable, __file__, "--flood-worker", flood_url,
                 str(args.seconds + 2), str(args.flooders)], stdout=subprocess.PIPE)
                for _ in range(args.flood_processes)]
            time.sleep(1.0)  # the flood at full speed before the victim's clock starts
            server = psutil.Process(kiln.proc.pid)
            cpu_before, wall_before = sum(server.cpu_times()[:2]), time.monotonic()
            flooded = asyncio.run(victim(victim_urls, args.victim_rate, args.seconds))
            flooded["server_cpu_per_second"] = round(
                (sum(server.cpu_times()[:2]) - cpu_before)
                / (time.monotonic() - wall_before), 2)
            floods = [json.loads(f.communicate(timeout=args.seconds + 120)[0])
                      for f in flooders]
            flood = {"processes": len(floods),
                     "per_second": {k: round(sum(f["per_second"].get(k, 0) for f in floods), 1)
                                    for k in sorted({k for f in floods
                                                     for k in f["per_second"]})}}
        finally:
            kiln.stop()
    return {"mode": mode, "victim_idle": idle, "victim_flooded": flooded, "flood": flood}


def main() -> None:
    if sys.argv[1:2] == ["--flood-worker"]:
        flood_main(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--flooders", type=int, default=16)
    parser.add_argument("--flood-processes", type=int, default=2)
    parser.add_argument("--victim-rate", type=float, default=10.0)
    parser.add_argument("--modes", default="on,off")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    record: dict[str, Any] = {
        "bench": "ratelimit", "command": " ".join(sys.argv),
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": platform.machine(), "python": platform.python_version(),
        "cpus": os.cpu_count(), "loadavg_start": [round(x, 2) for x in os.getloadavg()],
        "runs": []}
    for mode in args.modes.split(","):
        result = run_mode(mode, args)
        record["runs"].append(result)
        idle, flooded = result["victim_idle"], result["victim_flooded"]
        print(f"limiter {mode}: victim idle p50 {idle['p50_ms']} ms p99 {idle['p99_ms']} ms; "
              f"flooded p50 {flooded['p50_ms']} ms p99 {flooded['p99_ms']} ms "
              f"max {flooded['max_ms']} ms errors {flooded['errors']}; server CPU "
              f"{flooded['server_cpu_per_second']} s/s; "
              f"flood answers/s {result['flood']['per_second']}", flush=True)
    record["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(record, indent=1))
    if args.write:
        path = Path(__file__).resolve().parent / "results" / "ratelimit.json"
        runs = json.loads(path.read_text()) if path.exists() else []
        runs.append(record)
        path.write_text(json.dumps(runs, indent=1) + "\n")


if __name__ == "__main__":
    main()
