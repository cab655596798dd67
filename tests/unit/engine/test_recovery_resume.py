"""Recovery resumes what an engine left, instead of failing it or losing resources.

An engine "dies" here the way a stopping engine hands its work over: its running tasks
are cancelled in hand-off mode (resources stay IN_PROGRESS with their persisted tokens),
which is what a SIGKILL leaves too, minus the lock (a dead engine's lock is stolen; see
test_recovery.py). The next engine's start() sweeps the stack up and resumes it.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

import pytest
import sqlalchemy as sa

from kiln.db import locks as db_locks
from kiln.db import snapshots as db_snapshots
from kiln.db import stacks as db_stacks
from kiln.db.models import Resource, Stack
from kiln.engine.service import EngineService, RequestContext
from kiln.resources.heat.test_resource import TestResource

from .support import create, hot, resources
from .test_recovery import GHOST, crash, mid, recover

DEADLINE = 30.0


async def halt(svc: EngineService) -> None:
    """Stop an engine at once, leaving its actions as a crash would (no grace)."""
    engine = svc.engine
    engine.recorder.handoff = True
    tasks = [t for t in engine.tasks.values() if not t.done()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await svc.stop()


async def until(check: Callable[[], Any], what: str) -> None:
    """Poll a condition of the engine's state, bounded by a deadline."""
    end = time.monotonic() + DEADLINE
    while not await check():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


async def started(sqlite_url: str) -> EngineService:
    svc = EngineService(db_url=sqlite_url)
    await svc.start()
    return svc


def token_committed(svc: EngineService, stack_id: str, name: str) -> Callable[[], Any]:
    async def check() -> bool:
        with svc.store.database.session() as s:
            row = s.execute(sa.select(Resource.progress_action).where(
                Resource.stack_id == stack_id, Resource.name == name,
                Resource.replaced_by.is_(None))).first()
        return row is not None and row[0] is not None
    return check


def fast(override: Any) -> None:
    override(poll_initial_delay=0.001, poll_max_delay=0.05, group="kiln_engine")
    override(graceful_shutdown_timeout=1)


async def test_an_update_rollback_cut_short_is_resumed_not_turned_into_a_delete(
        sqlite_url: str, ctx: RequestContext, override: Any) -> None:
    """Issue 10: the resumed rollback of an *update* used to be taken for a create's
    rollback (the previous template id was cleared when the rollback began) and
    deleted every resource, reporting ROLLBACK_COMPLETE with none left."""
    fast(override)
    strings = {f"s{i}": {"type": "OS::Heat::RandomString"} for i in range(5)}

    def template(value: str, **more: Any) -> dict[str, Any]:
        slow = {"type": "OS::Heat::TestResource",
                "properties": {"value": value, "action_wait_secs": {"update": 1}}}
        return hot({**strings, "slow": slow, **more},
                   {"out": {"value": {"get_attr": ["slow", "output"]}}})

    first = await started(sqlite_url)
    stack = await create(first, ctx, "rb", template("v1"))
    ident, sid = stack["stack_identity"], stack["id"]
    before = {r["resource_name"]: r["physical_resource_id"]
              for r in await first.list_stack_resources(ctx, ident)}
    bad = {"type": "OS::Heat::TestResource", "properties": {"fail": True}}
    await first.update_stack(ctx, ident, template("v2", bad=bad), {}, {},
                             {"disable_rollback": False})

    async def rolling_back() -> bool:
        shown = await first.show_stack(ctx, ident)
        return bool(shown["stack_status"] == "ROLLBACK_IN_PROGRESS")

    await until(rolling_back, "the rollback to start")
    await until(token_committed(first, sid, "slow"), "slow's rollback token")
    await halt(first)

    second = await started(sqlite_url)
    try:
        await second.wait_for_stack(sid, timeout=DEADLINE)
        shown = await second.show_stack(ctx, ident)
        assert shown["stack_status"] == "ROLLBACK_COMPLETE", shown["stack_status_reason"]
        after = {r["resource_name"]: r["physical_resource_id"]
                 for r in await second.list_stack_resources(ctx, ident)}
        assert after == before   # every resource of the old template, the same ones
        assert await resources(second, ctx, ident) == {
            **{name: "CREATE_COMPLETE" for name in strings}, "slow": "UPDATE_COMPLETE"}
        assert {o["output_key"]: o["output_value"] for o in shown["outputs"]} == {
            "out": "v1"}
        # the stack is usable: the same update without the failing resource works
        await second.update_stack(ctx, ident, template("v3"), {}, {}, {})
        await second.wait_for_stack(sid, timeout=DEADLINE)
        assert (await second.show_stack(ctx, ident))["stack_status"] == "UPDATE_COMPLETE"
    finally:
        await second.stop()


