"""Soak of `kiln serve`: many clients cycling stacks for minutes; errors and the RSS curve.

    .venv/bin/python bench/soak_bench.py [--minutes 30] [--clients 20] [--warmup-minutes 5]
                                         [--sample-seconds 10] [--tracemalloc]
                                         [--port N] [--json PATH] [--write]

Starts the installed `kiln serve` on a fresh SQLite state directory. Each of ``--clients``
clients (one httpx keep-alive connection each) repeats a stack's whole life until the time
is up: create (RandomString + Value + an output), wait for CREATE_COMPLETE, show, list,
resources, events, output show, update (a new length), wait for UPDATE_COMPLETE, delete,
wait until the name is gone. Any answer other than the one Heat gives at that step, and
any FAILED state, is an error (the first 20 are kept). The server's RSS (psutil) is
sampled every ``--sample-seconds``; the report carries the curve and, after the warm-up,
the first, last, lowest and highest sample and the least-squares slope in MB per 10
minutes (issue 10: zero errors, RSS flat after warm-up).

``--tracemalloc`` runs the server under ``python -X tracemalloc=10 bench/traced_serve.py``
and compares a heap snapshot taken at the end of the warm-up with one taken at the end:
the report lists the 15 source lines whose live allocations grew most. (Tracing slows the
server severalfold, so its throughput and RSS are not comparable with an untraced run.)
``--port N`` puts the server's three listeners on N, N+1 and N+2 (a shared machine's
own range) instead of ports the kernel picks. ``--write`` records the result in
bench/results/soak.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.server import start_kiln

HERE = Path(__file__).resolve().parent


def template(length: int) -> dict[str, Any]:
    return {"heat_template_version": "2018-08-31",
            "resources": {"word": {"type": "OS::Heat::RandomString",
                                   "properties": {"length": length}},
                          "echo": {"type": "OS::Heat::Value",
                                   "properties": {"value": {"get_attr": ["word", "value"]}}}},
            "outputs": {"word": {"value": {"get_attr": ["echo", "value"]}}}}


class Errors:
    """Counts every unexpected answer; keeps the first few for the report."""

    def __init__(self) -> None:
        self.count = 0
        self.first: list[str] = []

    def add(self, what: str) -> None:
        self.count += 1
        if len(self.first) < 20:
            self.first.append(what)


async def settle(client: httpx.AsyncClient, url: str, want: str, errors: Errors) -> bool:
    """Wait (bounded) until the stack leaves IN_PROGRESS; True if it reached ``want``."""
    deadline = time.monotonic() + 300
    while True:
        resp = await client.get(url)
        if resp.status_code != 200:
            errors.add(f"GET {url} -> {resp.status_code} {resp.text[:200]}")
            return False
        status = str(resp.json()["stack"]["stack_status"])
        if not status.endswith("IN_PROGRESS"):
            if status != want:
                errors.add(f"{url}: {status} (wanted {want}): "
                           f"{resp.json()['stack']['stack_status_reason']}")
            return status == want
        if time.monotonic() > deadline:
            errors.add(f"{url}: still {status} after 300 s")
            return False
        await asyncio.sleep(0.1)  # waiting on the engine between requests of one client


async def expect(client: httpx.AsyncClient, method: str, url: str, status: int,
                 errors: Errors, **kwargs: Any) -> httpx.Response | None:
    resp = await client.request(method, url, **kwargs)
    if resp.status_code != status:
        errors.add(f"{method} {url} -> {resp.status_code} (wanted {status}) {resp.text[:200]}")
        return None
    return resp


async def one_life(client: httpx.AsyncClient, endpoint: str, name: str,
                   errors: Errors) -> bool:
    """One stack from create to gone; False at the first unexpected answer."""
    created = await expect(client, "POST", endpoint + "/stacks", 201, errors,
                           json={"stack_name": name, "template": template(8)})
    if created is None:
        return False
    url = created.json()["stack"]["links"][0]["href"]
    if not await settle(client, url, "CREATE_COMPLETE", errors):
        return False
    for path in ("", "/resources", "/events", "/outputs/word"):
        if await expect(client, "GET", url + path, 200, errors) is None:
            return False
    if await expect(client, "GET", endpoint + "/stacks", 200, errors) is None:
        return False
    if await expect(client, "PUT", url, 202, errors,
                    json={"template": template(12)}) is None:
        return False
    if not await settle(client, url, "UPDATE_COMPLETE", errors):
        return False
    if await expect(client, "DELETE", url, 204, errors) is None:
        return False
    deadline = time.monotonic() + 300
    while (await client.get(f"{endpoint}/stacks/{name}")).status_code != 404:
        if time.monotonic() > deadline:
            errors.add(f"{name}: not gone 300 s after its delete")
            return False
        await asyncio.sleep(0.1)  # waiting on the engine between requests of one client
    return True


async def client_loop(endpoint: str, index: int, until: float, errors: Errors,
                      cycles: list[int]) -> None:
    async with httpx.AsyncClient(timeout=120, limits=httpx.Limits(max_connections=1),
                                 follow_redirects=True) as client:
        n = 0
        while time.monotonic() < until:
            n += 1
            if await one_life(client, endpoint, f"soak_{index}_{n}", errors):
                cycles[index] += 1


async def sample_rss(server: psutil.Process, every: float, until: float,
                     curve: list[tuple[float, float]],
                     loads: list[tuple[float, float]]) -> None:
    """RSS every ``every`` seconds, and the machine's 1-minute load average beside it."""
    began = time.monotonic()
    while True:
        now = round(time.monotonic() - began, 1)
        curve.append((now, round(server.memory_info().rss / 2**20, 1)))
        loads.append((now, round(os.getloadavg()[0], 2)))
        if time.monotonic() >= until:
            return
        await asyncio.sleep(min(every, max(0.0, until - time.monotonic())))


