"""Snapshots and restore through EngineService, against what the live Heat 27 did for
the same calls: the snapshot is answered as CREATE/IN_PROGRESS with the stack document
but no resources, then becomes COMPLETE "Stack SNAPSHOT completed successfully" with
every resource in SNAPSHOT/COMPLETE; restore is an update (RESTORE_IN_PROGRESS ...
RESTORE_COMPLETE) back to the snapshot's template, replacing what was replaced since.
"""

from __future__ import annotations

import pytest

from kiln.db import snapshots as db_snapshots
from kiln.db import stacks as db_stacks
from kiln.engine.service import EngineService, RequestContext
from kiln.errors import (
    ActionInProgress,
    EntityNotFound,
    NotSupported,
    RequestLimitExceeded,
)

from .conftest import Override
from .support import create, events, hot, resources

TEMPLATE = hot({
    "r": {"type": "OS::Heat::RandomString", "properties": {"length": 8}},
    "n": {"type": "OS::Heat::None"},
}, outputs={"value": {"value": {"get_attr": ["r", "value"]}}})


async def test_snapshot_records_every_resource(service: EngineService,
                                               ctx: RequestContext) -> None:
    stack = await create(service, ctx, "snap", TEMPLATE)
    ident = stack["stack_identity"]
    snap = await service.stack_snapshot(ctx, ident, "snap-a")
    assert (snap["name"], snap["action"], snap["status"], snap["status_reason"]) == (
        "snap-a", "CREATE", "IN_PROGRESS", None)
    assert snap["data"]["resources"] == {}
    assert snap["data"]["template"] == TEMPLATE
    await service.wait_for_stack(stack["id"])

    shown = await service.show_snapshot(ctx, ident, snap["id"])
    assert (shown["status"], shown["status_reason"]) == (
        "COMPLETE", "Stack SNAPSHOT completed successfully")
    data = shown["data"]
    assert (data["action"], data["status"]) == ("SNAPSHOT", "COMPLETE")
    assert {n: (r["action"], r["status"]) for n, r in data["resources"].items()} == {
        "r": ("SNAPSHOT", "COMPLETE"), "n": ("SNAPSHOT", "COMPLETE")}
    assert data["resources"]["r"]["resource_data"] == {
        "value": stack["outputs"][0]["output_value"]}
    assert await service.list_snapshots(ctx, ident) == [shown]

    evs = await events(service, ctx, ident)
    assert evs[-6] == ("snap", "SNAPSHOT_IN_PROGRESS", "Stack SNAPSHOT started")
    assert evs[-1] == ("snap", "SNAPSHOT_COMPLETE", "Stack SNAPSHOT completed successfully")
    assert sorted(evs[-5:-1]) == [("n", "SNAPSHOT_COMPLETE", "state changed"),
                                  ("n", "SNAPSHOT_IN_PROGRESS", "state changed"),
                                  ("r", "SNAPSHOT_COMPLETE", "state changed"),
                                  ("r", "SNAPSHOT_IN_PROGRESS", "state changed")]
    assert (await service.show_stack(ctx, ident))["stack_status"] == "SNAPSHOT_COMPLETE"

    await service.delete_snapshot(ctx, ident, snap["id"])
    assert await service.list_snapshots(ctx, ident) == []
    with pytest.raises(EntityNotFound) as exc:
        await service.show_snapshot(ctx, ident, snap["id"])
    assert exc.value.error_type == "NotFound"
    assert str(exc.value) == f"Snapshot with id {snap['id']} not found"


async def test_snapshot_limits_and_refusals(service: EngineService, ctx: RequestContext,
                                            override: Override) -> None:
    override(max_snapshots_per_stack=1)
    stack = await create(service, ctx, "lim", TEMPLATE)
    other = await create(service, ctx, "other", TEMPLATE)
    ident = stack["stack_identity"]
    snap = await service.stack_snapshot(ctx, ident, None)
    await service.wait_for_stack(stack["id"])
    with pytest.raises(RequestLimitExceeded) as exc:
        await service.stack_snapshot(ctx, ident, None)
    assert str(exc.value) == ("Request limit exceeded: You have reached the maximum "
                              "snapshots per stack, 1. Please delete some snapshots.")
    with pytest.raises(EntityNotFound) as nf:
        await service.show_snapshot(ctx, other["stack_identity"], snap["id"])
    assert nf.value.error_type == "SnapshotNotFound"
    assert str(nf.value) == (f"The Snapshot ({snap['id']}) for Stack (other) could not "
                             "be found.")


