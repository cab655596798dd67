"""Races across two processes sharing one database (issue 10): each side of a race goes
to a different ``kiln serve``, so only the lock in the database (the stack row's
``engine_id``, taken by a conditional UPDATE) can keep the two actions apart. Same
checks as the one-server matrix (tests/support/races.py), on SQLite, PostgreSQL and
MariaDB. A delete cannot cancel an action running in the other process (there is no call
between processes): it is refused with 409 rather than acknowledged and dropped.
"""

from __future__ import annotations

import os

import httpx

from tests.support.fixtures import StartKiln
from tests.support.races import run_trials

PAIRS = [("delete", "check"), ("check", "delete"), ("delete", "suspend"),
         ("snapshot", "delete"), ("delete", "update"), ("suspend", "update"),
         ("update", "update"), ("check", "snapshot"), ("create", "create"),
         ("delete", "delete"), ("abandon", "delete"), ("restore", "resume")]


def test_two_servers_on_one_database(start_kiln_factory: StartKiln, db_url: str) -> None:
    options = {"database": {"connection": db_url}}
    one = start_kiln_factory(options=options).endpoint("demo")
    two = start_kiln_factory(options=options).endpoint("demo")

    def clients() -> tuple[httpx.Client, httpx.Client]:
        return (httpx.Client(base_url=one, timeout=60), httpx.Client(base_url=two, timeout=60))

    runs = int(os.environ.get("KILN_RACE_RUNS", "1"))
    tally = run_trials(clients, PAIRS, runs, parallel=3)
    assert sum(tally.values()) == len(PAIRS) * runs
