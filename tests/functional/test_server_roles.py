"""`kiln api` and `kiln engine` as separate processes on one database: when the API
process dies in the middle of a create, the engine process takes the stack over and
finishes it."""

from __future__ import annotations

import re
import signal
import sqlite3
import time
from pathlib import Path

from tests.support.clients import heat_client, wait_for_stack_status
from tests.support.fixtures import StartKiln
from tests.support.server import KilnProcess

TEMPLATE = """
heat_template_version: 2018-08-31
resources:
  slow:
    type: OS::Heat::TestResource
    properties: {wait_secs: 3}
"""


def wait_for_log(proc: KilnProcess, prefix: str, timeout: float = 60.0) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        for record in proc.log_records():
            if str(record.get("message", "")).startswith(prefix):
                return record
        if time.monotonic() > deadline:
            raise AssertionError(f"no log record starting {prefix!r}:\n{proc.logs()}")
        time.sleep(delay)  # log poll with backoff, bounded by the deadline
        delay = min(delay * 2, 0.5)


def stack_row(db: Path, stack_id: str) -> tuple[str, str]:
    action, status, _reason = stack_row_with_reason(db, stack_id)
    return action, status


def progress_action(db: Path, stack_id: str, name: str) -> str | None:
    with sqlite3.connect(db) as conn:
        row = conn.execute(
            "SELECT progress_action FROM resource WHERE stack_id = ? AND name = ?",
            (stack_id, name)).fetchone()
    return None if row is None else row[0]


def stack_row_with_reason(db: Path, stack_id: str) -> tuple[str, str, str]:
    with sqlite3.connect(db) as conn:
        action, status, reason = conn.execute(
            "SELECT action, status, status_reason FROM stack WHERE id = ?",
            (stack_id,)).fetchone()
    return action, status, reason


def test_engine_process_finishes_the_work_of_a_dead_api_process(
        start_kiln_factory: StartKiln, tmp_path: Path) -> None:
    db = tmp_path / "shared.sqlite"
    options = {"database": {"connection": f"sqlite:///{db}"},
               "DEFAULT": {"periodic_interval": 1},
               "kiln_engine": {"heartbeat_interval": 0.2, "engine_dead_after": 1.5}}
    engine = start_kiln_factory(command="engine", options=options)
    api = start_kiln_factory(command="api", options=options)
    heat = heat_client(api.endpoint("demo"))
    stack_id = heat.stacks.create(stack_name="orphan", template=TEMPLATE)["stack"]["id"]
    assert stack_row(db, stack_id) == ("CREATE", "IN_PROGRESS")
    # the kill must land after the resource's progress token is committed: a resource
    # caught inside its handle call is failed on take-over, not resumed (by design)
    deadline = time.monotonic() + 30
    while progress_action(db, stack_id, "slow") != "CREATE":
        assert time.monotonic() < deadline, "the create never persisted its token"
        time.sleep(0.02)  # row poll, bounded by the deadline
    assert api.stop(signal.SIGKILL) == -signal.SIGKILL  # a crash, no clean hand-over

    taken = wait_for_log(engine, f"taking over stack orphan ({stack_id}, CREATE_IN_PROGRESS) "
                                 "from engine ")
    assert taken["level"] == "WARNING"
    assert re.fullmatch(r".* from engine [0-9a-f-]{36}", str(taken["message"]))
    deadline = time.monotonic() + 60
    while stack_row(db, stack_id) == ("CREATE", "IN_PROGRESS"):
        assert time.monotonic() < deadline, "the engine process never finished the create"
        time.sleep(0.1)  # status poll, bounded by the deadline
    action, status, reason = stack_row_with_reason(db, stack_id)
    assert (action, status) == ("CREATE", "COMPLETE"), f"{reason}\n{engine.logs()}"

    # a new API process serves the finished stack
    api2 = start_kiln_factory(command="api", options=options)
    stack = wait_for_stack_status(heat_client(api2.endpoint("demo")), "orphan")
    assert stack.stack_status == "CREATE_COMPLETE"