def slope_mb_per_10_min(points: list[tuple[float, float]]) -> float | None:
    if len(points) < 2:
        return None
    n = len(points)
    mean_t = sum(t for t, _ in points) / n
    mean_m = sum(m for _, m in points) / n
    var = sum((t - mean_t) ** 2 for t, _ in points)
    if var == 0:
        return None
    cov = sum((t - mean_t) * (m - mean_m) for t, m in points)
    return round(cov / var * 600, 2)


def snapshot(server: psutil.Process, directory: Path, number: int) -> tracemalloc.Snapshot:
    """Ask the traced server for its heap (SIGUSR1) and load it once it is written."""
    server.send_signal(signal.SIGUSR1)
    path = directory / f"{number}.snapshot"
    deadline = time.monotonic() + 300
    while not path.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"the traced server wrote no {path.name}")
        time.sleep(0.2)  # the server writes the file; nothing else to wait on
    return tracemalloc.Snapshot.load(str(path))


def growth(before: tracemalloc.Snapshot, after: tracemalloc.Snapshot) -> dict[str, Any]:
    """The 15 lines whose live allocations grew most, and the 5 call stacks that did."""
    lines = after.compare_to(before, "lineno")
    stacks = after.compare_to(before, "traceback")
    return {
        "total_grew_kb": round(sum(s.size_diff for s in lines) / 1024, 1),
        "lines": [{"where": f"{s.traceback[0].filename}:{s.traceback[0].lineno}",
                   "grew_kb": round(s.size_diff / 1024, 1), "now_kb": round(s.size / 1024, 1),
                   "blocks_grew": s.count_diff} for s in lines[:15]],
        "stacks": [{"grew_kb": round(s.size_diff / 1024, 1),
                    "frames": [f"{f.filename}:{f.lineno}" for f in s.traceback]}
                   for s in stacks[:5]]}


