"""Interleaving scenarios, each step released by the test in a chosen order (see gate.py).

Expected outcomes are Heat's: an action on a stack with an action running is refused
(ActionInProgress); a failed update rolls back to the previous resources (the replaced
one comes back with its old physical id); a failed create stops new starts and, unless
rollback is disabled, deletes what it made; a cancelled update rolls back; a hook holds
its resource (and its dependants) until cleared, and a delete may pre-empt it; a
ResourceGroup's rolling_update with max_batch_size 1 updates one member at a time, the
highest index first, and with min_in_service runs each batch whole before the next; a
restore brings back the snapshot's definitions after replacements.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kiln.engine.service import EngineService, RequestContext
from kiln.errors import ActionInProgress

from ..support import events, hot, resources
from .gate import TYPE, Gate


def g(depends: list[str] | None = None, **props: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"type": TYPE, "properties": props}
    if depends:
        body["depends_on"] = depends
    return body


async def physical(svc: EngineService, ctx: RequestContext, ident: Any) -> dict[str, str]:
    return {r["resource_name"]: r["physical_resource_id"]
            for r in await svc.list_stack_resources(ctx, ident)}


def stray_tasks() -> list[str]:
    """Tasks still running besides this test and the engine's housekeeping loop: after
    an action ends, none of its resource work may go on in the background."""
    me = asyncio.current_task()
    return [repr(t.get_coro()) for t in asyncio.all_tasks()
            if t is not me and not t.done() and "Recovery._loop" not in repr(t.get_coro())]


async def status(svc: EngineService, ctx: RequestContext, ident: Any) -> str:
    return str((await svc.show_stack(ctx, ident))["stack_status"])


async def test_update_during_create_conflicts(service: EngineService, ctx: RequestContext,
                                              gate: Gate) -> None:
    gate.arm("a", "CREATE")
    ident = await service.create_stack(ctx, "busy", hot({"a": g()}), {}, {}, {})
    await gate.arrived("a", "CREATE")
    with pytest.raises(ActionInProgress) as exc:
        await service.update_stack(ctx, ident, hot({"a": g(value="x")}), {}, {}, {})
    assert str(exc.value) == "Stack busy already has an action (CREATE) in progress."
    gate.release("a", "CREATE")
    await service.wait_for_stack(ident["stack_id"])
    assert await status(service, ctx, ident) == "CREATE_COMPLETE"


async def test_replace_then_rollback(service: EngineService, ctx: RequestContext,
                                     gate: Gate) -> None:
    start = hot({"a": g(generation="1"), "b": g(["a"], value="one")})
    ident = await service.create_stack(ctx, "rb", start, {}, {}, {})
    await service.wait_for_stack(ident["stack_id"])
    before = await physical(service, ctx, ident)

    gate.arm("a", "CREATE")         # the replacement of a
    gate.arm("b", "UPDATE")
    broken = hot({"a": g(generation="2"), "b": g(["a"], value="two", fail=["UPDATE"])})
    await service.update_stack(ctx, ident, broken, {}, {}, {"disable_rollback": False})
    await gate.arrived("a", "CREATE")
    assert await status(service, ctx, ident) == "UPDATE_IN_PROGRESS"
    gate.release("a", "CREATE")
    await gate.arrived("b", "UPDATE")
    gate.release("b", "UPDATE")      # ... and b's update fails
    await service.wait_for_stack(ident["stack_id"])
    shown = await service.show_stack(ctx, ident)
    assert shown["stack_status"] == "ROLLBACK_COMPLETE"
    after = await physical(service, ctx, ident)
    # the old a is back, not a third one; b, left UPDATE_FAILED, is replaced as Heat
    # replaces a failed resource
    assert after["a"] == before["a"]
    assert after["b"] != before["b"] and after["b"].startswith("b-g1-")
    b = await service.describe_stack_resource(ctx, ident, "b")
    assert b["attributes"]["value"] == "one"
    evs = await events(service, ctx, ident)
    assert ("rb", "UPDATE_FAILED",
            "Resource UPDATE failed: Exception: resources.b: UPDATE refused by the test") in evs


@pytest.mark.parametrize("disable_rollback", [True, False])
async def test_failure_in_the_middle_of_a_create(service: EngineService,
                                                 ctx: RequestContext, gate: Gate,
                                                 disable_rollback: bool) -> None:
    template = hot({"a": g(), "b": g(["a"], fail=["CREATE"]), "c": g(["b"])})
    gate.arm("a", "CREATE")
    gate.arm("b", "CREATE")
    ident = await service.create_stack(ctx, "mid", template, {}, {},
                                       {"disable_rollback": disable_rollback})
    await gate.arrived("a", "CREATE")
    states = await resources(service, ctx, ident)
    assert (states["b"], states["c"]) == ("INIT_COMPLETE", "INIT_COMPLETE")
    gate.release("a", "CREATE")
    await gate.arrived("b", "CREATE")
    gate.release("b", "CREATE")      # b fails in the middle of the create
    await service.wait_for_stack(ident["stack_id"])
    shown = await service.show_stack(ctx, ident)
    reason = "Resource CREATE failed: Exception: resources.b: CREATE refused by the test"
    evs = await events(service, ctx, ident)
    assert ("mid", "CREATE_FAILED", reason) in evs
    assert ("c", "CREATE") not in [(n, a) for _, n, a in gate.timeline]
    if disable_rollback:
        assert shown["stack_status"] == "CREATE_FAILED"
        assert await resources(service, ctx, ident) == {
            "a": "CREATE_COMPLETE", "b": "CREATE_FAILED", "c": "INIT_COMPLETE"}
    else:
        assert shown["stack_status"] == "ROLLBACK_COMPLETE"
        assert await resources(service, ctx, ident) == {}
        assert ("a", "DELETE_COMPLETE", "state changed") in evs


async def test_cancel_update_rolls_back(service: EngineService, ctx: RequestContext,
                                        gate: Gate) -> None:
    ident = await service.create_stack(ctx, "cancel", hot({"a": g(value="old")}),
                                       {}, {}, {})
    await service.wait_for_stack(ident["stack_id"])
    gate.arm("a", "UPDATE")
    await service.update_stack(ctx, ident, hot({"a": g(value="new")}), {}, {}, {})
    await gate.arrived("a", "UPDATE")
    await service.stack_cancel_update(ctx, ident, cancel_with_rollback=True)
    await service.wait_for_stack(ident["stack_id"])
    assert await status(service, ctx, ident) == "ROLLBACK_COMPLETE"
    assert await service.get_template(ctx, ident) == hot({"a": g(value="old")})


async def test_hook_pauses_then_resumes(service: EngineService, ctx: RequestContext,
                                        gate: Gate) -> None:
    env = {"resource_registry": {"resources": {"b": {"hooks": "pre-create"}}}}
    gate.arm("a", "CREATE")
    ident = await service.create_stack(ctx, "hook",
                                       hot({"a": g(), "b": g(), "c": g(["b"])}), env, {}, {})
    await service.engine.breakpoints.reached(ident["stack_id"], "b", "pre-create")
    await gate.arrived("a", "CREATE")
    # b waits at its hook, a is held by the test, c waits for b
    states = await resources(service, ctx, ident)
    assert (states["b"], states["c"]) == ("INIT_COMPLETE", "INIT_COMPLETE")
    gate.release("a", "CREATE")
    await service.resource_signal(ctx, ident, "b", {"unset_hook": "pre-create"})
    await service.wait_for_stack(ident["stack_id"])
    assert await status(service, ctx, ident) == "CREATE_COMPLETE"
    names = [name for kind, name, _ in gate.timeline if kind in ("pass", "release")]
    assert names.index("b") < names.index("c")


async def test_delete_during_paused_hook(service: EngineService, ctx: RequestContext,
                                         gate: Gate) -> None:
    env = {"resource_registry": {"resources": {"b": {"hooks": "pre-create"}}}}
    ident = await service.create_stack(ctx, "hookdel", hot({"a": g(), "b": g(["a"])}),
                                       env, {}, {})
    await service.engine.breakpoints.reached(ident["stack_id"], "b", "pre-create")
    gate.arm("a", "DELETE")
    await service.delete_stack(ctx, ident)
    await gate.arrived("a", "DELETE")
    assert ("b", "CREATE") not in [(n, a) for _, n, a in gate.timeline]
    gate.release("a", "DELETE")
    await service.wait_for_stack(ident["stack_id"])
    assert await status(service, ctx, ident) == "DELETE_COMPLETE"
    # the pre-empted create is gone: b was never created behind the delete's back
    assert stray_tasks() == []
    assert ("b", "CREATE") not in [(n, a) for _, n, a in gate.timeline]


async def test_resource_group_rolling_update_one_at_a_time(
        service: EngineService, ctx: RequestContext, gate: Gate) -> None:
    def group(value: str) -> dict[str, Any]:
        return hot({"grp": {
            "type": "OS::Heat::ResourceGroup",
            "properties": {"count": 3, "resource_def": g(value=value)},
            "update_policy": {"rolling_update": {"max_batch_size": 1}}}})

    ident = await service.create_stack(ctx, "grp", group("one"), {}, {}, {})
    await service.wait_for_stack(ident["stack_id"])
    assert await status(service, ctx, ident) == "CREATE_COMPLETE"
    gate.arm_all("UPDATE")
    await service.update_stack(ctx, ident, group("two"), {}, {}, {})
    order = []
    for _ in range(3):
        name = await gate.next_arrival("UPDATE")
        # one batch of one member at a time
        assert gate.held() == [(name, "UPDATE")]
        order.append(name)
        gate.release(name, "UPDATE")
    await service.wait_for_stack(ident["stack_id"])
    assert await status(service, ctx, ident) == "UPDATE_COMPLETE"
    assert order == ["2", "1", "0"]   # Heat 27 changes the highest index first


async def test_resource_group_rolling_update_keeps_min_in_service(
        service: EngineService, ctx: RequestContext, gate: Gate) -> None:
    """Heat 27 with count 4, max_batch_size 2, min_in_service 3: the first batch adds a
    fifth member beside changing "3", the second changes "2" and "1", the last changes
    "0" and removes the fifth. A batch starts only when the one before has finished."""
    def group(value: str) -> dict[str, Any]:
        return hot({"grp": {
            "type": "OS::Heat::ResourceGroup",
            "properties": {"count": 4, "resource_def": g(value=value)},
            "update_policy": {"rolling_update": {"max_batch_size": 2,
                                                 "min_in_service": 3}}}})

    ident = await service.create_stack(ctx, "mis", group("one"), {}, {}, {})
    await service.wait_for_stack(ident["stack_id"])
    for action in ("CREATE", "UPDATE", "DELETE"):
        gate.arm_all(action)
    await service.update_stack(ctx, ident, group("two"), {}, {}, {})
    batches = [[("4", "CREATE"), ("3", "UPDATE")], [("2", "UPDATE"), ("1", "UPDATE")],
               [("0", "UPDATE")], [("4", "DELETE")]]
    for batch in batches:
        for name, action in batch:
            await gate.arrived(name, action)
        # the whole batch runs at once, and nothing of the next one
        assert sorted(gate.held()) == sorted(batch)
        for name, action in batch:
            gate.release(name, action)
    await service.wait_for_stack(ident["stack_id"])
    assert await status(service, ctx, ident) == "UPDATE_COMPLETE"
    arrivals = [(n, a) for kind, n, a in gate.timeline if kind == "arrive"]
    assert arrivals[-1] == ("4", "DELETE") and len(arrivals) == 6


async def test_restore_snapshot_after_replacements(service: EngineService,
                                                   ctx: RequestContext, gate: Gate) -> None:
    start = hot({"a": g(generation="1", value="v1"), "b": g(["a"], value="b1")})
    ident = await service.create_stack(ctx, "restore", start, {}, {}, {})
    await service.wait_for_stack(ident["stack_id"])
    snap = await service.stack_snapshot(ctx, ident, "first")
    await service.wait_for_stack(ident["stack_id"])
    first = await physical(service, ctx, ident)

    replaced = hot({"a": g(generation="2", value="v2"), "b": g(["a"], value="b2")})
    await service.update_stack(ctx, ident, replaced, {}, {}, {})
    await service.wait_for_stack(ident["stack_id"])
    second = await physical(service, ctx, ident)
    assert second["a"] != first["a"] and second["a"].startswith("a-g2-")
    assert second["b"] == first["b"]                          # updated in place

    gate.arm("a", "CREATE")
    await service.stack_restore(ctx, ident, snap["id"])
    await gate.arrived("a", "CREATE")                         # generation 1 rebuilt
    assert await status(service, ctx, ident) == "RESTORE_IN_PROGRESS"
    gate.release("a", "CREATE")
    await service.wait_for_stack(ident["stack_id"])
    assert await status(service, ctx, ident) == "RESTORE_COMPLETE"
    restored = await physical(service, ctx, ident)
    assert restored["a"].startswith("a-g1-") and restored["a"] != first["a"]
    assert await service.get_template(ctx, ident) == start
    b = await service.describe_stack_resource(ctx, ident, "b")
    assert b["attributes"]["value"] == "b1"


async def test_a_replaced_resource_is_deleted_once_nothing_needs_it(
        service: EngineService, ctx: RequestContext, gate: Gate) -> None:
    """As in Heat's convergence: the old resource goes inside the update's traversal,
    once every resource requiring it has been updated to its replacement."""
    start = hot({"a": g(generation="1"), "b": g(generation="1"),
                 "c": g(["b"], value="x")})
    ident = await service.create_stack(ctx, "early", start, {}, {}, {})
    await service.wait_for_stack(ident["stack_id"])
    before = await physical(service, ctx, ident)

    gate.arm("b", "CREATE")       # b's replacement is held ...
    gate.arm("a", "DELETE")
    gate.arm("b", "DELETE")
    gate.arm("c", "UPDATE")
    new = hot({"a": g(generation="2"), "b": g(generation="2"), "c": g(["b"], value="y")})
    await service.update_stack(ctx, ident, new, {}, {}, {})
    await gate.arrived("b", "CREATE")
    # ... while the old a, which nothing requires, is deleted already
    await gate.arrived("a", "DELETE")
    assert await status(service, ctx, ident) == "UPDATE_IN_PROGRESS"
    gate.release("a", "DELETE")
    gate.release("b", "CREATE")
    # the old b waits for c, which requires b, to be updated to the new b
    await gate.arrived("c", "UPDATE")
    assert ("arrive", "b", "DELETE") not in gate.timeline
    gate.release("c", "UPDATE")
    await gate.arrived("b", "DELETE")
    gate.release("b", "DELETE")
    await service.wait_for_stack(ident["stack_id"])
    assert await status(service, ctx, ident) == "UPDATE_COMPLETE"
    after = await physical(service, ctx, ident)
    assert after["a"].startswith("a-g2-") and after["b"].startswith("b-g2-")
    assert after["c"] == before["c"]
    evs = [(n, s) for n, s, _ in await events(service, ctx, ident)]
    update_done = evs.index(("early", "UPDATE_COMPLETE"))
    # the old a's delete is recorded before the update completes, not after it
    assert evs.index(("a", "DELETE_COMPLETE")) < update_done
    assert not stray_tasks()


async def test_a_replaced_resource_a_removed_one_requires_waits_for_its_delete(
        service: EngineService, ctx: RequestContext, gate: Gate) -> None:
    start = hot({"a": g(generation="1"), "r": g(["a"])})
    ident = await service.create_stack(ctx, "order", start, {}, {}, {})
    await service.wait_for_stack(ident["stack_id"])
    gate.arm("r", "DELETE")
    await service.update_stack(ctx, ident, hot({"a": g(generation="2")}), {}, {}, {})
    await gate.arrived("r", "DELETE")
    # r is removed by the update and still requires the old a: a stays until r is gone
    assert ("pass", "a", "DELETE") not in gate.timeline
    gate.release("r", "DELETE")
    await service.wait_for_stack(ident["stack_id"])
    assert await status(service, ctx, ident) == "UPDATE_COMPLETE"
    timeline = [(step, n, a) for step, n, a in gate.timeline if a == "DELETE"]
    assert timeline.index(("release", "r", "DELETE")) < timeline.index(("pass", "a", "DELETE"))
