"""What a resource keeps from signals is bounded, against a real ``kiln serve``.

A wait-condition handle keeps at most ``[kiln_engine] max_signals_per_resource`` signals,
each at most ``max_signal_size`` bytes and ``max_signals_size_per_resource`` in all. A
signal over a bound is refused in the route's own format (AWS's XML error on the signed
``/v1/waitcondition`` URL, Heat's JSON fault on the native API) and nothing else is lost:
the signals kept stay, the wait condition still completes, the database does not grow
with the refused signals, and a GET of the handle stays small and fast. Each signal is
an event; ``max_events_per_stack`` holds while the stack's action is still running.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.functional.cfn.test_wait_conditions import (
    AWS_WAIT,
    aws_error,
    delete,
    outputs,
    waiting,
)
from tests.support.clients import heat_client, wait_for_stack_status
from tests.support.server import HTTP_TIMEOUT, KilnProcess, start_kiln

MAX_SIGNALS, MAX_SIGNAL, MAX_TOTAL = 6, 70_000, 150_000
MAX_EVENTS, PURGE_BATCH = 40, 10


@pytest.fixture(scope="module")
def kiln(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    proc = start_kiln(tmp_path_factory.mktemp("bounds"), options={
        "DEFAULT": {"max_events_per_stack": MAX_EVENTS,
                    "event_purge_batch_size": PURGE_BATCH},
        "kiln_engine": {"max_signals_per_resource": MAX_SIGNALS,
                        "max_signal_size": MAX_SIGNAL,
                        "max_signals_size_per_resource": MAX_TOTAL}})
    yield proc
    assert proc.stop() == 0, proc.logs()


@pytest.fixture
def heat(kiln: KilnProcess) -> Any:
    return heat_client(kiln.endpoint("demo"))


def signal(url: str, uid: str, data: str = "d", status: str = "SUCCESS") -> httpx.Response:
    return httpx.put(url, json={"Status": status, "Reason": f"r{uid}", "UniqueId": uid,
                                "Data": data}, timeout=HTTP_TIMEOUT)


def database_bytes(kiln: KilnProcess) -> int:
    """The bytes in use in the database as a reader sees it (pages less free pages),
    whether its latest commits are still in the write-ahead log or already checkpointed:
    file sizes move with the checkpointer's timing (the log is copied, then truncated)."""
    conn = sqlite3.connect(kiln.workdir / "state" / "kiln.sqlite")
    try:
        pages, free, size = (conn.execute(f"PRAGMA {name}").fetchone()[0]
                             for name in ("page_count", "freelist_count", "page_size"))
    finally:
        conn.close()
    return int((pages - free) * size)


def test_signals_over_the_bounds_are_refused_and_nothing_else_is_lost(
        heat: Any, kiln: KilnProcess) -> None:
    url = waiting(heat, "bounded", AWS_WAIT, Count=3)["url"]
    big = "x" * 60_000
    assert signal(url, "a", big).status_code == 200
    assert signal(url, "b", big).status_code == 200
    before = database_bytes(kiln)
    # one signal larger than a signal may be
    too_big = signal(url, "c", "x" * (MAX_SIGNAL + 1))
    assert aws_error(too_big) == (400, "RequestLimitExceeded"), too_big.text
    assert "max_signal_size" in too_big.text
    # many that would take the handle past what it may keep in all
    for i in range(30):
        refused = signal(url, f"more{i}", big)
        assert aws_error(refused) == (400, "RequestLimitExceeded"), refused.text
        assert "max_signals_size_per_resource" in refused.text
    # refused signals write nothing (1.8 MB were sent)
    assert database_bytes(kiln) - before < 200_000
    kept = heat.resources.metadata("bounded", "Handle")
    assert set(kept) == {"a", "b"} and kept["a"]["Data"] == big
    assert heat.resources.get("bounded", "Wait").resource_status == "CREATE_IN_PROGRESS"
    # small signals still fit; the third completes the condition
    assert signal(url, "c", "three").status_code == 200
    stack = wait_for_stack_status(heat, "bounded")
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    assert json.loads(outputs(heat, "bounded")["data"]) == {"a": big, "b": big, "c": "three"}
    # a repeated id replaces its signal, within the count; a new id past it is refused
    for uid in ("d", "e", "f"):
        assert signal(url, uid).status_code == 200
    assert signal(url, "a", "smaller").status_code == 200
    over = signal(url, "g")
    assert aws_error(over) == (400, "RequestLimitExceeded")
    assert "max_signals_per_resource" in over.text
    kept = heat.resources.metadata("bounded", "Handle")
    assert list(kept) == ["a", "b", "c", "d", "e", "f"] and kept["a"]["Data"] == "smaller"
    # the stack keeps working: it updates and deletes
    heat.stacks.update(stack.id, template=AWS_WAIT, parameters={"Count": 1}, existing=True)
    assert wait_for_stack_status(heat, stack.id).stack_status == "UPDATE_COMPLETE"


