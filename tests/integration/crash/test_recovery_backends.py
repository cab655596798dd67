"""The recovery sweep's queries and lock stealing on SQLite, PostgreSQL and MariaDB: a
stack left mid-create by an engine that stopped heartbeating is taken over and
finished, while a stack of a live engine is left alone (see tests/unit/engine/
test_recovery.py for the per-action behaviour)."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator

import pytest
import sqlalchemy as sa

from kiln.conf import CONF
from kiln.db import locks as db_locks
from kiln.db.models import Service
from kiln.engine.service import EngineService, RequestContext
from tests.unit.engine.support import create, resources
from tests.unit.engine.test_recovery import GHOST, TEMPLATE, crash, done_token, mid


@pytest.fixture
async def svc(db_url: str) -> AsyncIterator[EngineService]:
    CONF.set_override("poll_initial_delay", 0.001, group="kiln_engine")
    CONF.set_override("poll_max_delay", 0.05, group="kiln_engine")
    service = EngineService(db_url=db_url)
    await service.start()
    try:
        yield service
    finally:
        await service.stop()
        CONF.clear_override("poll_initial_delay", group="kiln_engine")
        CONF.clear_override("poll_max_delay", group="kiln_engine")


async def test_dead_engines_stack_is_taken_over(svc: EngineService) -> None:
    ctx = RequestContext(project_id="recovery", is_admin=False, roles=("member",))
    stack = await create(svc, ctx, "taken", TEMPLATE)
    sid = stack["id"]
    with svc.store.database.session() as s:
        db_locks.register_engine(s, GHOST, host="h", hostname="h")
    crash(svc, sid, "CREATE", {
        "b": mid("CREATE", done_token(), physical_resource_id="b-physical"),
        "c": mid("CREATE"),
        "d": {"action": "INIT", "status": "COMPLETE"},
    })
    assert svc.recovery is not None
    assert await svc.recovery.sweep() == []             # the ghost still heartbeats
    with svc.store.database.session() as s:
        s.execute(sa.update(Service).where(Service.engine_id == GHOST)
                  .values(updated_at=dt.datetime(2000, 1, 1)))
    assert await svc.recovery.sweep() == [sid]
    await svc.wait_for_stack(sid)
    shown = await svc.show_stack(ctx, stack["stack_identity"])
    assert shown["stack_status"] == "CREATE_FAILED"
    assert shown["stack_status_reason"] == (
        "Resource CREATE failed: Worker went down during resource CREATE")
    states = await resources(svc, ctx, stack["stack_identity"])
    assert (states["a"], states["b"], states["c"]) == (
        "CREATE_COMPLETE", "CREATE_COMPLETE", "CREATE_FAILED")
    with svc.store.database.session() as s:
        assert db_locks.get_stack_lock(s, sid) is None
