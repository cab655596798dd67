"""Issue 15's speed claims: the watcher's CPU with 10,000 alarms evaluated every minute
on data from 10,000 metrics, and PutMetricData throughput and latency through a real
``kiln serve``.

    .venv/bin/python bench/alarm_bench.py watcher --alarms 10000 --minutes 3 --write
    .venv/bin/python bench/alarm_bench.py put --rate 1000 --batch 10 --seconds 30 --write

``watcher``: a SQLite database gets N alarms (period 60 s, one metric each); a child
process runs the real :class:`kiln.alarms.watcher.Watcher` (its own process, so its CPU
is measured alone: its event loop and its database threads) for ``--minutes`` while this
process pushes one data point per metric per minute (spread evenly: ~167 points/s for
10,000 metrics) through :class:`kiln.alarms.service.AlarmService`. Reported: the child's
CPU seconds per wall second, and alarm evaluations per minute.

``put``: ``kiln serve`` on a fresh state directory; a client paces signed PutMetricData
requests (botocore's SigV4 signer, JSON protocol, ``--batch`` points each; signed before
the timed part, sent as raw HTTP/1.1 bytes on kept-alive sockets so the client costs
little) so that ``--rate`` points/s are offered on an open-loop schedule (a slow answer
does not delay the next request), and records every request's latency from the moment
it was due (a client running behind is counted against the result, not hidden).
Reported: points/s achieved, p50/p99 latency, the server's CPU per request, how late the
client sent (``client_late_p99_ms``: the machine's load, not the server), the client's
own CPU per request and the load average. ``--batch 1 --rate 1000`` is the other shape
(1,000 requests/s of one point); ``--py-spy FILE`` profiles the server meanwhile.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _meta() -> dict[str, Any]:
    return {"machine": platform.machine(), "python": platform.python_version(),
            "cpus": os.cpu_count(), "loadavg_start": os.getloadavg()[0],
            "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


# -- watcher -----------------------------------------------------------------------------------

async def _seed(url: str, alarms: int) -> None:
    from kiln.alarms import rules, store
    from kiln.db.facade import open_database

    db = await open_database(url)
    rows = []
    for i in range(alarms):
        rows.append(rules.make_rule(
            namespace="bench", metric_name=f"m{i}", statistic="Average", period=60,
            evaluation_periods=1 + i % 3, threshold=50, comparison="GreaterThanThreshold",
            dimensions=(("host", f"h{i}"),)))

    def put_all(s: Any) -> None:
        for i, rule in enumerate(rows):
            store.put_alarm(s, "bench", f"alarm-{i}", rule)

    await db.write(put_all)
    await db.close()


async def _watch(url: str, seconds: float, out: Path) -> None:
    from kiln.alarms.service import AlarmService
    from kiln.alarms.watcher import Watcher
    from kiln.db.facade import open_database

    db = await open_database(url)
    svc = AlarmService(db)
    watcher = Watcher(svc, interval=10.0)
    evaluated = 0
    start = time.monotonic()
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    while time.monotonic() - start < seconds:
        evaluated += await watcher.round()
        await asyncio.sleep(max(0.0, 10.0 - (time.monotonic() - start) % 10.0))
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    wall = time.monotonic() - start
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    await watcher.stop()
    await db.close()
    out.write_text(json.dumps({"cpu_seconds": cpu, "wall_seconds": wall,  # as landed with issue 15  # noqa: ASYNC240
                               "evaluations": evaluated, "rounds": watcher.evaluated}))


async def _feed(url: str, metrics: int, seconds: float) -> int:
    from kiln.alarms.service import AlarmService
    from kiln.db.facade import open_database

    db = await open_database(url)
    svc = AlarmService(db)
    sent = 0
    start = time.monotonic()
    per_second = metrics / 60.0
    i = 0
    while time.monotonic() - start < seconds:
        due = int((time.monotonic() - start) * per_second) - sent
        for _ in range(max(due, 0)):
            n = i % metrics
            await svc.put_metric_data("bench", "bench", [{
                "MetricName": f"m{n}", "Value": float(40 + (i % 30)),
                "Dimensions": [{"Name": "host", "Value": f"h{n}"}]}])
            i += 1
            sent += 1
        await asyncio.sleep(0.05)
    await db.close()
    return sent


def bench_watcher(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="alarm-bench-"))
    url = f"sqlite:///{work}/bench.sqlite"
    asyncio.run(_seed(url, args.alarms))
    seconds = args.minutes * 60
    out = work / "watcher.json"
    child = subprocess.Popen([sys.executable, __file__, "_watch", "--url", url,
                              "--seconds", str(seconds), "--out", str(out)])
    sent = asyncio.run(_feed(url, args.alarms, seconds))
    child.wait(timeout=seconds + 120)
    got = json.loads(out.read_text())
    minutes = got["wall_seconds"] / 60
    return {"bench": "watcher", **_meta(), "alarms": args.alarms, "metrics": args.alarms,
            "points_pushed": sent, "minutes": round(minutes, 2),
            "watcher_cpu_seconds": round(got["cpu_seconds"], 2),
            "watcher_cpu_percent_of_one_core":
                round(100 * got["cpu_seconds"] / got["wall_seconds"], 2),
            "evaluations_per_minute": round(got["evaluations"] / minutes),
            "rounds": got["rounds"]}


# -- PutMetricData ------------------------------------------------------------------------------

def _raw_request(body: str, headers: dict[str, str], netloc: str) -> bytes:
    payload = body.encode()
    lines = ["POST / HTTP/1.1", f"Host: {netloc}", f"Content-Length: {len(payload)}"]
    lines += [f"{k}: {v}" for k, v in headers.items()
              if k.lower() not in ("host", "content-length")]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + payload


async def _read_response(reader: asyncio.StreamReader) -> int:
    """The status of one response, its body read (Content-Length framed)."""
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    await reader.readexactly(length)
    return status


def bench_put(args: argparse.Namespace) -> dict[str, Any]:
    import httpx
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    from tests.support.server import kiln_command, start_kiln

    work = Path(tempfile.mkdtemp(prefix="put-bench-"))
    # one keypair pushes what many servers would: the per-credential limit is off
    kiln = start_kiln(work, options={"kiln_alarms": {"evaluation_interval": 10},
                                     "kiln_api": {"agent_metric_rate": 0}})
    try:
        made = subprocess.run([*kiln_command(), "ec2-credentials", "create",
                               "--config-file", str(kiln.config_file), "--project", "bench"],
                              capture_output=True, text=True, check=True)
        keys = json.loads(made.stdout)
        creds = Credentials(keys["access"], keys["secret"])
        with httpx.Client() as warm:     # the first request pays for lazy imports
            warm.get(kiln.cloudwatch_url + "/")
        url = kiln.cloudwatch_url + "/"
        per_second = args.rate / args.batch
        total = int(args.seconds * per_second)
        # signed before the clock starts (a SigV4 signature stays valid 15 minutes), so
        # the client's own signing cost cannot queue the requests it measures
        signed = []
        for n in range(total):
            body = json.dumps({"Namespace": "bench", "MetricData": [
                {"MetricName": f"m{(n * args.batch + j) % 1000}", "Value": 1.0 * j}
                for j in range(args.batch)]})
            req = AWSRequest("POST", url, data=body, headers={
                "X-Amz-Target": "GraniteServiceVersion20100801.PutMetricData",
                "Content-Type": "application/x-amz-json-1.0"})
            SigV4Auth(creds, "monitoring", "RegionOne").add_auth(req)
            signed.append((body, dict(req.headers)))
        import psutil

        server = psutil.Process(kiln.proc.pid)
        latencies: list[float] = []
        late: list[float] = []    # how far behind its schedule the client sent each one
        errors = 0
        host, port = "127.0.0.1", int(kiln.cloudwatch_port or 0)
        wire = [_raw_request(body, headers, f"{host}:{port}") for body, headers in signed]

        async def run() -> float:
            # a bare HTTP/1.1 client on keep-alive sockets sending pre-built bytes: httpx's
            # ~1 ms of CPU a request made the client, not the server, the bottleneck on
            # this loaded machine (its own queue was most of the latency measured)
            nonlocal errors
            idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

            async def one(data: bytes, due: float) -> None:
                # open loop: the latency counts from when the request was due, so a
                # client (or machine) running behind is charged to the result, not hidden
                nonlocal errors
                status = 0
                for attempt in (0, 1):
                    # a kept connection the server closed meanwhile (its 5 s keep-alive)
                    # fails before any answer: sent again once on a new one, as clients do
                    reused = bool(idle) and attempt == 0
                    try:
                        conn = idle.pop() if reused else await asyncio.open_connection(
                            host, port)
                        conn[1].write(data)
                        status = await _read_response(conn[0])
                        break
                    except (OSError, asyncio.IncompleteReadError, ValueError):
                        if not reused:
                            errors += 1
                            return
                latencies.append(time.perf_counter() - due)
                idle.append(conn)
                if status != 200:
                    errors += 1

            tasks = []
            start = time.perf_counter()
            for n, data in enumerate(wire):
                due = start + n / per_second
                delay = due - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)  # the offered load's schedule
                late.append(max(-delay, 0.0))
                tasks.append(asyncio.create_task(one(data, due)))
            await asyncio.gather(*tasks)
            wall = time.perf_counter() - start
            for _, writer in idle:
                writer.close()
            return wall

        spy = None
        if args.py_spy:
            # the server profiled for the timed part only (flamegraph for .svg, collapsed
            # stacks for .txt, else speedscope JSON)
            fmt = {".svg": "flamegraph", ".txt": "raw"}.get(args.py_spy.suffix, "speedscope")
            spy = subprocess.Popen([str(Path(sys.executable).parent / "py-spy"), "record",
                                    "--pid", str(kiln.proc.pid), "--rate", "500",
                                    "--format", fmt, "-o", str(args.py_spy)])
            time.sleep(1.0)
        cpu_before = sum(server.cpu_times()[:2])
        client_before = resource.getrusage(resource.RUSAGE_SELF)
        wall = asyncio.run(run())
        server_cpu = sum(server.cpu_times()[:2]) - cpu_before
        client_after = resource.getrusage(resource.RUSAGE_SELF)
        client_cpu = (client_after.ru_utime - client_before.ru_utime
                      + client_after.ru_stime - client_before.ru_stime)
        if spy is not None:
            spy.send_signal(2)
            spy.wait(timeout=60)
        latencies.sort()

        def pct(p: float) -> float:
            return round(1000 * latencies[min(len(latencies) - 1,
                                              int(p * len(latencies)))], 2)

        return {"bench": "put_metric_data", **_meta(), "offered_points_per_second": args.rate,
                "batch": args.batch, "requests": len(latencies), "errors": errors,
                "points_per_second": round(len(latencies) * args.batch / wall),
                "p50_ms": pct(0.50), "p99_ms": pct(0.99), "max_ms": pct(1.0),
                "server_cpu_ms_per_request": round(1000 * server_cpu / max(len(latencies), 1),
                                                   3),
                "server_cpu_percent_of_one_core": round(100 * server_cpu / wall, 1),
                "client_late_p99_ms": round(1000 * sorted(late)[int(0.99 * len(late))], 2),
                # the load generator shares the machine's CPUs: its own cost, to judge
                # whether it (rather than the server) could be what is slow
                "client_cpu_ms_per_request": round(1000 * client_cpu
                                                   / max(len(latencies), 1), 3),
                "loadavg_end": os.getloadavg()[0]}
    finally:
        kiln.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="what", required=True)
    watcher = sub.add_parser("watcher")
    watcher.add_argument("--alarms", type=int, default=10000)
    watcher.add_argument("--minutes", type=float, default=3)
    watcher.add_argument("--write", action="store_true")
    put = sub.add_parser("put")
    put.add_argument("--rate", type=int, default=1000)
    put.add_argument("--batch", type=int, default=10)
    put.add_argument("--seconds", type=float, default=30)
    put.add_argument("--write", action="store_true")
    put.add_argument("--py-spy", type=Path, default=None,
                     help="profile the server with py-spy into this file")
    child = sub.add_parser("_watch")
    child.add_argument("--url")
    child.add_argument("--seconds", type=float)
    child.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.what == "_watch":
        asyncio.run(_watch(args.url, args.seconds, args.out))
        return
    result = bench_watcher(args) if args.what == "watcher" else bench_put(args)
    print(json.dumps(result, indent=1))
    if args.write:
        name = "alarm_watcher.json" if args.what == "watcher" else "alarm_put.json"
        (ROOT / "bench" / "results" / name).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
