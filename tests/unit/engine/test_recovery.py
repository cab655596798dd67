"""Recovery of stacks a dead engine left IN_PROGRESS.

The state a crash leaves is written straight into the database (the lock held by an
engine that never heartbeats, resource rows mid-action with or without a persisted
token), then this engine's sweep runs. Expected reasons are Heat's own wording for the
same situations ("Worker went down during resource CREATE" for a resource, "Engine went
down during stack UPDATE" for a stack that is reset).
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from typing import Any

import sqlalchemy as sa

from kiln.db import locks as db_locks
from kiln.db import resources as db_resources
from kiln.db.facade import open_database
from kiln.db.models import Resource, Service, Stack
from kiln.engine.service import EngineService, RequestContext

from .support import create, hot, resources

GHOST = "ghost-engine"


def tres(**props: Any) -> dict[str, Any]:
    return {"type": "OS::Heat::TestResource", "properties": {"value": "v", **props}}


TEMPLATE = hot({
    "a": {"type": "OS::Heat::None"},
    "b": tres(),
    "c": tres(),
    "d": {"type": "OS::Heat::None", "depends_on": ["b", "c"]},
})


def crash(svc: EngineService, stack_id: str, action: str,
          rows: dict[str, dict[str, Any]], *, holder: str | None = GHOST) -> None:
    """Rewrite a stored stack as a crashed engine would have left it."""
    with svc.store.database.session() as s:
        s.execute(sa.update(Stack).where(Stack.id == stack_id)
                  .values(action=action, status="IN_PROGRESS", engine_id=holder))
        by_name = {r.name: r for r in db_resources.list_resources(s, stack_id)}
        for name, values in rows.items():
            db_resources.update_resource(s, by_name[name].id, values)  # type: ignore[arg-type]


def mid(action: str, token: Any = None, **extra: Any) -> dict[str, Any]:
    values = {"action": action, "status": "IN_PROGRESS", "engine_id": GHOST,
              "progress": token, "progress_action": action if token is not None else None}
    values.update(extra)
    return values


def done_token() -> dict[str, Any]:
    return {"started": time.time() - 60, "wait": 0.0, "fail": False}


async def recover(svc: EngineService, stack_id: str) -> list[str]:
    assert svc.recovery is not None
    taken = await svc.recovery.sweep()
    await svc.wait_for_stack(stack_id)
    return taken


async def test_create_resumes_from_tokens_and_starts_the_rest(
        service: EngineService, ctx: RequestContext) -> None:
    stack = await create(service, ctx, "resume", TEMPLATE)
    sid = stack["id"]
    crash(service, sid, "CREATE", {
        "b": mid("CREATE", done_token(), physical_resource_id="b-physical"),
        "c": {"action": "INIT", "status": "COMPLETE", "physical_resource_id": None},
        "d": {"action": "INIT", "status": "COMPLETE", "physical_resource_id": None},
    })
    assert await recover(service, sid) == [sid]
    shown = await service.show_stack(ctx, stack["stack_identity"])
    assert shown["stack_status"] == "CREATE_COMPLETE"
    assert await resources(service, ctx, stack["stack_identity"]) == {
        "a": "CREATE_COMPLETE", "b": "CREATE_COMPLETE", "c": "CREATE_COMPLETE",
        "d": "CREATE_COMPLETE"}
    # b was continued with check_create_complete, not created again
    b = await service.describe_stack_resource(ctx, stack["stack_identity"], "b")
    assert b["physical_resource_id"] == "b-physical"
    with service.store.database.session() as s:
        assert db_locks.get_stack_lock(s, sid) is None


async def test_resource_caught_inside_its_handle_fails_the_stack(
        service: EngineService, ctx: RequestContext) -> None:
    stack = await create(service, ctx, "midhandle", TEMPLATE)
    sid = stack["id"]
    crash(service, sid, "CREATE", {"c": mid("CREATE"),
                                   "d": {"action": "INIT", "status": "COMPLETE"}})
    await recover(service, sid)
    shown = await service.show_stack(ctx, stack["stack_identity"])
    assert shown["stack_status"] == "CREATE_FAILED"
    assert shown["stack_status_reason"] == (
        "Resource CREATE failed: Worker went down during resource CREATE")
    c = await service.describe_stack_resource(ctx, stack["stack_identity"], "c")
    assert c["resource_status"] == "CREATE_FAILED"
    assert c["resource_status_reason"] == "Worker went down during resource CREATE"
    assert (await resources(service, ctx, stack["stack_identity"]))["d"] == "INIT_COMPLETE"
    # the user can delete what is left
    await service.delete_stack(ctx, stack["stack_identity"])
    await service.wait_for_stack(sid)
    assert (await service.show_stack(ctx, stack["stack_identity"]))["stack_status"] == \
        "DELETE_COMPLETE"


async def test_failed_resume_rolls_back_unless_disabled(
        service: EngineService, ctx: RequestContext) -> None:
    stack = await create(service, ctx, "rb", TEMPLATE, disable_rollback=False)
    sid = stack["id"]
    crash(service, sid, "CREATE", {"c": mid("CREATE")})
    await recover(service, sid)
    shown = await service.show_stack(ctx, stack["stack_identity"])
    assert shown["stack_status"] == "ROLLBACK_COMPLETE"
    assert await resources(service, ctx, stack["stack_identity"]) == {}


async def test_delete_continues_and_finishes(service: EngineService,
                                             ctx: RequestContext) -> None:
    stack = await create(service, ctx, "del", TEMPLATE)
    sid = stack["id"]
    crash(service, sid, "DELETE", {
        "d": {"action": "DELETE", "status": "COMPLETE"},
        "b": mid("DELETE", done_token()),
        "c": mid("DELETE"),               # inside handle_delete: issued again
    })
    await recover(service, sid)
    shown = await service.show_stack(ctx, stack["stack_identity"])
    assert shown["stack_status"] == "DELETE_COMPLETE"
    with service.store.database.session() as s:
        assert db_resources.list_resources(s, sid) == []


async def test_an_update_is_resumed_to_its_end(service: EngineService,
                                              ctx: RequestContext) -> None:
    stack = await create(service, ctx, "upd", TEMPLATE)
    sid = stack["id"]
    crash(service, sid, "UPDATE", {"b": mid("UPDATE", done_token()), "c": mid("UPDATE")})
    await recover(service, sid)
    shown = await service.show_stack(ctx, stack["stack_identity"])
    assert shown["stack_status"] == "UPDATE_COMPLETE", shown["stack_status_reason"]
    states = await resources(service, ctx, stack["stack_identity"])
    # b continued from its token; c, caught inside its handle, was FAILED and replaced
    assert (states["b"], states["c"]) == ("UPDATE_COMPLETE", "CREATE_COMPLETE")


async def test_other_actions_are_failed_with_heats_reason(
        service: EngineService, ctx: RequestContext) -> None:
    stack = await create(service, ctx, "adp", TEMPLATE)
    sid = stack["id"]
    crash(service, sid, "ADOPT", {"b": mid("ADOPT", done_token())})
    await recover(service, sid)
    shown = await service.show_stack(ctx, stack["stack_identity"])
    assert shown["stack_status"] == "ADOPT_FAILED"
    assert shown["stack_status_reason"] == "Engine went down during stack ADOPT"
    b = await service.describe_stack_resource(ctx, stack["stack_identity"], "b")
    assert (b["resource_status"], b["resource_status_reason"]) == (
        "ADOPT_FAILED", "Engine went down during stack ADOPT")


async def test_live_engines_keep_their_stacks(service: EngineService,
                                              ctx: RequestContext) -> None:
    stack = await create(service, ctx, "alive", TEMPLATE)
    sid = stack["id"]
    with service.store.database.session() as s:
        db_locks.register_engine(s, GHOST, host="h", hostname="h")
    crash(service, sid, "CREATE", {"c": mid("CREATE", done_token())})
    assert service.recovery is not None
    assert await service.recovery.sweep() == []          # heartbeat is fresh
    with service.store.database.session() as s:
        s.execute(sa.update(Service).where(Service.engine_id == GHOST)
                  .values(updated_at=dt.datetime(2000, 1, 1)))
    assert await recover(service, sid) == [sid]          # silent too long: taken over
    assert (await service.show_stack(ctx, stack["stack_identity"]))["stack_status"] == \
        "CREATE_COMPLETE"


async def test_unlocked_in_progress_stack_is_taken(service: EngineService,
                                                   ctx: RequestContext) -> None:
    """An engine that stopped cleanly released its locks with work unfinished."""
    stack = await create(service, ctx, "loose", TEMPLATE)
    sid = stack["id"]
    crash(service, sid, "CREATE", {"d": {"action": "INIT", "status": "COMPLETE"}},
          holder=None)
    assert await recover(service, sid) == [sid]
    assert (await service.show_stack(ctx, stack["stack_identity"]))["stack_status"] == \
        "CREATE_COMPLETE"


async def test_engine_registers_and_unregisters(sqlite_url: str, ctx: RequestContext) -> None:
    svc = EngineService(db_url=sqlite_url, engine_id="engine-one")
    await svc.start()
    services = await svc.list_services(ctx)
    assert [(s["engine_id"], s["status"], s["topic"]) for s in services] == [
        ("engine-one", "up", "engine")]
    assert set(services[0]) == {"id", "binary", "engine_id", "host", "hostname", "topic",
                                "report_interval", "created_at", "updated_at",
                                "deleted_at", "status"}
    await svc.stop()
    # a clean stop leaves no registered engine whose work others would wait for
    reopened = await open_database(sqlite_url)
    try:
        assert await reopened.run(db_locks.list_services) == []
    finally:
        await reopened.close()


async def test_a_lock_this_engine_failed_to_release_is_not_kept(
        service: EngineService, ctx: RequestContext) -> None:
    """An action that ended without releasing its lock (say the release itself hit a
    database error) must not make every later action on the stack a 409 forever."""
    stack = await create(service, ctx, "stuck", TEMPLATE)
    sid = stack["id"]
    with service.store.database.session() as s:
        s.execute(sa.update(Stack).where(Stack.id == sid).values(
            engine_id=service.engine.engine_id, lock_time=dt.datetime(2000, 1, 1)))
    assert service.recovery is not None
    assert await service.recovery.sweep() == []      # nothing to resume: COMPLETE
    with service.store.database.session() as s:
        assert db_locks.get_stack_lock(s, sid) is None
    await service.delete_stack(ctx, stack["stack_identity"])
    await service.wait_for_stack(sid)
    assert (await service.show_stack(ctx, stack["stack_identity"]))["stack_status"] == \
        "DELETE_COMPLETE"


async def test_a_replaced_row_left_in_progress_is_failed_and_the_update_resumed(
        service: EngineService, ctx: RequestContext) -> None:
    """A dead engine's update left the row a replacement superseded IN_PROGRESS (its
    delete cut short, no token). Recovery fails that row and runs the update again,
    which deletes it. Resource records are frozen: recovery used to assign to the
    stale record in place (hidden from mypy while the engine was typed ``Any``), so the
    resume crashed and the stack was reset to UPDATE_FAILED instead."""
    stack = await create(service, ctx, "stale", TEMPLATE)
    sid = stack["id"]
    with service.store.database.session() as s:
        old = s.execute(sa.select(Resource).where(Resource.stack_id == sid,
                                                  Resource.name == "b")).scalar_one()
        new = Resource(**{c.name: getattr(old, c.name) for c in Resource.__table__.columns
                          if c.name not in ("id", "uuid")}, uuid=str(uuid.uuid4()))
        new.replaces = old.id
        s.add(new)
        s.flush()
        old.replaced_by = new.id
    crash(service, sid, "UPDATE", {})
    with service.store.database.session() as s:
        s.execute(sa.update(Resource).where(Resource.id == old.id).values(
            action="DELETE", status="IN_PROGRESS", engine_id=GHOST, progress=None,
            progress_action=None))
    assert await recover(service, sid) == [sid]
    shown = await service.show_stack(ctx, stack["stack_identity"])
    assert (shown["stack_status"], shown["stack_status_reason"]) == (
        "UPDATE_COMPLETE", "Stack UPDATE completed successfully")
    with service.store.database.session() as s:
        names = [r.name for r in db_resources.list_resources(s, sid)]
    assert sorted(names) == ["a", "b", "c", "d"]  # the superseded row is gone


async def test_a_process_that_never_sweeps_beats_at_its_interval(
        sqlite_url: str) -> None:
    """An API process registers and beats but never sweeps: once its first sweep time
    had passed, the wait before each beat fell to 0 and the heartbeat became a busy loop
    of UPDATEs (hundreds a second on PostgreSQL, found by bench/scaleout_bench.py)."""
    import asyncio
    import types

    from kiln.engine.service.recovery import Recovery

    svc = EngineService(db_url=sqlite_url, engine_id="api-one")
    await svc.start()
    try:
        beats = 0
        store = svc.engine.store.engines
        beat = store.heartbeat

        async def counted(engine_id: str) -> None:
            nonlocal beats
            beats += 1
            await beat(engine_id)

        store.heartbeat = counted  # type: ignore[method-assign]
        conf = types.SimpleNamespace(
            kiln_engine=types.SimpleNamespace(heartbeat_interval=0.05,
                                              engine_dead_after=0.2),
            periodic_interval=60, host="api-host")
        api = Recovery(svc.engine, conf, sweeps=False)  # type: ignore[arg-type]
        await api.start()
        # the window is what is measured: beats over 1 s, every 0.05 s, sweep due at 0.1 s
        await asyncio.sleep(1.0)
        await api.stop()
        assert 5 <= beats <= 40, beats
    finally:
        await svc.stop()
