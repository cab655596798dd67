"""Does kiln/db/sqlite_fast.py still earn its keep? Its two paths against SQLAlchemy's, in CPU.

    .venv/bin/python bench/sqlite_fast_bench.py [--rounds 5] [--calls 3000] [--write]

In one process on a fresh SQLite file, alternated round by round (CPU time per call, so
a loaded machine shifts both sides alike):

- ``write``: a 2-row event INSERT (what a resource's transitions add in a writer batch)
  through ``sqlite_fast.execute`` against ``Connection.execute`` of the same statement,
  in one open transaction;
- ``agent_read``: one agent poll (``kiln.db.agent_view``: stack, resource, its signals)
  through ``sqlite_fast.InlineReader`` against the same function over a Session.

The end-to-end measurements that decided what stays (server CPU through ``kiln serve``,
each piece switched off) are in bench/README.md, "The SQLite fast path".
``--write`` records the run in bench/results/sqlite_fast.json.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sqlalchemy as sa
from sqlalchemy.orm import Session

from kiln.db import agent_view, resources, sqlite_fast, stacks
from kiln.db.engine import make_engine
from kiln.db.migrate import ensure_schema
from kiln.db.models import Event
from kiln.db.records import NewResource, NewStack

_INSERT = sa.insert(cast(sa.Table, Event.__table__))


def _row(stack_id: str, n: int) -> dict[str, Any]:
    return {"uuid": f"u{n}", "stack_id": stack_id, "resource_name": "r",
            "physical_resource_id": None, "resource_type": "T", "resource_action": "CREATE",
            "resource_status": "COMPLETE", "resource_status_reason": "x",
            "resource_properties": {"a": 1}, "created_at": dt.datetime(2026, 1, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    load = [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory() as tmp:
        engine = make_engine(f"sqlite:///{tmp}/bench.sqlite")
        ensure_schema(engine)

        @contextlib.contextmanager
        def tx() -> Iterator[Session]:
            with Session(engine, expire_on_commit=False) as s, s.begin():
                yield s

        with tx() as s:
            st = stacks.create_stack(s, NewStack(name="web", project_id="p1", template={
                "heat_template_version": "2018-08-31"}))
            resources.create_resources(s, [NewResource(
                st.id, st.id, "server", "OS::Heat::DeployedServer", metadata={"d": [1]})])
        poll = {"key": st.id, "scope": "p1", "project_id": "p1", "resource_name": "server",
                "owner": None}
        inline = sqlite_fast.InlineReader(engine)
        counter = iter(range(10**9))

        def write_fast(s: Session) -> None:
            assert sqlite_fast.execute(s, _INSERT, [_row(st.id, next(counter)) for _ in "ab"])

        def write_sqlalchemy(s: Session) -> None:
            s.connection().execute(_INSERT, [_row(st.id, next(counter)) for _ in "ab"])

        def read_fast(_s: Session) -> None:
            assert inline.run(agent_view.agent_view_rows, (), dict(poll)).resource is not None

        def read_sqlalchemy(_s: Session) -> None:
            with tx() as s:
                assert agent_view.read_agent_view(s, **poll).resource is not None

        cases: dict[str, Callable[[Session], None]] = {
            "write_sqlite_fast": write_fast, "write_sqlalchemy": write_sqlalchemy,
            "agent_read_sqlite_fast": read_fast, "agent_read_sqlalchemy": read_sqlalchemy}
        us: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.rounds):
            for name, fn in cases.items():
                with tx() as s:
                    s.connection()
                    began = time.process_time()
                    for _ in range(args.calls):
                        fn(s)
                    us[name].append(round((time.process_time() - began) / args.calls * 1e6, 1))
        inline.close()
    result = {"us_per_call": us, "rounds": args.rounds, "calls": args.calls,
              "load_average_at_start": load,
              "machine": f"{platform.machine()} cpus={len(os.sched_getaffinity(0))}",
              "python": platform.python_version(), "sqlalchemy": sa.__version__,
              "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
    print(json.dumps(result, indent=1))
    if args.write:
        (Path(__file__).parent / "results" / "sqlite_fast.json").write_text(
            json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
