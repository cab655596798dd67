"""Every stack action through EngineService, once per database (SQLite, PostgreSQL,
MariaDB; see tests/support/fixtures.py ``db_url``), each on a fresh database.

The expectations are Heat 27's observable behaviour (the same the SQLite-only tests in
tests/unit/engine check, taken from the live peer): statuses and reasons, the events a
user lists, which physical ids survive an update, what outputs show. Running them on
every backend proves the engine's reads and writes mean the same thing on each.
Pauses are awaited through the engine (hooks, ``wait_for_stack``), never by sleeping.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from kiln.engine.service import EngineService, RequestContext

from .actions import (
    LONG,
    PROMPT,
    act,
    create,
    events,
    hooked,
    hot,
    outputs,
    physical,
    state,
    statuses,
    steps,
    tres,
    update,
)


async def paused(svc: EngineService, ident: Any, resource: str, hook: str) -> None:
    await asyncio.wait_for(
        svc.engine.breakpoints.reached(ident["stack_id"], resource, hook), PROMPT)


def value_of(name: str, attr: str = "output") -> dict[str, Any]:
    return {"type": "OS::Heat::Value", "properties": {"value": {"get_attr": [name, attr]}}}


# a: updated in place; b: replaced on change; c: reads b
def three(a: str, b: str, **b_props: Any) -> dict[str, Any]:
    return hot({"a": tres(a), "b": tres(b, update_replace=True, **b_props), "c": value_of("b")},
               outputs={"a": {"value": {"get_attr": ["a", "output"]}},
                        "c": {"value": {"get_attr": ["c", "value"]}}})


DONE = {"CREATE": "Stack CREATE completed successfully",
        "UPDATE": "Stack UPDATE completed successfully",
        "ROLLBACK": "Stack ROLLBACK completed successfully"}


# -- create ------------------------------------------------------------------------------

async def test_create_runs_in_dependency_order(svc: EngineService,
                                               ctx: RequestContext) -> None:
    template = hot({"a": {"type": "OS::Heat::None"}, "b": tres("one", ["a"]),
                    "c": value_of("b")}, outputs={"c": {"value": {"get_attr": ["c", "value"]}}})
    stack = await create(svc, ctx, "order", template)
    assert state(stack) == ("CREATE_COMPLETE", DONE["CREATE"])
    assert outputs(stack) == {"c": "one"}
    ident = stack["stack_identity"]
    assert await events(svc, ctx, ident) == [
        ("order", "CREATE_IN_PROGRESS", "Stack CREATE started"),
        ("a", "CREATE_IN_PROGRESS", "state changed"), ("a", "CREATE_COMPLETE", "state changed"),
        ("b", "CREATE_IN_PROGRESS", "state changed"), ("b", "CREATE_COMPLETE", "state changed"),
        ("c", "CREATE_IN_PROGRESS", "state changed"), ("c", "CREATE_COMPLETE", "state changed"),
        ("order", "CREATE_COMPLETE", DONE["CREATE"])]
    assert await statuses(svc, ctx, ident) == {n: "CREATE_COMPLETE" for n in "abc"}
    ids = await physical(svc, ctx, ident)
    assert all(ids.values()) and len(set(ids.values())) == 3
    b = await svc.describe_stack_resource(ctx, ident, "b")
    assert b["required_by"] == ["c"] and b["attributes"]["output"] == "one"


FAILING = hot({"a": {"type": "OS::Heat::None"}, "f": tres("x", ["a"], fail=True),
               "g": {"type": "OS::Heat::None", "depends_on": ["f"]}})
F_REASON = "ValueError: resources.f: Test Resource failed f"


async def test_failed_create_with_and_without_rollback(svc: EngineService,
                                                      ctx: RequestContext) -> None:
    for name, rollback in (("rb", True), ("norb", False)):
        stack = await create(svc, ctx, name, FAILING, disable_rollback=not rollback)
        ident = stack["stack_identity"]
        failed = (name, "CREATE_FAILED", f"Resource CREATE failed: {F_REASON}")
        evs = await events(svc, ctx, ident)
        assert evs[3:6] == [("f", "CREATE_IN_PROGRESS", "state changed"),
                            ("f", "CREATE_FAILED", F_REASON), failed]
        if rollback:
            assert state(stack) == ("ROLLBACK_COMPLETE", DONE["ROLLBACK"])
            assert [(n, s) for n, s, _ in evs[6:]] == [
                (name, "ROLLBACK_IN_PROGRESS"), ("f", "DELETE_IN_PROGRESS"),
                ("f", "DELETE_COMPLETE"), ("a", "DELETE_IN_PROGRESS"),
                ("a", "DELETE_COMPLETE"), (name, "ROLLBACK_COMPLETE")]
            assert await statuses(svc, ctx, ident) == {}
        else:
            assert state(stack) == failed[1:]
            assert len(evs) == 6
            assert await statuses(svc, ctx, ident) == {
                "a": "CREATE_COMPLETE", "f": "CREATE_FAILED", "g": "INIT_COMPLETE"}


# -- update ------------------------------------------------------------------------------

async def test_update_in_place_keeps_physical_ids(svc: EngineService,
                                                  ctx: RequestContext) -> None:
    stack = await create(svc, ctx, "inplace", three("one", "one"))
    ident = stack["stack_identity"]
    before = await physical(svc, ctx, ident)
    n = len(await events(svc, ctx, ident))
    stack = await update(svc, ctx, ident, three("two", "one"))
    assert state(stack) == ("UPDATE_COMPLETE", DONE["UPDATE"])
    assert stack["updated_time"] is not None
    assert outputs(stack) == {"a": "two", "c": "one"}
    assert await physical(svc, ctx, ident) == before
    # only the changed resource is touched
    assert await steps(svc, ctx, ident, n) == [
        ("inplace", "UPDATE_IN_PROGRESS"), ("a", "UPDATE_IN_PROGRESS"),
        ("a", "UPDATE_COMPLETE"), ("inplace", "UPDATE_COMPLETE")]
    assert await statuses(svc, ctx, ident) == {"a": "UPDATE_COMPLETE", "b": "CREATE_COMPLETE",
                                               "c": "CREATE_COMPLETE"}


async def test_update_with_replacement(svc: EngineService, ctx: RequestContext) -> None:
    stack = await create(svc, ctx, "replace", three("one", "one"))
    ident = stack["stack_identity"]
    before = await physical(svc, ctx, ident)
    n = len(await events(svc, ctx, ident))
    stack = await update(svc, ctx, ident, three("one", "two"))
    assert state(stack) == ("UPDATE_COMPLETE", DONE["UPDATE"])
    assert outputs(stack) == {"a": "one", "c": "two"}
    after = await physical(svc, ctx, ident)
    assert after["b"] != before["b"]
    assert (after["a"], after["c"]) == (before["a"], before["c"])
    evs = (await events(svc, ctx, ident))[n:]
    assert [s for r, s, _ in evs if r == "b"] == [
        "UPDATE_IN_PROGRESS", "UPDATE_COMPLETE", "CREATE_IN_PROGRESS", "CREATE_COMPLETE",
        "DELETE_IN_PROGRESS", "DELETE_COMPLETE"]
    assert ("b", "UPDATE_COMPLETE",
            f'The Resource TestResource "b" [{before["b"]}] Stack "replace" '
            f'[{stack["id"]}] requires replacement.') in evs
    order = [(r, s) for r, s, _ in evs]
    # the old b goes only once c (which reads b) has moved to the new one
    assert order.index(("c", "UPDATE_COMPLETE")) < order.index(("b", "DELETE_IN_PROGRESS"))
    assert len(await svc.list_stack_resources(ctx, ident)) == 3


PARAMS = hot({"a": tres({"get_param": "v"}), "b": tres({"get_param": "w"})},
             outputs={"a": {"value": {"get_attr": ["a", "output"]}}},
             parameters={"v": {"type": "string", "default": "v0"},
                         "w": {"type": "string", "default": "w0"}})


async def test_patch_update_keeps_stored_template_and_parameters(
        svc: EngineService, ctx: RequestContext) -> None:
    stack = await create(svc, ctx, "patch", PARAMS,
                         env={"parameters": {"v": "v1", "w": "w1"}})
    ident = stack["stack_identity"]
    before = await physical(svc, ctx, ident)
    n = len(await events(svc, ctx, ident))
    stack = await update(svc, ctx, ident, None, existing=True)
    assert state(stack) == ("UPDATE_COMPLETE", DONE["UPDATE"])
    assert (stack["parameters"]["v"], stack["parameters"]["w"]) == ("v1", "w1")
    assert await steps(svc, ctx, ident, n) == [("patch", "UPDATE_IN_PROGRESS"),
                                               ("patch", "UPDATE_COMPLETE")]
    stack = await update(svc, ctx, ident, None, env={"parameters": {"v": "v2"}},
                         existing=True)
    assert state(stack) == ("UPDATE_COMPLETE", DONE["UPDATE"])
    assert (stack["parameters"]["v"], stack["parameters"]["w"]) == ("v2", "w1")
    assert outputs(stack) == {"a": "v2"}
    assert await physical(svc, ctx, ident) == before
    assert await svc.get_template(ctx, ident) == PARAMS
    assert (await svc.get_environment(ctx, ident))["parameters"] == {"v": "v2", "w": "w1"}


async def test_failed_update_rolls_back_to_the_old_resources(
        svc: EngineService, ctx: RequestContext) -> None:
    start = three("one", "one")
    stack = await create(svc, ctx, "urb", start)
    ident = stack["stack_identity"]
    before = await physical(svc, ctx, ident)
    n = len(await events(svc, ctx, ident))
    stack = await update(svc, ctx, ident, three("one", "two", fail=True),
                         disable_rollback=False)
    reason = "ValueError: resources.b: Test Resource failed b"
    assert state(stack) == ("ROLLBACK_COMPLETE", DONE["ROLLBACK"])
    evs = (await events(svc, ctx, ident))[n:]
    assert [(r, s) for r, s, _ in evs] == [
        ("urb", "UPDATE_IN_PROGRESS"), ("b", "UPDATE_IN_PROGRESS"), ("b", "UPDATE_COMPLETE"),
        ("b", "CREATE_IN_PROGRESS"), ("b", "CREATE_FAILED"), ("urb", "UPDATE_FAILED"),
        ("urb", "ROLLBACK_IN_PROGRESS"), ("b", "DELETE_IN_PROGRESS"),
        ("b", "DELETE_COMPLETE"), ("urb", "ROLLBACK_COMPLETE")]
    assert evs[4][2] == reason and evs[5][2] == f"Resource CREATE failed: {reason}"
    assert await physical(svc, ctx, ident) == before
    assert await svc.get_template(ctx, ident) == start
    assert outputs(stack) == {"a": "one", "c": "one"}


async def test_cancel_update_with_and_without_rollback(svc: EngineService,
                                                      ctx: RequestContext) -> None:
    start = three("one", "one")
    stack = await create(svc, ctx, "cancel", start)
    ident = stack["stack_identity"]
    before = await physical(svc, ctx, ident)
    # each update adds "s", whose create would run for LONG seconds: only the cancel ends
    # it (however far the update got, the resources it had are left as they were)
    slow = three("one", "one")
    slow["resources"]["s"] = tres("s", action_wait_secs={"create": LONG})
    for rollback in (True, False):
        n = len(await events(svc, ctx, ident))
        await svc.update_stack(ctx, ident, slow, {}, {}, {})
        assert (await svc.show_stack(ctx, ident))["stack_status"] == "UPDATE_IN_PROGRESS"
        await svc.stack_cancel_update(ctx, ident, cancel_with_rollback=rollback)
        await svc.wait_for_stack(ident["stack_id"], timeout=PROMPT)
        stack = await svc.show_stack(ctx, ident)
        assert ("cancel", "UPDATE_FAILED", "Stack UPDATE cancelled") in \
            (await events(svc, ctx, ident))[n:]
        kept = await physical(svc, ctx, ident)
        if rollback:
            assert state(stack) == ("ROLLBACK_COMPLETE", DONE["ROLLBACK"])
            assert await svc.get_template(ctx, ident) == start
            assert kept == before
        else:
            assert state(stack) == ("UPDATE_FAILED", "Stack UPDATE cancelled")
            assert await svc.get_template(ctx, ident) == slow
            assert {name: kept[name] for name in before} == before
            assert (await statuses(svc, ctx, ident)).get("s") != "CREATE_COMPLETE"
    # the stack is usable afterwards: "s" goes, "a" is updated in place
    stack = await update(svc, ctx, ident, three("two", "one"))
    assert state(stack) == ("UPDATE_COMPLETE", DONE["UPDATE"])
    assert outputs(stack)["a"] == "two"
    assert await physical(svc, ctx, ident) == before


# -- other stack actions -----------------------------------------------------------------

PAIR = hot({"a": tres("x"), "b": {"type": "OS::Heat::None", "depends_on": ["a"]}})


async def test_suspend_then_resume(svc: EngineService, ctx: RequestContext) -> None:
    stack = await create(svc, ctx, "sr", PAIR)
    ident = stack["stack_identity"]
    n = len(await events(svc, ctx, ident))
    stack = await act(svc, ctx, ident, "stack_suspend")
    assert state(stack) == ("SUSPEND_COMPLETE", "Stack SUSPEND completed successfully")
    assert await steps(svc, ctx, ident, n) == [
        ("sr", "SUSPEND_IN_PROGRESS"), ("b", "SUSPEND_IN_PROGRESS"), ("b", "SUSPEND_COMPLETE"),
        ("a", "SUSPEND_IN_PROGRESS"), ("a", "SUSPEND_COMPLETE"), ("sr", "SUSPEND_COMPLETE")]
    assert await statuses(svc, ctx, ident) == {"a": "SUSPEND_COMPLETE",
                                               "b": "SUSPEND_COMPLETE"}
    n = len(await events(svc, ctx, ident))
    stack = await act(svc, ctx, ident, "stack_resume")
    assert state(stack) == ("RESUME_COMPLETE", "Stack RESUME completed successfully")
    assert await steps(svc, ctx, ident, n) == [
        ("sr", "RESUME_IN_PROGRESS"), ("a", "RESUME_IN_PROGRESS"), ("a", "RESUME_COMPLETE"),
        ("b", "RESUME_IN_PROGRESS"), ("b", "RESUME_COMPLETE"), ("sr", "RESUME_COMPLETE")]


async def test_check(svc: EngineService, ctx: RequestContext) -> None:
    stack = await create(svc, ctx, "chk", PAIR)
    ident = stack["stack_identity"]
    before = await physical(svc, ctx, ident)
    stack = await act(svc, ctx, ident, "stack_check")
    assert state(stack) == ("CHECK_COMPLETE", "Stack CHECK completed successfully. "
                            "'CHECK' not fully supported (see resources)")
    assert await statuses(svc, ctx, ident) == {"a": "CHECK_COMPLETE", "b": "CHECK_COMPLETE"}
    b = await svc.describe_stack_resource(ctx, ident, "b")
    assert b["resource_status_reason"] == "CHECK not supported for OS::Heat::None"
    assert await physical(svc, ctx, ident) == before


SNAP = hot({"r": {"type": "OS::Heat::RandomString", "properties": {"length": 8}},
            "n": {"type": "OS::Heat::None"}},
           outputs={"value": {"value": {"get_attr": ["r", "value"]}}})


async def test_snapshot_restore_list_and_delete(svc: EngineService,
                                                ctx: RequestContext) -> None:
    stack = await create(svc, ctx, "snap", SNAP)
    ident = stack["stack_identity"]
    snap = await svc.stack_snapshot(ctx, ident, "first")
    assert (snap["name"], snap["status"]) == ("first", "IN_PROGRESS")
    await svc.wait_for_stack(stack["id"], timeout=PROMPT)
    shown = await svc.show_snapshot(ctx, ident, snap["id"])
    assert (shown["status"], shown["status_reason"]) == (
        "COMPLETE", "Stack SNAPSHOT completed successfully")
    assert {n: (r["action"], r["status"]) for n, r in shown["data"]["resources"].items()} == {
        "r": ("SNAPSHOT", "COMPLETE"), "n": ("SNAPSHOT", "COMPLETE")}
    assert shown["data"]["resources"]["r"]["resource_data"] == {
        "value": outputs(stack)["value"]}
    assert (await svc.show_stack(ctx, ident))["stack_status"] == "SNAPSHOT_COMPLETE"

    changed = hot({"r": {"type": "OS::Heat::RandomString", "properties": {"length": 12}},
                   "v": {"type": "OS::Heat::Value", "properties": {"value": "x"}}},
                  outputs={"value": {"value": {"get_attr": ["r", "value"]}}})
    assert len(outputs(await update(svc, ctx, ident, changed))["value"]) == 12
    stack = await act(svc, ctx, ident, "stack_restore", snap["id"])
    assert state(stack) == ("RESTORE_COMPLETE", "Stack RESTORE completed successfully")
    assert await statuses(svc, ctx, ident) == {"r": "CREATE_COMPLETE", "n": "CREATE_COMPLETE"}
    assert await svc.get_template(ctx, ident) == SNAP
    assert len(outputs(stack)["value"]) == 8

    second = await svc.stack_snapshot(ctx, ident, "second")
    await svc.wait_for_stack(stack["id"], timeout=PROMPT)
    assert sorted(s["name"] for s in await svc.list_snapshots(ctx, ident)) == [
        "first", "second"]
    await svc.delete_snapshot(ctx, ident, snap["id"])
    assert [s["id"] for s in await svc.list_snapshots(ctx, ident)] == [second["id"]]


TWO = hot({"r": {"type": "OS::Heat::RandomString", "properties": {"length": 8}},
           "n": {"type": "OS::Heat::None", "depends_on": ["r"]}},
          outputs={"value": {"value": {"get_attr": ["r", "value"]}}})


async def test_abandon_then_adopt(svc: EngineService, ctx: RequestContext) -> None:
    stack = await create(svc, ctx, "old", TWO)
    ident = stack["stack_identity"]
    before = await physical(svc, ctx, ident)
    data = await svc.abandon_stack(ctx, ident)
    await svc.wait_for_stack(stack["id"], timeout=PROMPT)
    assert await svc.list_stacks(ctx) == []
    assert (await svc.show_stack(ctx, ident))["stack_status"] == "DELETE_COMPLETE"
    assert set(data["resources"]) == {"r", "n"}

    adopted = await svc.create_stack(ctx, "new", None, {}, {},  # type: ignore[arg-type]
                                     {"adopt_stack_data": data})
    await svc.wait_for_stack(adopted["stack_id"], timeout=PROMPT)
    shown = await svc.show_stack(ctx, adopted)
    assert state(shown) == ("ADOPT_COMPLETE", "Stack ADOPT completed successfully")
    assert outputs(shown) == outputs(stack)
    assert await physical(svc, ctx, adopted) == before
    assert await statuses(svc, ctx, adopted) == {"r": "ADOPT_COMPLETE", "n": "ADOPT_COMPLETE"}
    order = await steps(svc, ctx, adopted)
    assert order[0] == ("new", "ADOPT_IN_PROGRESS")
    assert order.index(("r", "ADOPT_COMPLETE")) < order.index(("n", "ADOPT_IN_PROGRESS"))


async def test_export_keeps_the_stack(svc: EngineService, ctx: RequestContext) -> None:
    stack = await create(svc, ctx, "exp", TWO, tags="t1,t2")
    ident = stack["stack_identity"]
    data = await svc.export_stack(ctx, ident)
    assert (data["name"], data["id"], data["action"], data["status"]) == (
        "exp", stack["id"], "CREATE", "COMPLETE")
    assert data["template"] == TWO
    assert data["tags"] == ["t1", "t2"]
    assert data["project_id"] == "backend"
    ids = await physical(svc, ctx, ident)
    assert {n: (r["resource_id"], r["type"], r["action"], r["status"])
            for n, r in data["resources"].items()} == {
        "r": (ids["r"], "OS::Heat::RandomString", "CREATE", "COMPLETE"),
        "n": (ids["n"], "OS::Heat::None", "CREATE", "COMPLETE")}
    assert data["resources"]["r"]["resource_data"] == {"value": outputs(stack)["value"]}
    assert (await svc.show_stack(ctx, ident))["stack_status"] == "CREATE_COMPLETE"


async def test_delete_with_retain_policy(svc: EngineService, ctx: RequestContext) -> None:
    # deleting "keep" would wait LONG seconds: Retain must not delete it at all
    template = hot({"keep": {"type": "OS::Heat::TestResource", "deletion_policy": "Retain",
                             "properties": {"action_wait_secs": {"delete": LONG}}},
                    "gone": tres("g", ["keep"])})
    stack = await create(svc, ctx, "retain", template)
    ident = stack["stack_identity"]
    n = len(await events(svc, ctx, ident))
    stack = await act(svc, ctx, ident, "delete_stack")
    assert state(stack) == ("DELETE_COMPLETE", "Stack DELETE completed successfully")
    assert await steps(svc, ctx, ident, n) == [
        ("retain", "DELETE_IN_PROGRESS"), ("gone", "DELETE_IN_PROGRESS"),
        ("gone", "DELETE_COMPLETE"), ("keep", "DELETE_IN_PROGRESS"),
        ("keep", "DELETE_COMPLETE"), ("retain", "DELETE_COMPLETE")]
    assert await svc.list_stacks(ctx) == []
    deleted = await svc.list_stacks(ctx, show_deleted=True)
    assert [(s["stack_name"], s["stack_status"]) for s in deleted] == [
        ("retain", "DELETE_COMPLETE")]


async def test_mark_unhealthy_then_update_replaces(svc: EngineService,
                                                   ctx: RequestContext) -> None:
    stack = await create(svc, ctx, "sick", PAIR)
    ident = stack["stack_identity"]
    before = await physical(svc, ctx, ident)
    await svc.resource_mark_unhealthy(ctx, ident, "a", True, "broken disk")
    a = await svc.describe_stack_resource(ctx, ident, "a")
    assert (a["resource_status"], a["resource_status_reason"]) == ("CHECK_FAILED",
                                                                  "broken disk")
    stack = await update(svc, ctx, ident, None, existing=True)
    assert stack["stack_status"] == "UPDATE_COMPLETE"
    after = await physical(svc, ctx, ident)
    assert after["a"] != before["a"] and after["b"] == before["b"]
    assert (await statuses(svc, ctx, ident))["a"] == "CREATE_COMPLETE"


# -- hooks and signals -------------------------------------------------------------------

async def test_pre_create_hook_cleared_by_signal(svc: EngineService,
                                                 ctx: RequestContext) -> None:
    ident = await svc.create_stack(ctx, "hook", PAIR, hooked("a", "pre-create"), {}, {})
    await paused(svc, ident, "a", "pre-create")
    assert await statuses(svc, ctx, ident) == {"a": "INIT_COMPLETE", "b": "INIT_COMPLETE"}
    assert (await svc.show_stack(ctx, ident))["stack_status"] == "CREATE_IN_PROGRESS"
    assert await svc.resource_signal(ctx, ident, "a", {"unset_hook": "pre-create"}) is None
    await svc.wait_for_stack(ident["stack_id"], timeout=PROMPT)
    assert (await svc.show_stack(ctx, ident))["stack_status"] == "CREATE_COMPLETE"
    assert (await events(svc, ctx, ident))[:4] == [
        ("hook", "CREATE_IN_PROGRESS", "Stack CREATE started"),
        ("a", "INIT_COMPLETE", "CREATE paused until Hook pre-create is cleared"),
        ("a", "INIT_COMPLETE", "Hook pre-create is cleared"),
        ("a", "CREATE_IN_PROGRESS", "state changed")]


WAIT = hot({"handle": {"type": "OS::Heat::WaitConditionHandle"},
            "wait": {"type": "OS::Heat::WaitCondition",
                     "properties": {"handle": {"get_resource": "handle"}, "count": 2,
                                    "timeout": LONG}}},
           outputs={"data": {"value": {"get_attr": ["wait", "data"]}}})


async def test_wait_condition_completes_on_signals(svc: EngineService,
                                                   ctx: RequestContext) -> None:
    ident = await svc.create_stack(ctx, "wc", WAIT, hooked("handle", "post-create"), {}, {})
    await paused(svc, ident, "handle", "post-create")
    await svc.resource_signal(ctx, ident, "handle",
                              {"status": "SUCCESS", "reason": "ok", "data": "x", "id": "1"})
    await svc.resource_signal(ctx, ident, "handle", {"unset_hook": "post-create"})
    # one of the two signals it needs: the condition keeps the create going
    assert (await svc.show_stack(ctx, ident))["stack_status"] == "CREATE_IN_PROGRESS"
    await svc.resource_signal(ctx, ident, "handle",
                              {"status": "SUCCESS", "reason": "ok", "data": "y", "id": "2"})
    await svc.wait_for_stack(ident["stack_id"], timeout=PROMPT)
    stack = await svc.show_stack(ctx, ident)
    assert stack["stack_status"] == "CREATE_COMPLETE"
    assert json.loads(outputs(stack)["data"]) == {"1": "x", "2": "y"}
    assert [e for e in await events(svc, ctx, ident) if e[1] == "SIGNAL_COMPLETE"] == [
        ("handle", "SIGNAL_COMPLETE", "Signal: status:SUCCESS reason:ok")] * 2
    meta = (await svc.describe_stack_resource(ctx, ident, "handle"))["metadata"]
    assert meta == {"1": {"data": "x", "reason": "ok", "status": "SUCCESS"},
                    "2": {"data": "y", "reason": "ok", "status": "SUCCESS"}}