async def test_an_engine_stopping_during_a_resumed_create_hands_it_over_again(
        sqlite_url: str, ctx: RequestContext, override: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 11: recovery's own copy of the poll loop had no hand-off check, so an
    engine that stopped while resuming a create failed it ("CREATE aborted")."""
    fast(override)
    template = hot({"slow": {"type": "OS::Heat::TestResource",
                             "properties": {"action_wait_secs": {"create": 1.5}}}})
    first = await started(sqlite_url)
    ident = await first.create_stack(ctx, "twice", template, {}, {}, {})
    sid = ident["stack_id"]
    await until(token_committed(first, sid, "slow"), "slow's create token")
    await halt(first)

    checked = asyncio.Event()
    original = TestResource.check_create_complete

    async def check(self: TestResource, token: Any) -> bool:
        checked.set()
        return await original(self, token)

    monkeypatch.setattr(TestResource, "check_create_complete", check)
    second = await started(sqlite_url)
    assert second.engine.running(sid)            # resumed by start()'s sweep
    await asyncio.wait_for(checked.wait(), DEADLINE)
    await halt(second)                            # and stopped again mid-way
    monkeypatch.undo()

    third = await started(sqlite_url)
    try:
        await third.wait_for_stack(sid, timeout=DEADLINE)
        shown = await third.show_stack(ctx, ident)
        assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
        slow = [e["resource_status"] for e in await third.list_events(ctx, ident)
                if e["resource_name"] == "slow"]
        assert sorted(slow) == ["CREATE_COMPLETE", "CREATE_IN_PROGRESS"]
    finally:
        await third.stop()


async def test_a_snapshot_cut_short_is_completed(
        service: EngineService, ctx: RequestContext) -> None:
    """Issue 9: snapshot rows stayed IN_PROGRESS forever after a crash (neither
    restorable nor deletable)."""
    template = hot({"a": {"type": "OS::Heat::RandomString"}})
    stack = await create(service, ctx, "snap", template)
    sid, ident = stack["id"], stack["stack_identity"]
    snap = await service.store.database.write(db_snapshots.create_snapshot, sid, "demo",
                                              "s1", action="CREATE", status="IN_PROGRESS",
                                              data={})
    crash(service, sid, "SNAPSHOT", {"a": mid("SNAPSHOT")})
    await recover(service, sid)
    shown = await service.show_snapshot(ctx, ident, snap.id)
    assert (shown["status"], shown["status_reason"]) == (
        "COMPLETE", "Stack SNAPSHOT completed successfully")
    assert (await service.show_stack(ctx, ident))["stack_status"] == "SNAPSHOT_COMPLETE"
    await service.stack_restore(ctx, ident, snap.id)
    await service.wait_for_stack(sid)
    assert (await service.show_stack(ctx, ident))["stack_status"] == "RESTORE_COMPLETE"
    await service.delete_snapshot(ctx, ident, snap.id)
    assert await service.list_snapshots(ctx, ident) == []


async def test_a_snapshot_row_left_in_progress_can_be_deleted(
        service: EngineService, ctx: RequestContext) -> None:
    """A row stuck by an older engine (the stack itself is not snapshotting)."""
    stack = await create(service, ctx, "stuck", hot({"a": {"type": "OS::Heat::None"}}))
    snap = await service.store.database.write(db_snapshots.create_snapshot, stack["id"],
                                              "demo", "s", action="CREATE",
                                              status="IN_PROGRESS", data={})
    await service.delete_snapshot(ctx, stack["stack_identity"], snap.id)
    assert await service.list_snapshots(ctx, stack["stack_identity"]) == []


CHILD = json.dumps({"heat_template_version": "2018-08-31",
                    "resources": {"inner": {"type": "OS::Heat::RandomString"}}})


def live_children(svc: EngineService, parent_id: str) -> list[str]:
    with svc.store.database.session() as s:
        return [c.id for c in db_stacks.list_child_stacks(s, parent_id)]


async def test_a_child_stack_made_by_a_handle_cut_short_is_rolled_back_too(
        service: EngineService, ctx: RequestContext) -> None:
    """Issue 9: a nested-stack resource caught inside its handle had no physical id, so
    the create's rollback left its child stack alive with its parent gone."""
    template = hot({"nest": {"type": "child.yaml"}})
    stack = await create(service, ctx, "orphan", template, files={"child.yaml": CHILD},
                         disable_rollback=False)
    sid, ident = stack["id"], stack["stack_identity"]
    [child] = live_children(service, sid)
    crash(service, sid, "CREATE", {"nest": mid("CREATE", physical_resource_id=None)})
    await recover(service, sid)
    shown = await service.show_stack(ctx, ident)
    assert shown["stack_status"] == "ROLLBACK_COMPLETE", shown["stack_status_reason"]
    assert live_children(service, sid) == []
    with service.store.database.session() as s:
        gone = db_stacks.get_stack(s, child, show_deleted=True)
    assert gone is not None and gone.deleted_at is not None


async def test_a_resumed_delete_takes_its_child_from_the_dead_engine(
        service: EngineService, ctx: RequestContext) -> None:
    """Issue 9: a resumed delete failed with ActionInProgress on its own nested member,
    still locked by the dead engine, when it reached it before the sweep did."""
    stack = await create(service, ctx, "member", hot({"nest": {"type": "child.yaml"}}),
                         files={"child.yaml": CHILD})
    sid = stack["id"]
    [child] = live_children(service, sid)
    with service.store.database.session() as s:
        s.execute(sa.update(Stack).where(Stack.id == child).values(engine_id=GHOST))
    services = service.engine.support.services
    assert services is not None
    assert await services.delete(child) is True
    await service.wait_for_stack(child)
    with service.store.database.session() as s:
        gone = db_stacks.get_stack(s, child, show_deleted=True)
        assert db_locks.get_stack_lock(s, child) is None
    assert gone is not None and gone.deleted_at is not None


async def test_a_resumed_update_that_rolls_back_removes_what_the_old_template_lacks(
        service: EngineService, ctx: RequestContext) -> None:
    """Found by the crash matrix: a failed resource the resumed update replaced (so its
    old row was kept for a rollback) stayed after the rollback to a template without
    it, in a ROLLBACK_COMPLETE stack."""
    stack = await create(service, ctx, "gone", hot({"a": {"type": "OS::Heat::None"}}))
    sid, ident = stack["id"], stack["stack_identity"]
    bad = {"type": "OS::Heat::TestResource", "properties": {"fail": True}}
    await service.update_stack(ctx, ident, hot({"a": {"type": "OS::Heat::None"},
                                                "bad": bad}), {}, {},
                               {"disable_rollback": True})
    await service.wait_for_stack(sid)
    with service.store.database.session() as s:
        s.execute(sa.update(Stack).where(Stack.id == sid).values(disable_rollback=False))
    crash(service, sid, "UPDATE", {"bad": mid("CREATE")})
    await recover(service, sid)
    shown = await service.show_stack(ctx, ident)
    assert shown["stack_status"] == "ROLLBACK_COMPLETE", shown["stack_status_reason"]
    assert await resources(service, ctx, ident) == {"a": "CREATE_COMPLETE"}
    with service.store.database.session() as s:
        names = s.execute(sa.select(Resource.name).where(Resource.stack_id == sid))
        assert sorted(n for (n,) in names) == ["a"]
