"""Kiln deployed as Heat is (issue 24): throughput with one and two engines, a signal's
latency across processes, and the broker messages and database writes per resource.

    PYTHONPATH=$PWD python bench/scaleout_bench.py throughput [--stacks 6] [--resources 200]
        [--engines 1,2] [--repeat 1] [--profile] [--json bench/results/scaleout_throughput.json]
    PYTHONPATH=$PWD python bench/scaleout_bench.py signal [--signals 50] [--kind hook]
        [--json bench/results/scaleout_signal.json]

Every run is a real deployment: a new PostgreSQL database on the machine's server, the
machine's RabbitMQ with a ``control_exchange`` and ``[kiln_engine] rpc_topic`` of its own
(nothing crosses with other users of the shared broker), real ``kiln api`` and
``kiln engine`` processes started through bench/counted_kiln.py, which counts each
process's broker publishes and SQL statements where they leave it.

``throughput``: ``--stacks`` stacks of ``--resources`` OS::Heat::RandomString (cheap,
cloud-free) are POSTed at once, alternately to two ``kiln api`` processes, and the
interval from the first POST until every stack is CREATE_COMPLETE is measured, with the
CPU seconds (user + system, psutil) of each API process, each engine and the PostgreSQL
backends serving this database (sampled every 0.5 s so a backend that leaves is still
counted) over exactly that interval; the broker publishes and SQL statements counted in
the processes, and PostgreSQL's own counters for the database (pg_stat_database:
commits, rows inserted/updated/deleted), over the same interval. Each engine count in
``--engines`` gets a fresh database; ``--repeat`` alternates them, so one load spike on
the shared machine does not fall on one configuration only. ``--profile`` records each
engine with py-spy (``--idle``, so the waits show) when py-spy is on PATH.

``signal``: ``--signals`` resources each paused on a pre-create hook (``--kind hook``) or
each waiting on its own wait-condition handle (``--kind wait``), signalled one after the
other; each signal is timed from the POST until the resource is CREATE_COMPLETE through
the API (polled every 5 ms), once with ``kiln serve`` (in-process, no broker) and once
with one engine and two APIs where the stack is created through the first API and
signalled through the second (the signal crosses API -> broker -> engine).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support import databases  # noqa: E402
from tests.support.server import KilnProcess, start_kiln  # noqa: E402

TRANSPORT_URL = "rabbit://guest:guest@127.0.0.1:5672/"
#: [DEFAULT] periodic_interval of the API processes (0: the default); see --api-periodic
API_PERIODIC = 0
#: --keep: leave each deployment's directory (configs, logs, counters) for reading
KEEP = False
COUNTED = [sys.executable, str(ROOT / "bench" / "counted_kiln.py")]


# --- the deployment -----------------------------------------------------------------------

@dataclass
class Deployment:
    """The processes of one deployment on one database, and where they count."""

    workdir: Path
    db_url: str
    exchange: str = field(default_factory=lambda: f"kiln-bench-{uuid.uuid4().hex[:10]}")
    processes: dict[str, KilnProcess] = field(default_factory=dict)

    @property
    def counts_dir(self) -> Path:
        return self.workdir / "counts"

    def options(self, broker: bool) -> dict[str, dict[str, Any]]:
        options: dict[str, dict[str, Any]] = {
            "database": {"connection": self.db_url},
            "DEFAULT": {"max_resources_per_stack": -1, "max_stacks_per_tenant": -1},
        }
        if broker:
            options["DEFAULT"].update({"transport_url": TRANSPORT_URL,
                                       "control_exchange": self.exchange,
                                       "rpc_response_timeout": 60,
                                       # one process per `kiln engine` (Heat's default
                                       # forks max(4, CPUs)): the benchmark counts
                                       # engines and measures each one's CPU and messages
                                       "num_engine_workers": 1})
            options["kiln_engine"] = {"rpc_topic": self.exchange}
            options["oslo_messaging_rabbit"] = {"amqp_auto_delete": "true"}
        return options

    def start(self, name: str, command: str) -> KilnProcess:
        options = self.options(broker=command != "serve")
        if command == "api" and API_PERIODIC:
            # kept for comparing with the runs before 8546974, where the API processes'
            # heartbeat loop spun once periodic_interval (or engine_dead_after / 2) had
            # passed (bench/README.md)
            options["DEFAULT"]["periodic_interval"] = API_PERIODIC
            options["kiln_engine"]["engine_dead_after"] = 2 * API_PERIODIC
        proc = start_kiln(self.workdir / name, command=command, options=options,
                          launcher=[*COUNTED, str(self.counts_dir)])
        self.processes[name] = proc
        return proc

    def stop(self) -> None:
        for proc in reversed(list(self.processes.values())):
            try:
                proc.stop(timeout=60)
            except AssertionError as exc:
                print(f"  (stop: {exc})"[:300], file=sys.stderr)

    def counts(self) -> dict[str, dict[str, int]]:
        """Each process's counters now (bench/counted_kiln.py), by process name."""
        found: dict[str, dict[str, int]] = {}
        for name, proc in self.processes.items():
            path = self.counts_dir / f"{proc.proc.pid}.json"
            try:
                found[name] = json.loads(path.read_text())
            except (OSError, ValueError):
                found[name] = {}
        return found


