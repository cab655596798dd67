"""Requests reaching an API process while the stack is queued: admitted by an API
process, IN_PROGRESS, and not yet taken by an engine (kiln.engine.service.unheld).

Made deterministic without sleeps by running no engine while the request arrives: the
stack stays queued, and the engine started afterwards takes it. The signal race is
pinned down by holding a row lock in the database (PostgreSQL) so that the API's write
waits until the engine has started (and, before the fix, loaded the stack).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any

import httpx
import psycopg
import pytest

from tests.integration.scaleout.conftest import Cluster, client, wait_for, wait_status
from tests.support import databases


def _valued(value: str) -> dict[str, Any]:
    return {
        "heat_template_version": "2018-08-31",
        "resources": {"r": {"type": "OS::Heat::TestResource", "properties": {"value": value}}},
        "outputs": {"v": {"value": {"get_attr": ["r", "output"]}}},
    }


def _stack(c: httpx.Client, name: str) -> dict[str, Any]:
    r = c.get(f"/stacks/{name}")
    r.raise_for_status()
    return dict(r.json()["stack"])


def _queued_update(cluster: Cluster) -> tuple[httpx.Client, httpx.Client, str]:
    """Two API clients and a stack whose update is queued: created by an engine, which
    is then stopped, so nothing takes the update the first API admits."""
    engine = cluster.engine()
    c1, c2 = client(cluster.api()), client(cluster.api())
    r = c1.post("/stacks", json={"stack_name": "queued", "template": _valued("a")})
    assert r.status_code == 201, r.text
    stack_id = r.json()["stack"]["id"]
    wait_status(c1, "queued", "CREATE_COMPLETE")
    assert engine.stop() == 0, engine.logs()
    r = c1.put(f"/stacks/queued/{stack_id}", json={"template": _valued("b")})
    assert r.status_code == 202, r.text
    assert _stack(c2, "queued")["stack_status"] == "UPDATE_IN_PROGRESS"
    return c1, c2, stack_id


@pytest.mark.parametrize(
    "rollback", [True, False], ids=["cancel_update", "cancel_without_rollback"]
)
def test_a_cancel_of_a_queued_update_is_honoured_by_the_engine_that_takes_it(
    rollback: bool, server_db: str, cluster_factory: Callable[[str], Cluster]
) -> None:
    cluster = cluster_factory(server_db)
    c1, c2, stack_id = _queued_update(cluster)
    with contextlib.closing(c1), contextlib.closing(c2):
        action = "cancel_update" if rollback else "cancel_without_rollback"
        r = c2.post(f"/stacks/queued/{stack_id}/actions", json={action: None})
        assert r.status_code == 200, r.text  # was 400 NotSupported
        requested = "Stack UPDATE cancel requested" + ("" if rollback else " without rollback")
        assert _stack(c1, "queued")["stack_status_reason"] == requested
        cluster.engine()
        if rollback:
            wait_status(c1, "queued", "ROLLBACK_COMPLETE")
            assert _output(c1, "queued", stack_id) == "a"
        else:
            wait_status(c1, "queued", "UPDATE_FAILED")
            assert _stack(c1, "queued")["stack_status_reason"] == "Stack UPDATE cancelled"
        reasons = [
            e["resource_status_reason"]
            for e in c1.get(f"/stacks/queued/{stack_id}/events").json()["events"]
        ]
        assert "Stack UPDATE cancelled" in reasons


def _output(c: httpx.Client, name: str, stack_id: str) -> Any:
    return c.get(f"/stacks/{name}/{stack_id}/outputs/v").json()["output"]["output_value"]


def test_queued_updates_cancelled_with_rollback_all_get_their_old_value_back(
    server_db: str, cluster_factory: Callable[[str], Cluster]
) -> None:
    """Many queued updates, each cancelled with rollback, taken at once by one engine:
    the cancel meets each update at another point. Where it met a resource whose
    in-place update had completed but whose write was not yet committed, the rollback
    loaded it IN_PROGRESS with its old properties, updated it with no difference, and
    the stack ended ROLLBACK_COMPLETE with the new value (about one stack in 12-24)."""
    cluster = cluster_factory(server_db)
    engine = cluster.engine()
    names = [f"q{i}" for i in range(16)]
    with client(cluster.api()) as c:
        ids = {}
        for name in names:
            r = c.post("/stacks", json={"stack_name": name, "template": _valued("a")})
            assert r.status_code == 201, r.text
            ids[name] = r.json()["stack"]["id"]
        for name in names:
            wait_status(c, name, "CREATE_COMPLETE")
        assert engine.stop() == 0, engine.logs()
        for name in names:
            r = c.put(f"/stacks/{name}/{ids[name]}", json={"template": _valued("b")})
            assert r.status_code == 202, r.text
            r = c.post(f"/stacks/{name}/{ids[name]}/actions", json={"cancel_update": None})
            assert r.status_code == 200, r.text
        cluster.engine()
        for name in names:
            wait_status(c, name, "ROLLBACK_COMPLETE")
        values = {name: _output(c, name, ids[name]) for name in names}
        assert values == dict.fromkeys(names, "a")


def test_a_cancel_of_a_queued_create_without_rollback(
    sqlite_url: str, cluster_factory: Callable[[str], Cluster]
) -> None:
    cluster = cluster_factory(sqlite_url)
    with client(cluster.api()) as c1, client(cluster.api()) as c2:
        # no engine yet: the create stays queued
        r = c1.post("/stacks", json={"stack_name": "queued", "template": _valued("a")})
        assert r.status_code == 201, r.text
        stack_id = r.json()["stack"]["id"]
        r = c2.post(f"/stacks/queued/{stack_id}/actions", json={"cancel_without_rollback": None})
        assert r.status_code == 200, r.text
        # a cancel with rollback is for updates only, as in Heat
        r = c2.post(f"/stacks/queued/{stack_id}/actions", json={"cancel_update": None})
        assert r.status_code == 400, r.text
        cluster.engine()
        wait_status(c1, "queued", "CREATE_FAILED")
        assert _stack(c1, "queued")["stack_status_reason"] == "Stack CREATE cancelled"


# -- a signal handled by an API process while an engine takes the stack ----------------

WAITING = {
    "heat_template_version": "2018-08-31",
    "parameters": {"count": {"type": "number", "default": 1}},
    "resources": {
        "handle": {"type": "OS::Heat::WaitConditionHandle"},
        "wait": {
            "type": "OS::Heat::WaitCondition",
            "properties": {
                "handle": {"get_resource": "handle"},
                "count": {"get_param": "count"},
                "timeout": 40,
            },
        },
    },
    "outputs": {"data": {"value": {"get_attr": ["wait", "data"]}}},
}


def _pg_connect(url: str) -> Any:
    server = databases.pg_server_url()
    return psycopg.connect(
        host=server.host or "127.0.0.1",
        port=server.port or 5432,
        user=server.username or "postgres",
        password=server.password or None,
        dbname=url.rsplit("/", 1)[1].split("?", 1)[0],
    )


def _waiting_on_a_lock(conn: Any) -> bool:
    row = conn.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = "
        "current_database() AND wait_event_type = 'Lock'"
    ).fetchone()
    return bool(row and row[0])


def test_a_signal_to_an_api_while_an_engine_takes_the_stack_is_applied_once(
    postgresql_url: str, cluster_factory: Callable[[str], Cluster]
) -> None:
    """The API process loads the stack to handle a signal; before its write commits an
    engine takes the stack. Before the fix the engine loaded it without the signal and
    its wait condition waited for it until its timeout."""
    cluster = cluster_factory(postgresql_url)
    engine = cluster.engine()
    with client(cluster.api()) as c1, client(cluster.api()) as c2:
        r = c1.post("/stacks", json={"stack_name": "raced", "template": WAITING})
        assert r.status_code == 201, r.text
        path = f"/stacks/raced/{r.json()['stack']['id']}"
        wait_for(
            lambda: (
                _stack(c1, "raced")["stack_status"] == "CREATE_IN_PROGRESS"
                and c1.get(f"{path}/resources/wait").json()["resource"]["resource_status"]
                == "CREATE_IN_PROGRESS"
            ),
            what="the wait condition to wait",
        )
        signal = {"status": "SUCCESS", "reason": "ok", "data": "one", "id": "1"}
        assert c1.post(f"{path}/resources/handle/signal", json=signal).status_code == 200
        wait_status(c1, "raced", "CREATE_COMPLETE")
        assert engine.stop() == 0, engine.logs()
        # queued: the wait condition now waits for a second signal
        r = c1.patch(path, json={"parameters": {"count": 2}})
        assert r.status_code == 202, r.text

        with _pg_connect(postgresql_url) as lock:
            # the handle's row locked: the second API's write of the signal waits
            lock.execute("SELECT r.id FROM resource r WHERE r.name = 'handle' FOR UPDATE")
            answers: list[httpx.Response] = []
            sender = threading.Thread(
                target=lambda: answers.append(
                    c2.post(
                        f"{path}/resources/handle/signal", json={**signal, "data": "two", "id": "2"}
                    )
                )
            )
            sender.start()
            with _pg_connect(postgresql_url) as watch:
                watch.autocommit = True
                wait_for(lambda: _waiting_on_a_lock(watch), 30, "the signal's write to wait")
            # an engine starts (its first sweep, which takes queued stacks, is over
            # when it is ready) while the signal is handled but not yet written
            cluster.engine()
            lock.rollback()
        sender.join(60)
        assert [a.status_code for a in answers] == [200], [a.text for a in answers]
        wait_status(c1, "raced", "UPDATE_COMPLETE")
        data = c1.get(f"{path}/outputs/data").json()["output"]["output_value"]
        assert "two" in str(data) and "one" in str(data), data
