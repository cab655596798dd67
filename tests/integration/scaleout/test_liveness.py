"""A broker the API cannot reach delays work, never loses it; a killed engine's stack is
taken over by another; the service listing shows engines up and a killed one down."""

from __future__ import annotations

import datetime as dt
import signal
import time
from collections.abc import Callable

import httpx

from tests.integration.scaleout.conftest import (
    DEAD_AFTER,
    PERIODIC,
    Cluster,
    client,
    closed_port_url,
    wait_for,
    wait_status,
)

#: the time a sweep itself may take (its queries, on this loaded 2-CPU machine), beyond
#: the documented bound
SWEEP_MARGIN = 1.5


def _slow(create: int) -> dict[str, object]:
    return {"heat_template_version": "2018-08-31", "resources": {"slow": {
        "type": "OS::Heat::TestResource",
        "properties": {"value": "a", "action_wait_secs": {"create": create}}}}}


def _engines(c: httpx.Client) -> list[dict[str, object]]:
    """The services list's engines (Heat's binary name)."""
    r = c.get("/services")
    assert r.status_code == 200, r.text
    return [s for s in r.json()["services"] if s["binary"] == "heat-engine"]


def _logged_at(record: dict[str, object]) -> float:
    return dt.datetime.fromisoformat(str(record["time"]).replace("Z", "+00:00")).timestamp()


def test_create_accepted_while_the_broker_is_unreachable(
        postgresql_url: str, cluster_factory: Callable[[str], Cluster]) -> None:
    """Each create accepted by the API process cut off from the broker is taken by the
    engine's sweep within min(periodic_interval, engine_dead_after / 2) s of its 201, plus
    :data:`SWEEP_MARGIN` for the sweep's own queries on this loaded machine."""
    cluster = cluster_factory(postgresql_url)
    # periodic_interval well above engine_dead_after / 2, so the bound is the smaller
    periodic = 3 * PERIODIC
    cluster.extra = {"DEFAULT": {"periodic_interval": periodic}}
    engine = cluster.engine()
    api = cluster.api(transport_url=closed_port_url())
    bound = min(periodic, DEAD_AFTER / 2)
    assert bound < periodic
    took_all: list[float] = []
    with client(api) as c:
        assert c.get("/stacks").status_code == 200  # reads answer
        wait_for(lambda: _engines(c), 30, "the engine registered (its first sweep done)")
        for n in range(3):  # one after the other: at different points of the sweep period
            r = c.post("/stacks", json={"stack_name": f"queued{n}", "template": _slow(0)})
            answered = time.time()
            assert r.status_code == 201, r.text
            stack_id = r.json()["stack"]["id"]
            (taken,) = wait_for(lambda sid=stack_id: [
                rec for rec in engine.log_records() if rec.get("stack_id") == sid
                and "taking over" in str(rec["message"])], 30, f"the sweep to take {n}")
            took_all.append(_logged_at(taken) - answered)
            assert took_all[-1] <= bound + SWEEP_MARGIN, f"taken {took_all} s after the 201"
            wait_status(c, f"queued{n}", "CREATE_COMPLETE", timeout=30)


def test_killed_engine_work_taken_over_and_listed_down(
        server_db: str, cluster_factory: Callable[[str], Cluster]) -> None:
    cluster = cluster_factory(server_db)
    first = cluster.engine()
    api = cluster.api()
    with client(api) as c:
        def engines() -> list[dict[str, object]]:
            return _engines(c)

        wait_for(lambda: [s for s in engines() if s["status"] == "up"], 30, "engine up")
        # a gate held by a pre-create hook after the slow resource: the stack is still
        # the first engine's when it is killed, however long the second takes to start
        template = _slow(12)
        template["resources"]["gate"] = {  # type: ignore[index]
            "type": "OS::Heat::None", "depends_on": "slow"}
        r = c.post("/stacks", json={"stack_name": "orphan", "template": template,
                                    "environment": {"resource_registry": {"resources": {
                                        "gate": {"hooks": "pre-create"}}}}})
        assert r.status_code == 201, r.text
        stack_id = r.json()["stack"]["id"]
        # the first engine runs it (the only one up)
        wait_for(lambda: c.get(f"/stacks/orphan/{stack_id}/resources/slow").json()
                 ["resource"]["resource_status"] == "CREATE_IN_PROGRESS", 30, "create runs")
        second = cluster.engine()
        wait_for(lambda: len([s for s in engines() if s["status"] == "up"]) == 2, 30,
                 "two engines up")
        first.stop(signal.SIGKILL)
        # the second engine's sweep takes it over once the first is silent DEAD_AFTER s,
        # and continues the resource from its persisted token to the end
        wait_for(lambda: any(r.get("stack_id") == stack_id and "taking over" in
                             str(r["message"]) for r in second.log_records()), 60,
                 "the second engine takes the stack over")
        path = f"/stacks/orphan/{stack_id}"
        wait_for(lambda: any("paused until Hook pre-create" in str(e["resource_status_reason"])
                             for e in c.get(f"{path}/events").json()["events"]), 60,
                 "the create, continued by the second engine, to pause at the gate")
        r = c.post(f"{path}/resources/gate/signal", json={"unset_hook": "pre-create"})
        assert r.status_code == 200, r.text
        wait_status(c, "orphan", "CREATE_COMPLETE", timeout=60)
        wait_for(lambda: [s for s in engines() if s["status"] == "down"], 30,
                 "killed engine listed down")
        up = [s for s in engines() if s["status"] == "up"]
        assert len(up) == 1


