"""Engine scenarios measured through the Orchestration API, as a Heat user sees them.

    .venv/bin/python bench/scenarios_bench.py [--sizes 100,1000] [--scenarios flat,chain,...]
        [--endpoint URL] [--runs 1] [--poll 0.05] [--write | --json PATH]

Without ``--endpoint`` a real ``kiln serve`` is started (SQLite in a temporary state
directory, a free port, ``max_resources_per_stack = -1`` and 16 MB template/body limits
so 10,000-resource stacks are allowed); with it, the same scenarios run against any
Heat-compatible endpoint (e.g. the live Heat 27 at http://127.0.0.1:8104/v1/admin).
Each stack is created, updated and deleted with python-heatclient, and every action is
timed from the request until ``stacks.get`` (polled every ``--poll`` seconds, the way a
client waits) shows it is no longer IN_PROGRESS, so the times include the client's
polling granularity. The server's peak RSS (its process plus children, sampled every
50 ms with psutil) is recorded per scenario, and so are the CPU seconds the server spent
on each action: on a loaded machine they show the work itself where the wall clock
mostly shows the wait for a CPU.

Why these scenarios: they are the shapes the engine issue sets targets for -- wide flat
stacks (scheduling and database cost per resource), a deep chain (latency of waking a
dependant; ``yaqlchain`` adds a yaql evaluation per link), fan-in, real waits in
parallel (TestResource), and nested stacks (the in-engine nested path).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psutil
from heatclient import client as heat_client
from heatclient import exc as heat_exc

HOT = "2018-08-31"
SCENARIOS = ("flat", "rg", "chain", "fanin", "testres", "nested", "yaqlchain", "groups")
#: scenarios run at 10,000 only when asked for explicitly (the others would take minutes)
LARGE_OK = ("flat", "rg", "chain", "groups")


@dataclass
class Case:
    """One scenario at one size: the create and the update request bodies."""

    create: dict[str, Any]
    update: dict[str, Any]


def _hot(resources: dict[str, Any]) -> dict[str, Any]:
    return {"heat_template_version": HOT, "resources": resources}


def flat(n: int, salt: str) -> dict[str, Any]:
    """N RandomStrings. Changing ``salt`` replaces each one (salt is not update_allowed)."""
    props = {"salt": salt}
    return {"template": _hot({f"r{i}": {"type": "OS::Heat::RandomString", "properties": props}
                              for i in range(n)})}


def group(n: int, salt: str) -> dict[str, Any]:
    """A ResourceGroup of N RandomStrings; the update changes every member's salt."""
    return {"template": _hot({"group": {"type": "OS::Heat::ResourceGroup", "properties": {
        "count": n, "resource_def": {"type": "OS::Heat::RandomString",
                                     "properties": {"salt": salt}}}}})}


def chain(n: int, value: str) -> dict[str, Any]:
    """N Values, each the previous one's value: the update changes every value in place."""
    res: dict[str, Any] = {"v0": {"type": "OS::Heat::Value", "properties": {"value": value}}}
    for i in range(1, n):
        res[f"v{i}"] = {"type": "OS::Heat::Value",
                        "properties": {"value": {"get_attr": [f"v{i - 1}", "value"]}}}
    return {"template": _hot(res)}


def yaql_chain(n: int, value: str) -> dict[str, Any]:
    """N Values, each ``yaql: int($.data) + 1`` of the previous one's value (one yaql
    evaluation per resource, on the critical path); the update changes the first value."""
    start = {"a": "0", "b": "1000"}.get(value, "0")
    res: dict[str, Any] = {"v0": {"type": "OS::Heat::Value", "properties": {"value": start}}}
    for i in range(1, n):
        res[f"v{i}"] = {"type": "OS::Heat::Value", "properties": {"value": {"yaql": {
            "expression": "int($.data) + 1", "data": {"get_attr": [f"v{i - 1}", "value"]}}}}}
    return {"template": _hot(res)}


def fanin(n: int, value: str) -> dict[str, Any]:
    """N Values feeding one Value (a list of get_attr): the update changes all N + 1."""
    res: dict[str, Any] = {f"v{i}": {"type": "OS::Heat::Value",
                                     "properties": {"value": f"{value}-{i}"}} for i in range(n)}
    res["sink"] = {"type": "OS::Heat::Value", "properties": {
        "type": "comma_delimited_list",
        "value": [{"get_attr": [f"v{i}", "value"]} for i in range(n)]}}
    return {"template": _hot(res)}


