"""API processes never take work (docs/deployment.md, "Who does what" and "Liveness"):
``kiln api``, ``kiln api-cfn`` and ``kiln api-cloudwatch`` with ``transport_url`` set
register as ``kiln-api`` and beat, but none of them runs or takes a stack action, however
long the action waits for an engine; an engine started later takes it and completes it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
import sqlalchemy as sa

from tests.integration.scaleout.conftest import (
    DEAD_AFTER,
    PERIODIC,
    Cluster,
    client,
    wait_for,
    wait_status,
)

#: how often a process that swept would sweep (recovery.Recovery.sweep_interval)
SWEEP = min(PERIODIC, DEAD_AFTER / 2)

TEMPLATE = {"heat_template_version": "2018-08-31",
            "resources": {"word": {"type": "OS::Heat::RandomString"}}}


@pytest.fixture
def database(server_db: str) -> Iterator[sa.Engine]:
    engine = sa.create_engine(server_db)
    yield engine
    engine.dispose()


def _services(c: httpx.Client) -> list[dict[str, Any]]:
    r = c.get("/services")
    assert r.status_code == 200, r.text
    return list(r.json()["services"])


def _beat(row: dict[str, Any]) -> dt.datetime:
    return dt.datetime.fromisoformat(str(row["updated_at"]))


def _stack_row(db: sa.Engine, stack_id: str) -> Any:
    with db.connect() as conn:
        return conn.execute(sa.text(
            "SELECT action, status, engine_id, lock_time FROM stack WHERE id = :id"),
            {"id": stack_id}).one()


def test_api_processes_never_take_work(
        server_db: str, database: sa.Engine,
        cluster_factory: Callable[[str], Cluster]) -> None:
    cluster = cluster_factory(server_db)
    api = cluster.api()
    apis = [api, cluster.start("api-cfn"), cluster.start("api-cloudwatch")]
    with client(api) as c:
        # the three register, as kiln-api (Heat's engines are heat-engine): no engine
        listed = wait_for(lambda: (lambda rows: rows if len(rows) == 3 else None)(
            [s for s in _services(c) if s["status"] == "up"]), 30, "three API rows up")
        assert {s["binary"] for s in listed} == {"kiln-api"}, listed
        assert len({s["engine_id"] for s in listed}) == 3

        r = c.post("/stacks", json={"stack_name": "queued", "template": TEMPLATE})
        assert r.status_code == 201, r.text
        stack_id = r.json()["stack"]["id"]
        admitted = dt.datetime.now(dt.UTC).replace(tzinfo=None)  # as the rows' times

        # every API process beats on past two sweep periods after the 201: one that
        # swept (an engine's housekeeping) would have taken the stack by then
        def all_beat_past() -> bool:
            rows = [s for s in _services(c) if s["binary"] == "kiln-api"]
            return len(rows) == 3 and all(
                (_beat(s) - admitted).total_seconds() > 2 * SWEEP for s in rows)

        wait_for(all_beat_past, 30, "every API process to beat two sweep periods on")
        row = _stack_row(database, stack_id)
        assert (row.action, row.status, row.engine_id) == ("CREATE", "IN_PROGRESS", None)
        assert c.get("/stacks/queued").json()["stack"]["stack_status"] == \
            "CREATE_IN_PROGRESS"
        resources = c.get(f"/stacks/queued/{stack_id}/resources").json()["resources"]
        assert all(r["resource_status"] == "INIT_COMPLETE" for r in resources), resources
        assert not [s for s in _services(c) if s["binary"] == "heat-engine"]
        for proc in apis:
            ran = [r for r in proc.log_records() if r.get("stack_id") == stack_id
                   and ("taking over" in str(r.get("message"))
                        or "admitted" in str(r.get("message")))]
            assert not ran, ran

        # an engine started now takes it (its first sweep) and completes it
        engine = cluster.engine()
        wait_status(c, "queued", "CREATE_COMPLETE", timeout=60)
        assert any(r.get("stack_id") == stack_id and "taking over" in str(r["message"])
                   for r in engine.log_records())
        wait_for(lambda: _stack_row(database, stack_id).engine_id is None, 30,
                 "the engine to release the stack once done")