@contextmanager
def deployment(tag: str) -> Iterator[Deployment]:
    with databases.postgresql_database() as url:
        tmp = tempfile.mkdtemp(prefix=f"scaleout-bench-{tag}-")
        dep = Deployment(Path(tmp), url)
        try:
            yield dep
        finally:
            dep.stop()
            if not KEEP:
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                print(f"  logs kept in {tmp}", file=sys.stderr)


def _pg_admin() -> Any:
    import psycopg
    return psycopg.connect(host="127.0.0.1", port=5432, user="postgres", dbname="postgres",
                           autocommit=True)


def _db_name(url: str) -> str:
    return url.rsplit("/", 1)[1].split("?", 1)[0]


def pg_stats(db: str) -> dict[str, int]:
    with _pg_admin() as conn:
        row = conn.execute(
            "SELECT xact_commit, xact_rollback, tup_inserted, tup_updated, tup_deleted,"
            " tup_returned, tup_fetched, blks_hit, blks_read"
            " FROM pg_stat_database WHERE datname = %s", (db,)).fetchone()
    keys = ["xact_commit", "xact_rollback", "tup_inserted", "tup_updated", "tup_deleted",
            "tup_returned", "tup_fetched", "blks_hit", "blks_read"]
    return dict(zip(keys, (int(v) for v in row), strict=True)) if row else {}


def pg_backends(db: str) -> list[int]:
    with _pg_admin() as conn:
        rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s",
                            (db,)).fetchall()
    return [int(r[0]) for r in rows]


class CpuSampler:
    """CPU seconds (user + system) of the named processes and of the PostgreSQL backends
    of one database, over an interval: sampled every 0.5 s so a backend that exits
    before the end keeps what it used while seen."""

    def __init__(self, named: dict[str, int], db: str) -> None:
        self.named = named
        self.db = db
        self.first: dict[int, float] = {}
        self.last: dict[int, float] = {}
        self.backend_pids: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _cpu(pid: int) -> float | None:
        try:
            t = psutil.Process(pid).cpu_times()
        except psutil.Error:
            return None
        return float(t.user + t.system)

    def _sample(self, initial: bool) -> None:
        import psycopg
        try:
            backends = pg_backends(self.db)
        except psycopg.Error:  # a sample lost to a busy server: the next one counts
            backends = []
        for pid in backends:
            if pid not in self.backend_pids:
                self.backend_pids.add(pid)
                if not initial:
                    self.first.setdefault(pid, 0.0)  # new during the interval: from 0
        for pid in [*self.named.values(), *self.backend_pids]:
            cpu = self._cpu(pid)
            if cpu is None:
                continue
            self.first.setdefault(pid, cpu)
            self.last[pid] = cpu

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            self._sample(initial=False)

    def start(self) -> None:
        self._sample(initial=True)
        self._thread.start()

    def stop(self) -> dict[str, float]:
        self._stop.set()
        self._thread.join()
        self._sample(initial=False)
        used = {name: round(self.last.get(pid, 0.0) - self.first.get(pid, 0.0), 2)
                for name, pid in self.named.items()}
        used["postgresql"] = round(sum(self.last[p] - self.first.get(p, 0.0)
                                       for p in self.backend_pids if p in self.last), 2)
        return used