async def soak(endpoint: str, server: psutil.Process, args: argparse.Namespace,
               trace_dir: Path | None) -> dict[str, Any]:
    began = time.monotonic()
    until = began + args.minutes * 60
    warmup_end = min(args.warmup_minutes * 60, args.minutes * 60 / 2)
    errors = Errors()
    cycles = [0] * args.clients
    curve: list[tuple[float, float]] = []
    loads: list[tuple[float, float]] = []
    heaps: list[tracemalloc.Snapshot] = []

    async def take_warm_snapshot() -> None:
        await asyncio.sleep(warmup_end)
        if trace_dir is not None:
            heaps.append(await asyncio.to_thread(snapshot, server, trace_dir, 1))

    await asyncio.gather(
        sample_rss(server, args.sample_seconds, until, curve, loads), take_warm_snapshot(),
        *(client_loop(endpoint, i, until, errors, cycles) for i in range(args.clients)))
    elapsed = time.monotonic() - began
    after = [p for p in curve if p[0] >= warmup_end]
    result: dict[str, Any] = {
        "seconds": round(elapsed, 1), "stack_lives_completed": sum(cycles),
        "errors": errors.count, "first_errors": errors.first,
        "rss_mb_curve": curve, "warmup_seconds": warmup_end,
        "rss_mb_after_warmup": {
            "first": after[0][1] if after else None, "last": after[-1][1] if after else None,
            "min": min(m for _, m in after) if after else None,
            "max": max(m for _, m in after) if after else None,
            "slope_mb_per_10_min": slope_mb_per_10_min(after)},
        "load_average_1min_during": {
            "mean": round(sum(x for _, x in loads) / len(loads), 2) if loads else None,
            "min": min(x for _, x in loads) if loads else None,
            "max": max(x for _, x in loads) if loads else None},
        "load_average_curve": loads,
    }
    if trace_dir is not None and heaps:
        result["tracemalloc_growth_after_warmup"] = growth(
            heaps[0], await asyncio.to_thread(snapshot, server, trace_dir, 2))
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--warmup-minutes", type=float, default=5.0,
                        help="RSS before this is warm-up (at most half the run)")
    parser.add_argument("--sample-seconds", type=float, default=10.0)
    parser.add_argument("--tracemalloc", action="store_true")
    parser.add_argument("--port", type=int,
                        help="the API's port; CloudFormation's and CloudWatch's are the next two")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        trace_dir = Path(tmp) / "heap" if args.tracemalloc else None
        launcher = None
        if trace_dir is not None:
            trace_dir.mkdir()
            launcher = [sys.executable, "-X", "tracemalloc=10",
                        str(HERE / "traced_serve.py"), str(trace_dir)]
        # a traced server imports several times slower: give it longer to come up
        ports = {} if args.port is None else {
            "heat_api_cfn": {"bind_port": args.port + 1},
            "heat_api_cloudwatch": {"bind_port": args.port + 2}}
        proc = start_kiln(Path(tmp) / "kiln", launcher=launcher, port=args.port,
                          options=ports, ready_deadline=600 if launcher else 30)
        try:
            server = psutil.Process(proc.proc.pid)
            figures = asyncio.run(soak(proc.endpoint("soak"), server, args, trace_dir))
        finally:
            status = proc.stop()
    result = {
        "benchmark": f"kiln serve soak: {args.clients} clients cycling stacks for "
                     f"{args.minutes:g} minutes (SQLite)",
        "command": "python bench/soak_bench.py " + " ".join(sys.argv[1:]),
        "python": platform.python_version(), "machine": platform.machine(),
        "cpus": os.cpu_count(), "load_average_at_start": [round(x, 2) for x in load],
        "tracemalloc": args.tracemalloc, "server_exit_status": status, **figures,
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    if args.write:
        (HERE / "results" / "soak.json").write_text(text + "\n")
    if result["errors"] or status != 0:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
