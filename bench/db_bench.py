"""Hot-path write benchmark: resource status transitions, each an UPDATE of the resource row
plus one event row, as the engine writes them.

Modes:
  per_txn      one transaction per transition, synchronous (the naive baseline)
  facade_seq   through Database.write, awaiting each transition before the next
  facade_par   through Database.write from many concurrent tasks (how the engine runs:
               resources progress in parallel), so the writer coalesces them
  facade_par_queued  as facade_par, the resource UPDATE deferred with
               queue_resource_update so each batch sends its updates as one executemany

Also times schema creation at startup (create_all + stamp vs a full Alembic upgrade).

Usage: .venv/bin/python bench/db_bench.py [--url URL] [--transitions 10000] [--json PATH]
Default URL: a fresh SQLite file in a temporary directory (one per mode).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sqlalchemy.orm import Session

from kiln.db import events, resources, stacks
from kiln.db.engine import make_engine
from kiln.db.facade import Database
from kiln.db.migrate import ensure_schema
from kiln.db.records import NewEvent, NewResource, NewStack, ResourceValues

STATES = [("CREATE", "IN_PROGRESS"), ("CREATE", "COMPLETE"), ("UPDATE", "IN_PROGRESS"),
          ("UPDATE", "COMPLETE"), ("DELETE", "IN_PROGRESS")]
MAX_EVENTS = 1000   # heat.conf's default max_events_per_stack: purging is part of the cost


def transition(s: Session, stack_id: str, rid: int, name: str, action: str,
               status: str) -> None:
    values: ResourceValues = {"action": action, "status": status,
                              "status_reason": f"state changed to {action}_{status}"}
    resources.update_resource(s, rid, values)
    events.add_events(s, [NewEvent(stack_id, name, "OS::Heat::None", action, status,
                                   values["status_reason"], physical_resource_id=name)],
                      max_events_per_stack=MAX_EVENTS)


def transition_queued(s: Session, stack_id: str, rid: int, name: str, action: str,
                      status: str) -> None:
    """The same writes, with the resource update deferred (queue_resource_update) so a
    writer batch sends all its updates as one executemany."""
    values: ResourceValues = {"action": action, "status": status,
                              "status_reason": f"state changed to {action}_{status}"}
    resources.queue_resource_update(s, rid, values)
    events.add_events(s, [NewEvent(stack_id, name, "OS::Heat::None", action, status,
                                   values["status_reason"], physical_resource_id=name)],
                      max_events_per_stack=MAX_EVENTS)


def setup(url: str, n_resources: int) -> tuple[Any, str, list[tuple[int, str]]]:
    engine = make_engine(url)
    ensure_schema(engine)
    with Session(engine) as s, s.begin():
        st = stacks.create_stack(s, NewStack(name=f"bench-{time.time_ns()}", project_id="p",
                                             template={"heat_template_version": "2018-08-31"}))
        rows = resources.create_resources(s, [
            NewResource(st.id, st.id, f"r{i}", "OS::Heat::None") for i in range(n_resources)])
    return engine, st.id, [(r.id, r.name) for r in rows]


def run_per_txn(url: str, n: int) -> dict[str, Any]:
    engine, sid, rows = setup(url, n // len(STATES))
    t0, c0 = time.perf_counter(), time.process_time()
    for action, status in STATES:
        for rid, name in rows:
            with Session(engine) as s, s.begin():
                transition(s, sid, rid, name, action, status)
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    engine.dispose()
    done = len(rows) * len(STATES)
    return {"transitions": done, "seconds": round(dt, 3), "cpu_seconds": round(cpu, 3),
            "per_second": round(done / dt), "commits": done}


async def run_facade(url: str, n: int, concurrency: int,
                     fn: Any = transition) -> dict[str, Any]:
    engine, sid, rows = setup(url, n // len(STATES))
    db = Database(engine)
    queue: asyncio.Queue[tuple[int, str]] = asyncio.Queue()
    for row in rows:
        queue.put_nowait(row)

    async def worker() -> None:
        # each worker drives one resource through all its states, like the engine does
        while not queue.empty():
            rid, name = queue.get_nowait()
            for action, status in STATES:
                await db.write(fn, sid, rid, name, action, status)

    t0, c0 = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    commits = db.commits
    await db.close()
    done = len(rows) * len(STATES)
    return {"transitions": done, "seconds": round(dt, 3), "cpu_seconds": round(cpu, 3),
            "per_second": round(done / dt), "commits": commits, "concurrency": concurrency}


def measure_startup(tmp: str) -> dict[str, float]:
    """What ``kiln serve`` pays on first start (empty SQLite) and on later starts."""
    from kiln.db import migrate

    engine = make_engine(f"sqlite:///{os.path.join(tmp, 'startup.sqlite')}")
    t0 = time.perf_counter()
    ensure_schema(engine)
    t1 = time.perf_counter()
    ensure_schema(engine)
    t2 = time.perf_counter()
    engine.dispose()
    migrate.upgrade(f"sqlite:///{os.path.join(tmp, 'alembic.sqlite')}")
    t3 = time.perf_counter()
    return {"ensure_schema_empty_db_s": round(t1 - t0, 4),
            "ensure_schema_at_head_s": round(t2 - t1, 4),
            "alembic_upgrade_empty_db_s": round(t3 - t2, 4)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", help="database URL (default: fresh SQLite files)")
    ap.add_argument("--transitions", type=int, default=10000)
    ap.add_argument("--concurrency", type=int, default=100)
    ap.add_argument("--json", help="write results to this file")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        startup = measure_startup(tmp) if not args.url else {}

        def url(mode: str) -> str:
            return args.url or f"sqlite:///{os.path.join(tmp, mode + '.sqlite')}"

        results = {
            "per_txn": run_per_txn(url("per_txn"), args.transitions),
            "facade_seq": asyncio.run(run_facade(url("facade_seq"), args.transitions, 1)),
            "facade_par": asyncio.run(run_facade(url("facade_par"), args.transitions,
                                                 args.concurrency)),
            "facade_par_queued": asyncio.run(run_facade(url("facade_par_queued"),
                                                        args.transitions, args.concurrency,
                                                        transition_queued)),
        }
    out = {
        "benchmark": "db_bench: resource status transition = UPDATE resource + INSERT event "
                     f"(max_events_per_stack={MAX_EVENTS} purge included)",
        "backend": (args.url or "sqlite file").split("://")[0].split("@")[-1],
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_average_at_start": os.getloadavg()[0],
        "results": results,
        "startup": startup,
        "speedup_par_vs_per_txn": round(results["facade_par"]["per_second"]
                                        / results["per_txn"]["per_second"], 1),
        "speedup_par_queued_vs_per_txn": round(results["facade_par_queued"]["per_second"]
                                               / results["per_txn"]["per_second"], 1),
    }
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