def testres(n: int, value: str) -> dict[str, Any]:
    """N TestResources waiting 1 s on create and on update (value is update_allowed)."""
    props = {"value": value, "action_wait_secs": {"create": 1, "update": 1}}
    return {"template": _hot({f"t{i}": {"type": "OS::Heat::TestResource", "properties": props}
                              for i in range(n)})}


TEN_RANDOM = {"heat_template_version": HOT,
              "parameters": {"salt": {"type": "string", "default": ""}},
              "resources": {f"s{i}": {"type": "OS::Heat::RandomString",
                                      "properties": {"salt": {"get_param": "salt"}}}
                            for i in range(10)}}


def nested(n: int, salt: str) -> dict[str, Any]:
    """A ResourceGroup of N/10 provider-template stacks of 10 RandomStrings each."""
    body = {"template": _hot({"group": {"type": "OS::Heat::ResourceGroup", "properties": {
        "count": max(n // 10, 1),
        "resource_def": {"type": "Bench::TenRandom", "properties": {"salt": salt}}}}})}
    body["files"] = {"ten_random.yaml": json.dumps(TEN_RANDOM)}
    body["environment"] = {"resource_registry": {"Bench::TenRandom": "ten_random.yaml"}}
    return body


def groups(n: int, salt: str) -> dict[str, Any]:
    """N/1,000 ResourceGroups of 1,000 RandomStrings each (issue 26's 10 x 1,000 and
    100 x 1,000): many large nested stacks side by side, each its own template and load."""
    member = {"type": "OS::Heat::RandomString", "properties": {"salt": salt}}
    return {"template": _hot({f"g{i}": {"type": "OS::Heat::ResourceGroup", "properties": {
        "count": min(n, 1000), "resource_def": member}} for i in range(max(n // 1000, 1))})}


BUILDERS: dict[str, Callable[[int, str], dict[str, Any]]] = {
    "flat": flat, "rg": group, "chain": chain, "fanin": fanin, "testres": testres,
    "nested": nested, "yaqlchain": yaql_chain, "groups": groups}


def case(scenario: str, n: int) -> Case:
    build = BUILDERS[scenario]
    return Case(create=build(n, "a"), update=build(n, "b"))


class RssSampler:
    """Peak resident memory of a process tree, sampled on a thread every 50 ms."""

    def __init__(self, pid: int) -> None:
        self.proc = psutil.Process(pid)
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> int:
        total = 0
        for p in [self.proc, *self.proc.children(recursive=True)]:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                continue
        return total

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            try:
                self.peak = max(self.peak, self.sample())
            except psutil.Error:
                return

    def cpu_seconds(self) -> float:
        """User + system CPU of the tree so far: the work itself, whatever the load."""
        total = 0.0
        for p in [self.proc, *self.proc.children(recursive=True)]:
            try:
                times = p.cpu_times()
            except psutil.Error:
                continue
            total += times.user + times.system
        return total

    def reset(self) -> None:
        self.peak = self.sample()

    def start(self) -> None:
        self.reset()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def wait(hc: Any, stack_id: str, poll: float, timeout: float) -> str:
    """Poll stacks.get until the action ends; a stack that is gone counts as deleted."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            status = str(hc.stacks.get(stack_id).stack_status)
        except heat_exc.HTTPNotFound:
            return "DELETE_COMPLETE"
        if not status.endswith("_IN_PROGRESS"):
            return status
        if time.monotonic() > deadline:
            raise SystemExit(f"stack {stack_id} still {status} after {timeout}s")
        time.sleep(poll)  # the client's fixed polling interval is what is being modelled


def run_case(hc: Any, scenario: str, n: int, args: argparse.Namespace,
             rss: RssSampler | None) -> dict[str, Any]:
    """Create, update and delete one stack; the seconds and the final status of each."""
    body = case(scenario, n)
    name = f"bench-{scenario}-{n}-{uuid.uuid4().hex[:8]}"
    out: dict[str, Any] = {"scenario": scenario, "size": n,
                           "load_average_at_start": round(os.getloadavg()[0], 2)}
    peaks: list[int] = []

    def timed(action: str, request: Callable[[], Any], stack_id: str | None) -> str:
        cpu = rss.cpu_seconds() if rss is not None else 0.0
        if rss is not None:
            rss.reset()
        began = time.perf_counter()
        answer = request()
        stack_id = stack_id or answer["stack"]["id"]
        out["stack_id"] = stack_id
        status = wait(hc, stack_id, args.poll, args.timeout)
        out[f"{action}_s"] = round(time.perf_counter() - began, 3)
        if rss is not None:
            out[f"{action}_server_cpu_s"] = round(rss.cpu_seconds() - cpu, 3)
            out[f"{action}_peak_rss_mb"] = round(rss.peak / 2**20, 1)
            peaks.append(rss.peak)
        out[f"{action}_status"] = status
        return status

    status = timed("create", lambda: hc.stacks.create(
        stack_name=name, disable_rollback=True, **body.create), None)
    stack_id = str(out["stack_id"])
    if status == "CREATE_COMPLETE" and not args.no_update:
        timed("update", lambda: hc.stacks.update(stack_id, existing=False, **body.update),
              stack_id)
    timed("delete", lambda: hc.stacks.delete(stack_id), stack_id)
    if rss is not None:
        # what the server keeps once the stack is gone (issue 26: <= 200 MB after the
        # delete of 100,000 resources); a second for the last writes and cleanups
        time.sleep(1.0)
        out["rss_after_delete_mb"] = round(rss.sample() / 2**20, 1)
    del out["stack_id"]
    if peaks:
        out["server_peak_rss_mb"] = round(max(peaks) / 2**20, 1)
    out["load_average_at_end"] = round(os.getloadavg()[0], 2)
    return out


def machine() -> dict[str, Any]:
    return {"python": platform.python_version(), "machine": platform.machine(),
            "platform": platform.platform(), "cpus": os.cpu_count(),
            "memory_gb": round(psutil.virtual_memory().total / 2**30, 1)}


class Profiler:
    """py-spy recording the server while one case runs (collapsed stacks, one file a case)."""

    def __init__(self, pid: int | None, directory: Path | None) -> None:
        self.pid = pid
        self.directory = directory
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, label: str) -> None:
        if self.pid is None or self.directory is None:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        spy = Path(sys.executable).parent / "py-spy"
        self.proc = subprocess.Popen(
            [str(spy), "record", "--pid", str(self.pid), "--format", "raw", "--rate", "200",
             "--subprocesses", "--output", str(self.directory / f"{label}.txt")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)  # py-spy needs a moment to attach before the case starts

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGINT)
            self.proc.wait(60)
            self.proc = None


def warm_up(hc: Any, args: argparse.Namespace) -> float:
    """One small stack first, so the first measured case does not pay for lazy imports."""
    began = time.perf_counter()
    stack_id = hc.stacks.create(stack_name=f"bench-warmup-{uuid.uuid4().hex[:8]}",
                                **chain(3, "w"))["stack"]["id"]
    wait(hc, stack_id, args.poll, args.timeout)
    hc.stacks.delete(stack_id)
    wait(hc, stack_id, args.poll, args.timeout)
    return round(time.perf_counter() - began, 3)


def cases(args: argparse.Namespace) -> list[tuple[str, int]]:
    return [(scenario, n) for n in args.sizes for scenario in args.scenarios
            if n < 10000 or scenario in LARGE_OK or args.force_large]


def run_all(hc: Any, args: argparse.Namespace, rss: RssSampler | None,
            pid: int | None = None, only: list[tuple[str, int]] | None = None,
            ) -> list[dict[str, Any]]:
    results = []
    profiler = Profiler(pid, args.py_spy)
    for scenario, n in cases(args) if only is None else only:
        for run in range(args.runs):
            profiler.start(f"{scenario}-{n}-{run}")
            try:
                result = run_case(hc, scenario, n, args, rss)
            except heat_exc.HTTPException as exc:
                result = {"scenario": scenario, "size": n, "error": str(exc)}
            finally:
                profiler.stop()
            print(json.dumps(result), flush=True)
            results.append(result)
    return results


#: the ``kiln serve`` configuration of every run: 10,000-resource stacks allowed
KILN_OPTIONS = {"DEFAULT": {"max_resources_per_stack": -1, "max_events_per_stack": 1000,
                            "max_template_size": 1 << 24, "max_json_body_size": 1 << 25}}


def run_on_new_server(args: argparse.Namespace, record: dict[str, Any],
                      only: list[tuple[str, int]] | None = None) -> list[dict[str, Any]]:
    """Start ``kiln serve`` on a fresh SQLite file, warm it up, run the cases, stop it."""
    from tests.support.server import start_kiln

    with tempfile.TemporaryDirectory() as tmp:
        kiln = start_kiln(Path(tmp) / "kiln", options=KILN_OPTIONS)
        record.setdefault("target", {"server": "kiln serve",
                                     "database": "sqlite (state_path, WAL)",
                                     "startup_s": round(kiln.startup_seconds, 3)})
        rss = RssSampler(kiln.proc.pid)
        rss.start()
        try:
            hc = heat_client.Client("1", endpoint=kiln.endpoint("bench"), token="x")
            if not args.no_warm_up:
                record.setdefault("warm_up_s", warm_up(hc, args))
            # what the server holds before any measured stack: the per-action peaks
            # below are this plus what the action itself needs
            record.setdefault("server_rss_after_warm_up_mb",
                              round(rss.sample() / 2**20, 1))
            results = run_all(hc, args, rss, kiln.proc.pid, only)
        finally:
            rss.stop()
            kiln.stop()
        record["server_peak_rss_mb"] = max(record.get("server_peak_rss_mb", 0.0),
                                           round(rss.peak / 2**20, 1))
    return results


def bench(args: argparse.Namespace) -> dict[str, Any]:
    record: dict[str, Any] = {
        "benchmark": "engine scenarios through the Orchestration API (python-heatclient, "
                     f"stacks.get polled every {args.poll}s)",
        "command": "python bench/scenarios_bench.py " + " ".join(sys.argv[1:]),
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "machine": machine()}
    if args.endpoint:
        record["target"] = {"endpoint": args.endpoint}
        hc = heat_client.Client("1", endpoint=args.endpoint, token="x")
        record["warm_up_s"] = warm_up(hc, args)
        record["results"] = run_all(hc, args, None)
        return record
    if not args.server_per_case:
        record["results"] = run_on_new_server(args, record)
        return record
    # each case on its own server: a case's peak RSS then holds nothing an earlier case
    # left behind (freed memory a process keeps mapped, caches)
    record["server_per_case"] = True
    record["results"] = []
    for one in cases(args):
        record["results"].extend(run_on_new_server(args, record, [one]))
    return record


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000",
                        type=lambda s: [int(x) for x in s.split(",")])
    parser.add_argument("--scenarios", default=",".join(SCENARIOS),
                        type=lambda s: [x for x in s.split(",") if x])
    parser.add_argument("--endpoint", help="measure this endpoint instead of a new kiln serve")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--poll", type=float, default=0.05)
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--no-update", action="store_true")
    parser.add_argument("--no-warm-up", action="store_true",
                        help="no warm-up stack: the first case pays every first use")
    parser.add_argument("--force-large", action="store_true",
                        help="run fanin/testres/nested at 10,000 too")
    parser.add_argument("--write", action="store_true",
                        help="record in bench/results/scenarios.json")
    parser.add_argument("--json", type=Path, help="record in this file")
    parser.add_argument("--server-per-case", action="store_true",
                        help="a new kiln serve for each scenario and size")
    parser.add_argument("--py-spy", type=Path, metavar="DIR",
                        help="profile the server with py-spy during each case, into DIR")
    args = parser.parse_args(argv)
    unknown = set(args.scenarios) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenarios {sorted(unknown)}; choose from {SCENARIOS}")
    return args


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse(argv)
    record = bench(args)
    text = json.dumps(record, indent=2) + "\n"
    target = args.json or (Path(__file__).resolve().parent / "results" / "scenarios.json"
                           if args.write else None)
    if target is not None:
        target.write_text(text)
    else:
        print(text)
    return record


if __name__ == "__main__":
    main()
