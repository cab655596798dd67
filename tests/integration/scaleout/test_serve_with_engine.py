"""``kiln serve`` (the API and an engine in one process) with ``transport_url`` set,
beside a ``kiln engine`` and a ``kiln api`` on the same database and exchange (issue 24):
it registers as an engine, runs stacks (those created through it, and those another API
process hands over the broker), forwards a request for a stack the other engine runs to
that engine, and is forwarded the requests for the stacks it runs.

Which engine holds a stack is read where Kiln keeps it, the stack row's ``engine_id``
(the stack lock), and each process's engine id from its "engine ... listens" log line.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import httpx
import sqlalchemy as sa

from tests.integration.scaleout.conftest import Cluster, client, wait_for, wait_status
from tests.support.server import KilnProcess


def _slow(create: int) -> dict[str, object]:
    return {"heat_template_version": "2018-08-31", "resources": {"slow": {
        "type": "OS::Heat::TestResource",
        "properties": {"value": "a", "action_wait_secs": {"create": create}}}}}


def _engine_id(proc: KilnProcess) -> str:
    (record,) = proc.records_when_logged(
        lambda r: str(r.get("message", "")).startswith("engine ")
        and " listens on topic " in str(r.get("message", "")))
    found = re.match(r"engine (\S+) listens", str(record["message"]))
    assert found, record
    return found.group(1)


def _holder(db_url: str, stack_id: str) -> str | None:
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            return conn.execute(sa.text("SELECT engine_id FROM stack WHERE id = :id"),
                                {"id": stack_id}).scalar()
    finally:
        engine.dispose()


def _running(c: httpx.Client, name: str, stack_id: str) -> bool:
    r = c.get(f"/stacks/{name}/{stack_id}/resources/slow")
    return r.status_code == 200 and r.json()["resource"]["resource_status"] == \
        "CREATE_IN_PROGRESS"


def _create(c: httpx.Client, name: str, seconds: int) -> str:
    r = c.post("/stacks", json={"stack_name": name, "template": _slow(seconds)})
    assert r.status_code == 201, r.text
    return str(r.json()["stack"]["id"])


def test_serve_is_an_engine_beside_kiln_engine(
        db_url: str, cluster_factory: Callable[[str], Cluster]) -> None:
    cluster = cluster_factory(db_url)
    engine = cluster.engine()
    api = cluster.api()
    with client(api) as ca:
        # created while the kiln engine is the only engine: it runs it
        on_engine = _create(ca, "on-engine", 60)
        wait_for(lambda: _running(ca, "on-engine", on_engine), 30, "the engine's create")
        serve = cluster.start("serve")
        with client(serve) as cs:
            ids = {_engine_id(engine), _engine_id(serve)}
            assert len(ids) == 2

            def engines_up() -> set[str]:
                r = cs.get("/services")
                assert r.status_code == 200, r.text
                return {str(s["engine_id"]) for s in r.json()["services"]
                        if s["binary"] == "heat-engine" and s["status"] == "up"}

            wait_for(lambda: ids <= engines_up(), 30, "both engines listed up")
            assert _holder(db_url, on_engine) == _engine_id(engine)

            # a create sent to kiln serve runs there
            on_serve = _create(cs, "on-serve", 60)
            wait_for(lambda: _running(cs, "on-serve", on_serve), 30, "serve's create")
            assert _holder(db_url, on_serve) == _engine_id(serve)

            # a DELETE sent to serve for the stack the other engine runs: forwarded to
            # it, which stops the create and deletes (well before the create's 60 s)
            r = cs.delete(f"/stacks/on-engine/{on_engine}")
            assert r.status_code == 204, r.text
            wait_status(cs, "on-engine", "GONE", "DELETE_COMPLETE", timeout=30)
            # and the other way: a DELETE sent to kiln api for serve's stack
            r = ca.delete(f"/stacks/on-serve/{on_serve}")
            assert r.status_code == 204, r.text
            wait_status(ca, "on-serve", "GONE", "DELETE_COMPLETE", timeout=30)

            # with the kiln engine stopped, work kiln api hands off is serve's
            assert engine.stop() == 0
            wait_for(lambda: _engine_id(engine) not in engines_up(), 30,
                     "the stopped engine no longer up")
            handed = _create(ca, "handed", 5)
            wait_for(lambda: _running(ca, "handed", handed), 30, "serve takes it")
            assert _holder(db_url, handed) == _engine_id(serve)
            wait_status(ca, "handed", "CREATE_COMPLETE", timeout=30)