def test_the_native_api_refuses_with_a_heat_fault(heat: Any, kiln: KilnProcess) -> None:
    template = {"heat_template_version": "2018-08-31", "resources": {
        "handle": {"type": "OS::Heat::WaitConditionHandle"},
        "wait": {"type": "OS::Heat::WaitCondition",
                 "properties": {"handle": {"get_resource": "handle"}, "timeout": 300,
                                "count": 2}}}}
    waiting(heat, "native", template)
    stack = heat.stacks.get("native")
    path = f"{kiln.endpoint('demo')}/stacks/native/{stack.id}/resources/handle/signal"
    assert httpx.post(path, json={"id": "1", "data": "one"},
                      timeout=HTTP_TIMEOUT).status_code == 200
    answer = httpx.post(path, json={"id": "2", "data": "x" * MAX_SIGNAL},
                        timeout=HTTP_TIMEOUT)
    assert answer.status_code == 400, answer.text
    fault = answer.json()
    assert fault["code"] == 400 and fault["error"]["type"] == "RequestLimitExceeded"
    assert "max_signal_size" in fault["error"]["message"]
    assert heat.resources.metadata("native", "handle") == {
        "1": {"data": "one", "reason": "Signal 1 received", "status": "SUCCESS"}}
    assert httpx.post(path, json={"id": "2"}, timeout=HTTP_TIMEOUT).status_code == 200
    done = wait_for_stack_status(heat, "native")
    assert done.stack_status == "CREATE_COMPLETE", done.stack_status_reason


def test_a_get_of_a_much_signalled_handle_stays_small_and_fast(
        heat: Any, kiln: KilnProcess) -> None:
    url = waiting(heat, "biggets", AWS_WAIT, Count=100)["url"]
    before = database_bytes(kiln)
    for i in range(40):
        signal(url, f"s{i}", "y" * 60_000)   # the first few fit, the rest are refused
    # the database (and its write-ahead log) grew by what the handle keeps, not by
    # what it was sent (2.4 MB), let alone by every signal rewriting all before it
    assert database_bytes(kiln) - before < 1_000_000
    stack = heat.stacks.get("biggets")
    api = kiln.endpoint("demo")
    for path in (f"/stacks/biggets/{stack.id}/resources/Handle",
                 f"/stacks/biggets/{stack.id}/resources/Handle/metadata",
                 f"/stacks/biggets/{stack.id}/resources/Wait?with_attr=Data"):
        started = time.monotonic()
        answer = httpx.get(api + path, timeout=HTTP_TIMEOUT)
        took = time.monotonic() - started
        assert answer.status_code == 200, answer.text
        assert len(answer.content) < MAX_TOTAL * 1.2, (path, len(answer.content))
        assert took < 1.0, (path, took)
    delete(heat, "biggets")   # its condition would wait for 100 signals


def test_events_are_purged_while_the_action_still_runs(heat: Any) -> None:
    url = waiting(heat, "chatty", AWS_WAIT, Count=2)["url"]
    stack_id = heat.stacks.get("chatty").id
    for _ in range(150):   # the same id again and again: kept once, an event each
        assert signal(url, "same").status_code == 200
    assert heat.stacks.get(stack_id).stack_status == "CREATE_IN_PROGRESS"
    kept = heat.events.list(stack_id, limit=1000)
    # the cap, plus at most half a purge batch written since the last check
    assert len(kept) <= MAX_EVENTS + PURGE_BATCH // 2, len(kept)
    assert any(e.resource_status_reason == "Signal: status:SUCCESS reason:rsame"
               for e in kept)
    # a long reason is kept whole in the handle's metadata, cut to 255 in its event
    long = {"Status": "SUCCESS", "Reason": "z" * 5000, "UniqueId": "same", "Data": "d"}
    assert httpx.put(url, json=long, timeout=HTTP_TIMEOUT).status_code == 200
    assert heat.resources.metadata("chatty", "Handle")["same"]["Reason"] == "z" * 5000
    newest = heat.events.list(stack_id, limit=1, sort_dir="desc")[0]
    assert newest.resource_status_reason.startswith("Signal: status:SUCCESS reason:zzz")
    assert len(newest.resource_status_reason) == 255
    assert signal(url, "other").status_code == 200
    assert wait_for_stack_status(heat, stack_id).stack_status == "CREATE_COMPLETE"