def _delta(after: dict[str, dict[str, int]],
           before: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    return {name: {k: v - before.get(name, {}).get(k, 0) for k, v in counts.items()
                   if v - before.get(name, {}).get(k, 0)}
            for name, counts in after.items()}


def _total(per_process: dict[str, dict[str, int]], key: str) -> int:
    return sum(c.get(key, 0) for c in per_process.values())


# --- throughput ---------------------------------------------------------------------------

def random_strings(count: int) -> dict[str, Any]:
    return {"heat_template_version": "2018-08-31",
            "resources": {f"r{i}": {"type": "OS::Heat::RandomString",
                                    "properties": {"length": 8}} for i in range(count)}}


def _status_all(client: httpx.Client) -> dict[str, str]:
    r = client.get("/stacks", params={"limit": 1000})
    r.raise_for_status()
    return {s["stack_name"]: s["stack_status"] for s in r.json()["stacks"]}


def _py_spy() -> str | None:
    return shutil.which("py-spy")


def throughput_once(engines: int, stacks: int, resources: int, profile: bool,
                    out_dir: Path) -> dict[str, Any]:
    with deployment(f"tp{engines}") as dep:
        for i in range(engines):
            dep.start(f"engine{i + 1}", "engine")
        apis = [dep.start("api1", "api"), dep.start("api2", "api")]
        db = _db_name(dep.db_url)
        template = random_strings(resources)
        clients = [httpx.Client(base_url=a.endpoint("demo"), timeout=120) for a in apis]
        spies: list[subprocess.Popen[bytes]] = []
        names = [f"s{i}" for i in range(stacks)]
        pids = {name: p.proc.pid for name, p in dep.processes.items()}
        sampler = CpuSampler(pids, db)
        load_before = os.getloadavg()
        # the counters are written every 0.5 s, and PostgreSQL publishes a backend's
        # statistics at most once a second: a fresh, settled "before"
        time.sleep(2.0)
        counts_before = dep.counts()
        pg_before = pg_stats(db)
        spy = _py_spy() if profile else None
        if spy:
            for name, pid in pids.items():
                if name.startswith("engine"):
                    target = out_dir / f"scaleout_profile_{engines}e_{name}.txt"
                    spies.append(subprocess.Popen(
                        [spy, "record", "--idle", "--format", "raw", "--rate", "50",
                         "--pid", str(pid), "--output", str(target)],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        sampler.start()
        started = time.monotonic()
        errors: list[str] = []

        def post(i: int) -> None:
            r = clients[i % 2].post("/stacks", json={"stack_name": names[i],
                                                     "template": template})
            if r.status_code != 201:
                errors.append(f"{names[i]}: {r.status_code} {r.text[:200]}")

        threads = [threading.Thread(target=post, args=(i,)) for i in range(stacks)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        accepted = time.monotonic() - started
        done_at: dict[str, float] = {}
        final: dict[str, str] = {}
        deadline = started + 900
        while len(final) < stacks - len(errors) and time.monotonic() < deadline:
            for name, status in _status_all(clients[0]).items():
                if name not in final and not status.endswith("IN_PROGRESS"):
                    final[name] = status
                    done_at[name] = time.monotonic() - started
            time.sleep(0.25)  # a client polling the list, as a user waits
        elapsed = time.monotonic() - started
        cpu = sampler.stop()
        time.sleep(2.0)  # the last counters and PostgreSQL's statistics flushed
        counts_after = dep.counts()
        pg_after = pg_stats(db)
        for s in spies:
            s.send_signal(2)
        for s in spies:
            try:
                s.wait(30)
            except subprocess.TimeoutExpired:
                s.kill()
        for c in clients:
            c.close()
        complete = sum(1 for s in final.values() if s == "CREATE_COMPLETE")
        counted = _delta(counts_after, counts_before)
        pg = {k: pg_after[k] - pg_before.get(k, 0) for k in pg_after}
        created = complete * resources
        per_resource = {
            "broker_publishes": round(_total(counted, "publish") / created, 3) if created
            else None,
            "sql_statements": round(_total(counted, "sql") / created, 2) if created else None,
            "sql_commits_counted": round(_total(counted, "sql.COMMIT") / created, 3)
            if created else None,
            "pg_xact_commit": round(pg["xact_commit"] / created, 3) if created else None,
            "pg_rows_written": round((pg["tup_inserted"] + pg["tup_updated"]
                                      + pg["tup_deleted"]) / created, 2) if created else None,
        }
        return {
            "engines": engines, "stacks": stacks, "resources_per_stack": resources,
            "complete": complete, "final": dict(sorted(final.items())), "errors": errors,
            "seconds": round(elapsed, 2), "accept_seconds": round(accepted, 2),
            "stack_done_seconds": sorted(round(v, 1) for v in done_at.values()),
            "stacks_per_minute": round(complete / elapsed * 60, 2),
            "resources_per_second": round(created / elapsed, 1),
            "cpu_seconds": cpu, "cpu_total": round(sum(cpu.values()), 2),
            "cpu_capacity_seconds": round(elapsed * (os.cpu_count() or 1), 1),
            "loadavg_before": [round(x, 1) for x in load_before],
            "loadavg_after": [round(x, 1) for x in os.getloadavg()],
            "counted": counted, "pg_stat_database": pg, "per_resource": per_resource,
        }


def throughput(args: argparse.Namespace) -> dict[str, Any]:
    engine_counts = [int(x) for x in args.engines.split(",")]
    runs: list[dict[str, Any]] = []
    out_dir = Path(args.json).parent if args.json else ROOT / "bench" / "results"
    for rep in range(args.repeat):
        for engines in engine_counts:
            print(f"repeat {rep + 1}: {engines} engine(s), {args.stacks} x "
                  f"{args.resources} resources ...", file=sys.stderr, flush=True)
            run = throughput_once(engines, args.stacks, args.resources,
                                  args.profile and rep == 0, out_dir)
            run["repeat"] = rep + 1
            runs.append(run)
            print(f"  {run['stacks_per_minute']} stacks/min in {run['seconds']} s, "
                  f"complete {run['complete']}/{args.stacks}, cpu {run['cpu_seconds']}, "
                  f"load {run['loadavg_before'][0]}->{run['loadavg_after'][0]}",
                  file=sys.stderr, flush=True)
    ratios = []
    for rep in range(1, args.repeat + 1):
        by = {r["engines"]: r for r in runs if r["repeat"] == rep}
        if 1 in by and 2 in by and by[1]["stacks_per_minute"]:
            ratios.append(round(by[2]["stacks_per_minute"] / by[1]["stacks_per_minute"], 2))
    return {"benchmark": "scaleout_throughput", "runs": runs, "ratios_2_over_1": ratios,
            "cpu_bound": [cpu_bound(r) for r in runs if r["engines"] == 1 and r["complete"]]}


def cpu_bound(run: dict[str, Any]) -> dict[str, float]:
    """What the CPU split of a one-engine run allows two engines on this machine: with
    ``e`` engine CPU seconds per stack and ``o`` the rest (APIs and PostgreSQL), one
    engine cannot pass one core (60 / e stacks a minute) and two engines cannot pass the
    machine (60 * cores / (e + o)); the best ratio is their quotient, capped at 2."""
    cpu, stacks = run["cpu_seconds"], run["complete"]
    e = sum(v for k, v in cpu.items() if k.startswith("engine")) / stacks
    o = sum(v for k, v in cpu.items() if not k.startswith("engine")) / stacks
    cores = os.cpu_count() or 1
    one = 60 / max(e, 1e-6)  # a tiny smoke run may measure no engine CPU at all
    two = min(2 * one, 60 * cores / (e + o))
    return {"engine_cpu_per_stack": round(e, 4), "other_cpu_per_stack": round(o, 4),
            "one_engine_max_per_minute": round(one), "two_engines_max_per_minute": round(two),
            "best_ratio": round(two / one, 2)}


# --- signal latency -----------------------------------------------------------------------

def hooked(count: int) -> tuple[dict[str, Any], dict[str, Any]]:
    template = {"heat_template_version": "2018-08-31",
                "resources": {f"r{i}": {"type": "OS::Heat::None"} for i in range(count)}}
    env = {"resource_registry": {"resources": {f"r{i}": {"hooks": "pre-create"}
                                               for i in range(count)}}}
    return template, env


def waiting(count: int) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    for i in range(count):
        resources[f"h{i}"] = {"type": "OS::Heat::WaitConditionHandle"}
        resources[f"r{i}"] = {"type": "OS::Heat::WaitCondition",
                              "properties": {"handle": {"get_resource": f"h{i}"},
                                             "count": 1, "timeout": 600}}
    return {"heat_template_version": "2018-08-31", "resources": resources}


def _resource_status(c: httpx.Client, path: str, name: str) -> str:
    r = c.get(f"{path}/resources/{name}")
    if r.status_code == 404:
        return "NONE"
    r.raise_for_status()
    return str(r.json()["resource"]["resource_status"])


def _wait(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)  # waiting for the stack to reach its paused state


def _paused_count(c: httpx.Client, path: str, kind: str) -> int:
    if kind == "hook":
        events = c.get(f"{path}/events", params={"limit": 10000}).json()["events"]
        return len({e["resource_name"] for e in events
                    if "paused until Hook pre-create" in str(e["resource_status_reason"])})
    resources = c.get(f"{path}/resources").json()["resources"]
    return sum(1 for r in resources if r["resource_name"].startswith("r")
               and r["resource_status"] == "CREATE_IN_PROGRESS")


def signal_series(create: httpx.Client, send: httpx.Client, watch: httpx.Client,
                  count: int, kind: str) -> dict[str, Any]:
    body: dict[str, Any] = {"stack_name": f"sig-{uuid.uuid4().hex[:6]}"}
    if kind == "hook":
        body["template"], body["environment"] = hooked(count)
    else:
        body["template"] = waiting(count)
    r = create.post("/stacks", json=body)
    assert r.status_code == 201, r.text
    path = f"/stacks/{body['stack_name']}/{r.json()['stack']['id']}"
    _wait(lambda: _paused_count(watch, path, kind) >= count, 300,
          f"{count} resources to pause")
    post_ms: list[float] = []
    seen_ms: list[float] = []
    for i in range(count):
        started = time.perf_counter()
        if kind == "hook":
            r = send.post(f"{path}/resources/r{i}/signal", json={"unset_hook": "pre-create"})
        else:
            r = send.post(f"{path}/resources/h{i}/signal",
                          json={"status": "SUCCESS", "reason": "ok", "data": "x", "id": "1"})
        answered = time.perf_counter()
        assert r.status_code == 200, r.text
        while _resource_status(watch, path, f"r{i}") != "CREATE_COMPLETE":
            if time.perf_counter() - started > 120:
                raise AssertionError(f"r{i} never completed")
            time.sleep(0.005)  # the observer's poll: 5 ms granularity
        seen = time.perf_counter()
        post_ms.append((answered - started) * 1000)
        seen_ms.append((seen - started) * 1000)
    return {"post_ms": _pct(post_ms), "state_seen_ms": _pct(seen_ms)}


def _pct(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)

    return {"n": len(ordered), "p50": round(statistics.median(ordered), 1),
            "p90": at(0.9), "p99": at(0.99), "max": round(ordered[-1], 1),
            "mean": round(statistics.fmean(ordered), 1)}


def signal(args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {"benchmark": "scaleout_signal", "kind": args.kind,
                              "signals": args.signals, "loadavg_before": os.getloadavg()}
    with deployment("sig-serve") as dep:
        serve = dep.start("serve", "serve")
        with httpx.Client(base_url=serve.endpoint("demo"), timeout=120) as c:
            before = dep.counts()
            result["in_process"] = signal_series(c, c, c, args.signals, args.kind)
            time.sleep(0.6)
            result["in_process"]["counted"] = _delta(dep.counts(), before)
    with deployment("sig-split") as dep:
        dep.start("engine1", "engine")
        one, two = dep.start("api1", "api"), dep.start("api2", "api")
        with ExitStack() as stack:
            c1 = stack.enter_context(httpx.Client(base_url=one.endpoint("demo"), timeout=120))
            c2 = stack.enter_context(httpx.Client(base_url=two.endpoint("demo"), timeout=120))
            time.sleep(0.6)
            before = dep.counts()
            result["cross_process"] = signal_series(c1, c2, c1, args.signals, args.kind)
            time.sleep(0.6)
            result["cross_process"]["counted"] = _delta(dep.counts(), before)
    result["loadavg_after"] = os.getloadavg()
    inp, cross = result["in_process"]["state_seen_ms"], result["cross_process"]["state_seen_ms"]
    result["ratio_p50"] = round(cross["p50"] / inp["p50"], 2)
    result["ratio_p99"] = round(cross["p99"] / inp["p99"], 2)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    tp = sub.add_parser("throughput")
    tp.add_argument("--stacks", type=int, default=6)
    tp.add_argument("--resources", type=int, default=200)
    tp.add_argument("--engines", default="1,2")
    tp.add_argument("--repeat", type=int, default=1)
    tp.add_argument("--profile", action="store_true")
    tp.add_argument("--json", default=None)
    sg = sub.add_parser("signal")
    sg.add_argument("--signals", type=int, default=50)
    sg.add_argument("--kind", choices=["hook", "wait"], default="hook")
    sg.add_argument("--json", default=None)
    parser.add_argument("--keep", action="store_true",
                        help="keep each deployment's logs and counters (printed paths)")
    parser.add_argument("--api-periodic", type=int, default=0,
                        help="periodic_interval (and engine_dead_after = twice it) of the "
                             "API processes: 3600 keeps their heartbeat loop from spinning "
                             "during the run (bench/README.md); 0: the defaults")
    args = parser.parse_args()
    global KEEP, API_PERIODIC
    KEEP = args.keep
    API_PERIODIC = args.api_periodic
    result = throughput(args) if args.mode == "throughput" else signal(args)
    result["command"] = " ".join(["python", "bench/scaleout_bench.py", *sys.argv[1:]])
    result["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version(),
                         "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    text = json.dumps(result, indent=1, sort_keys=True)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
