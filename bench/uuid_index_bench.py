"""What a random uuid costs a growing SQLite table, per inserted row.

    .venv/bin/python bench/uuid_index_bench.py [--sizes 10000,100000] [--json PATH]

A table shaped like ``resource`` (an integer key, a unique ``uuid`` column, a
``(stack_id, name)`` index, a short JSON text) on a fresh WAL file with
``synchronous=NORMAL``, as Kiln opens SQLite, is filled in transactions of 500 rows
(the engine's insert slice), a new stack id every 1,000 rows (a ResourceGroup's
child). Three ways: the ``uuid`` a random version 4 uuid (Kiln before issue 26's
session 14), a time-ordered one (:func:`kiln.db.ids.ordered_uuid`), and no uuid index
at all (the floor). Process CPU microseconds per row; with random uuids the cost per
row grows with the table (each insert lands on a random page of the index), with
ordered ones it stays flat.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kiln.db.ids import ordered_uuid


def fill(path: Path, n: int, make: Callable[[], str], unique: bool) -> float:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("CREATE TABLE r (id INTEGER PRIMARY KEY, uuid VARCHAR(36)"
                 f"{' UNIQUE' if unique else ''}, stack_id VARCHAR(36), name TEXT, props TEXT)")
    conn.execute("CREATE INDEX ix_r_stack_name ON r (stack_id, name)")
    stack = str(uuid.uuid4())
    began = time.process_time()
    for batch in range(n // 500):
        if batch % 2 == 0:
            stack = str(uuid.uuid4())
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("INSERT INTO r (uuid, stack_id, name, props) VALUES (?, ?, ?, ?)",
                         [(make(), stack, str(i), '{"salt": "a", "length": 32}')
                          for i in range(500)])
        conn.execute("COMMIT")
    cpu = time.process_time() - began
    conn.close()
    return cpu


def main() -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000",
                        type=lambda s: [int(x) for x in s.split(",")])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    ways: dict[str, tuple[Callable[[], str], bool]] = {
        "uuid4": (lambda: str(uuid.uuid4()), True),
        "ordered": (ordered_uuid, True),
        "no_index": (lambda: str(uuid.uuid4()), False)}
    record: dict[str, Any] = {"command": "python bench/uuid_index_bench.py "
                              + " ".join(sys.argv[1:]),
                              "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
                              "sqlite": sqlite3.sqlite_version, "results": []}
    for n in args.sizes:
        for name, (make, unique) in ways.items():
            with tempfile.TemporaryDirectory() as tmp:
                cpu = fill(Path(tmp) / "bench.sqlite", n, make, unique)
            row = {"rows": n, "uuid": name, "cpu_s": round(cpu, 3),
                   "cpu_us_per_row": round(cpu / n * 1e6, 2)}
            print(json.dumps(row), flush=True)
            record["results"].append(row)
    record["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        args.json.write_text(json.dumps(record, indent=2) + "\n")
    return record


if __name__ == "__main__":
    main()
