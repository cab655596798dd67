"""An engine stops within a second (it took 5-6 s: oslo.messaging's listener waits up to
5 s for the broker between its checks for stop, and its idle worker threads a second
more), and a call it was running when told to stop is still run and answered."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx

from tests.integration.scaleout.conftest import (
    HOOKED,
    Cluster,
    client,
    create_paused,
    wait_for,
    wait_status,
)
from tests.integration.scaleout.test_queued import _pg_connect, _waiting_on_a_lock


def _stop_seconds(proc: Any) -> float:
    began = time.monotonic()
    assert proc.stop() == 0, proc.logs()
    return time.monotonic() - began


def test_an_idle_engine_stops_within_a_second(
    sqlite_url: str, cluster_factory: Callable[[str], Cluster]
) -> None:
    cluster = cluster_factory(sqlite_url)
    engine = cluster.engine()
    with client(cluster.api()) as c:
        r = c.post("/stacks", json={"stack_name": "one", "template": HOOKED})
        assert r.status_code == 201, r.text
        wait_status(c, "one", "CREATE_COMPLETE")
    # what is measured is a stop after the listener has been idle long enough for its
    # wait for the broker to reach oslo.messaging's 5 s
    time.sleep(10)
    seconds = _stop_seconds(engine)
    assert seconds < 2.0, f"the engine took {seconds:.2f} s to stop"


def test_a_call_running_when_the_engine_is_told_to_stop_is_answered(
    postgresql_url: str, cluster_factory: Callable[[str], Cluster]
) -> None:
    cluster = cluster_factory(postgresql_url)
    engine = cluster.engine()
    with client(cluster.api()) as c:
        path = create_paused(c, "hooked")
        with _pg_connect(postgresql_url) as lock:
            # the gate's row locked: the engine's write of the hook's clearing waits,
            # with the forwarded call in flight
            lock.execute("SELECT id FROM resource WHERE name = 'gate' FOR UPDATE")
            answers: list[httpx.Response] = []
            sender = threading.Thread(
                target=lambda: answers.append(
                    c.post(f"{path}/resources/gate/signal", json={"unset_hook": "pre-create"})
                )
            )
            sender.start()
            with _pg_connect(postgresql_url) as watch:
                watch.autocommit = True
                wait_for(lambda: _waiting_on_a_lock(watch), 30, "the engine's write to wait")
            engine.proc.send_signal(signal.SIGTERM)
            assert engine.records_when_logged(
                lambda r: "received SIGTERM, stopping" in str(r.get("message")), 30
            )
            lock.rollback()
        sender.join(60)
        assert [a.status_code for a in answers] == [200], [a.text for a in answers]
        assert engine.proc.wait(60) == 0, engine.logs()
        reasons = [e["resource_status_reason"] for e in c.get(f"{path}/events").json()["events"]]
        assert "Hook pre-create is cleared" in reasons
