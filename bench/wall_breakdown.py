"""Where the wall time of a flat N create + delete through ``kiln serve`` goes.

    .venv/bin/python bench/wall_breakdown.py [--size 1000] [--runs 2] [--poll 0.05]
        [--strace fdatasync,fsync,pwrite64] [--json PATH]

A fresh ``kiln serve`` (bench/scenarios_bench.py's configuration, warmed up) creates and
deletes flat N RandomStrings with python-heatclient polling ``stacks.get`` every
``--poll`` seconds, as scenarios_bench.py does. For each action it records, from the
client: the request's answer time, the number of polls, the median poll's latency and
the last one's (what the client adds after the server is done is at most one interval
plus that last poll); and from the kernel, for every thread of the server
(``/proc/<pid>/task/<tid>/schedstat``): the CPU time it ran and the time it waited in
the run queue for a CPU, before the answer and after it. What is left of a thread's
wall time is sleep: idle, a lock, or I/O. ``--strace`` counts the listed system calls of
the server across the measured actions (their number and time), e.g. the fsyncs that a
commit or a WAL checkpoint waits on.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import scenarios_bench  # noqa: E402  (bench/ is on sys.path when run as a script)
from heatclient import client as heat_client  # noqa: E402
from heatclient import exc as heat_exc  # noqa: E402

from tests.support.server import start_kiln  # noqa: E402

Sched = dict[int, tuple[int, int]]


def schedstat(pid: int) -> Sched:
    """tid -> (ns on a CPU, ns waiting in the run queue), for every thread of ``pid``."""
    out: Sched = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                ran, waited, _ = map(int, f.read().split())
        except OSError:  # the thread ended meanwhile
            continue
        out[int(tid)] = (ran, waited)
    return out


def delta(pid: int, before: Sched, after: Sched) -> dict[str, Any]:
    """Per thread (the event loop's is the process's own id) and in total, in seconds."""
    threads: dict[str, dict[str, float]] = {}
    for tid, (ran, waited) in after.items():
        r0, w0 = before.get(tid, (0, 0))
        if ran - r0 or waited - w0:
            name = "event loop" if tid == pid else f"thread {tid}"
            threads[name] = {"cpu_s": round((ran - r0) / 1e9, 3),
                             "runqueue_s": round((waited - w0) / 1e9, 3)}
    return {"cpu_s": round(sum(t["cpu_s"] for t in threads.values()), 3),
            "runqueue_s": round(sum(t["runqueue_s"] for t in threads.values()), 3),
            "threads": threads}


def action(hc: Any, pid: int, request: Callable[[], Any], stack_id: str | None,
           poll: float) -> tuple[str, dict[str, Any]]:
    s0 = schedstat(pid)
    began = time.perf_counter()
    answer = request()
    answered = time.perf_counter() - began
    s1 = schedstat(pid)
    stack_id = stack_id or answer["stack"]["id"]
    polls: list[float] = []
    while True:
        p0 = time.perf_counter()
        try:
            status = str(hc.stacks.get(stack_id).stack_status)
        except heat_exc.HTTPNotFound:
            status = "DELETE_COMPLETE"
        polls.append(time.perf_counter() - p0)
        if not status.endswith("_IN_PROGRESS"):
            break
        time.sleep(poll)  # the client's fixed polling interval is what is being modelled
    wall = time.perf_counter() - began
    s2 = schedstat(pid)
    return stack_id, {
        "wall_s": round(wall, 3), "status": status, "answer_s": round(answered, 3),
        "polls": len(polls), "median_poll_s": round(sorted(polls)[len(polls) // 2], 3),
        "last_poll_s": round(polls[-1], 3),
        "server_until_answer": delta(pid, s0, s1), "server_after_answer": delta(pid, s1, s2)}


def bench(args: argparse.Namespace) -> dict[str, Any]:
    record: dict[str, Any] = {
        "benchmark": f"wall time of flat {args.size} create + delete through kiln serve",
        "command": "python bench/wall_breakdown.py " + " ".join(sys.argv[1:]),
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": scenarios_bench.machine(), "runs": []}
    with tempfile.TemporaryDirectory() as tmp:
        kiln = start_kiln(Path(tmp) / "kiln", options=scenarios_bench.KILN_OPTIONS)
        tracer = None
        try:
            pid = kiln.proc.pid
            hc = heat_client.Client("1", endpoint=kiln.endpoint("bench"), token="x")
            scenarios_bench.warm_up(hc, scenarios_bench.parse(["--poll", str(args.poll)]))
            if args.strace:
                out = Path(tmp) / "strace.txt"
                tracer = subprocess.Popen(["strace", "-f", "-w", "-c", "-e",
                                           "trace=" + args.strace, "-p", str(pid),
                                           "-o", str(out)], stderr=subprocess.DEVNULL)
                time.sleep(1.0)  # strace attaches to every thread before the first action
            body = scenarios_bench.case("flat", args.size)
            for _ in range(args.runs):
                run: dict[str, Any] = {"load_average": round(os.getloadavg()[0], 2)}
                stack_id, run["create"] = action(hc, pid, lambda: hc.stacks.create(
                    stack_name=f"wall-{uuid.uuid4().hex[:8]}", disable_rollback=True,
                    **body.create), None, args.poll)
                _, run["delete"] = action(hc, pid, lambda sid=stack_id: hc.stacks.delete(sid),
                                          stack_id, args.poll)
                print(json.dumps(run), flush=True)
                record["runs"].append(run)
            if tracer is not None:
                tracer.send_signal(signal.SIGINT)
                tracer.wait(30)
                record["strace_summary"] = out.read_text().splitlines()
        finally:
            if tracer is not None and tracer.poll() is None:
                tracer.kill()
            kiln.stop()
    return record


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--poll", type=float, default=0.05)
    parser.add_argument("--strace", help="system calls to count, e.g. fdatasync,fsync")
    parser.add_argument("--json", type=Path, help="record in this file")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse(argv)
    record = bench(args)
    if args.json is not None:
        args.json.write_text(json.dumps(record, indent=2) + "\n")
    return record


if __name__ == "__main__":
    main()