def test_an_engine_restarted_on_its_host_replaces_the_dead_one_in_the_list(
        postgresql_url: str, cluster_factory: Callable[[str], Cluster]) -> None:
    """As Heat's engine at start: this host's rows silent for three periodic intervals
    are processes that died, and leave the services list."""
    cluster = cluster_factory(postgresql_url)
    first = cluster.engine()
    api = cluster.api()
    with client(api) as c:
        def engines() -> list[dict[str, object]]:
            return _engines(c)

        (old,) = wait_for(lambda: [s for s in engines() if s["status"] == "up"], 30,
                          "engine up")
        first.stop(signal.SIGKILL)

        def silent_for() -> float:
            (row,) = [s for s in engines() if s["engine_id"] == old["engine_id"]]
            beat = dt.datetime.fromisoformat(str(row["updated_at"])).replace(
                tzinfo=dt.UTC)
            return (dt.datetime.now(dt.UTC) - beat).total_seconds()

        wait_for(lambda: silent_for() > 3 * PERIODIC + 1, 30,
                 "the killed engine silent for three periodic intervals")
        cluster.engine()
        listed = wait_for(lambda: [s for s in engines() if s["status"] == "up"], 30,
                          "the restarted engine up")
        assert [s["engine_id"] for s in engines()] == [listed[0]["engine_id"]]
        assert listed[0]["engine_id"] != old["engine_id"]


def test_a_late_engine_that_answers_keeps_its_stack(
        postgresql_url: str, cluster_factory: Callable[[str], Cluster]) -> None:
    """An engine whose heartbeat is late (here: it beats once an hour) but which answers
    a ping is alive: the other engine's sweep leaves its stack alone (Heat pings a lock's
    holder before stealing it). Taking it over would run the stack in two engines."""
    cluster = cluster_factory(postgresql_url)
    cluster.extra = {"DEFAULT": {"periodic_interval": 3600},
                     "kiln_engine": {"heartbeat_interval": 3600, "engine_dead_after": 7200}}
    cluster.engine()
    cluster.extra = {}
    api = cluster.api()
    with client(api) as c:
        wait_for(lambda: [s for s in _engines(c) if s["status"] == "up"], 30, "engine up")
        r = c.post("/stacks", json={
            "stack_name": "held", "template": {
                "heat_template_version": "2018-08-31",
                "resources": {"gate": {"type": "OS::Heat::None"}}},
            "environment": {"resource_registry": {"resources": {
                "gate": {"hooks": "pre-create"}}}}})
        assert r.status_code == 201, r.text
        stack_id = r.json()["stack"]["id"]
        path = f"/stacks/held/{stack_id}"
        wait_for(lambda: any("paused until Hook pre-create" in
                             str(e["resource_status_reason"])
                             for e in c.get(f"{path}/events").json()["events"]), 60,
                 "the late engine to run the create up to its hook")
        sweeper = cluster.engine()
        # the other engine's sweep finds the stack of an engine silent for longer than
        # its engine_dead_after, and decides about it
        decided = wait_for(lambda: [str(r["message"]) for r in sweeper.log_records()
                                    if r.get("stack_id") == stack_id and (
                                        str(r["message"]).startswith("taking over")
                                        or "still answers" in str(r["message"]))], 60,
                           "the sweeping engine to decide about the stack")
        assert "still answers" in decided[0], decided
        r = c.post(f"{path}/resources/gate/signal", json={"unset_hook": "pre-create"})
        assert r.status_code == 200, r.text
        wait_status(c, "held", "CREATE_COMPLETE", timeout=60)
        assert not [r for r in sweeper.log_records() if r.get("stack_id") == stack_id
                    and str(r["message"]).startswith("taking over")]