async def test_no_snapshot_while_an_action_runs(service: EngineService,
                                                ctx: RequestContext) -> None:
    env = {"resource_registry": {"resources": {"n": {"hooks": "pre-create"}}}}
    ident = await service.create_stack(ctx, "busy", TEMPLATE, env, {}, {})
    await service.engine.breakpoints.reached(ident["stack_id"], "n", "pre-create")
    with pytest.raises(ActionInProgress) as exc:
        await service.stack_snapshot(ctx, ident, "x")
    assert str(exc.value) == "Stack busy already has an action (CREATE) in progress."
    await service.resource_signal(ctx, ident, "n", {"unset_hook": "pre-create"})
    await service.wait_for_stack(ident["stack_id"])


async def test_restore_after_replacements(service: EngineService,
                                          ctx: RequestContext) -> None:
    stack = await create(service, ctx, "rest", TEMPLATE)
    ident = stack["stack_identity"]
    snap = await service.stack_snapshot(ctx, ident, "before")
    await service.wait_for_stack(stack["id"])
    changed = hot({
        "r": {"type": "OS::Heat::RandomString", "properties": {"length": 12}},
        "v": {"type": "OS::Heat::Value", "properties": {"value": "x"}},
    }, outputs={"value": {"value": {"get_attr": ["r", "value"]}}})
    await service.update_stack(ctx, ident, changed, {}, {}, {})
    await service.wait_for_stack(stack["id"])
    updated = await service.show_stack(ctx, ident)
    assert updated["stack_status"] == "UPDATE_COMPLETE"
    assert len(updated["outputs"][0]["output_value"]) == 12

    await service.stack_restore(ctx, ident, snap["id"])
    await service.wait_for_stack(stack["id"])
    shown = await service.show_stack(ctx, ident)
    assert (shown["stack_status"], shown["stack_status_reason"]) == (
        "RESTORE_COMPLETE", "Stack RESTORE completed successfully")
    assert await resources(service, ctx, ident) == {"r": "CREATE_COMPLETE",
                                                    "n": "CREATE_COMPLETE"}
    assert await service.get_template(ctx, ident) == TEMPLATE
    # RandomString keeps nothing to restore: Heat builds it again at the old length
    assert len(shown["outputs"][0]["output_value"]) == 8
    evs = await events(service, ctx, ident)
    start = evs.index(("rest", "RESTORE_IN_PROGRESS", "Stack RESTORE started"))
    assert ("v", "DELETE_COMPLETE", "state changed") in evs[start:]
    assert ("n", "CREATE_COMPLETE", "state changed") in evs[start:]


async def test_restore_needs_a_complete_snapshot(service: EngineService,
                                                 ctx: RequestContext) -> None:
    stack = await create(service, ctx, "inc", TEMPLATE)
    ident = stack["stack_identity"]
    # a snapshot still being taken (as stack_snapshot first stores it)
    with service.store.database.session() as s:
        snap = db_snapshots.create_snapshot(s, stack["id"], "demo", "pending",
                                            action="CREATE", status="IN_PROGRESS")
    with pytest.raises(NotSupported) as exc:
        await service.stack_restore(ctx, ident, snap.id)
    assert str(exc.value) == "Restoring incomplete snapshot is not supported."
    # deleting is refused while the stack is taking it (a row left IN_PROGRESS by a
    # crash, with the stack no longer snapshotting, can be deleted: test_recovery_resume)
    with service.store.database.session() as s:
        db_stacks.update_stack(s, stack["id"], {"action": "SNAPSHOT",
                                                "status": "IN_PROGRESS"})
    with pytest.raises(NotSupported) as exc:
        await service.delete_snapshot(ctx, ident, snap.id)
    assert str(exc.value) == "Deleting in-progress snapshot is not supported."
