"""Nested stacks, ResourceGroup, event and stack listings and the stack lock through
EngineService, once per database (SQLite, PostgreSQL, MariaDB), each on a fresh one.

These are the parts whose meaning rests most on the database: parent/child rows,
ordering and keyset pagination (ties on timestamps broken the same way everywhere),
exact filters, and the lock row another engine must respect. Expected values are Heat
27's behaviour for the same calls (see tests/unit/engine for the SQLite-only detail).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from kiln.engine.service import EngineService, RequestContext
from kiln.errors import ActionInProgress, EntityNotFound

from .actions import PROMPT, act, create, hooked, hot, outputs, tres, update

CHILD = json.dumps({
    "heat_template_version": "2018-08-31", "parameters": {"v": {"type": "string"}},
    "resources": {"t": {"type": "OS::Heat::TestResource",
                        "properties": {"value": {"get_param": "v"}}}},
    "outputs": {"out": {"value": {"get_attr": ["t", "output"]}}}})


def provider(v: str) -> dict[str, Any]:
    return hot({"kid": {"type": "child.yaml", "properties": {"v": v}}},
               outputs={"out": {"value": {"get_attr": ["kid", "out"]}}})


async def nested_ids(svc: EngineService, ctx: RequestContext, ident: Any) -> dict[str, str]:
    return {r["resource_name"]: r["physical_resource_id"]
            for r in await svc.list_stack_resources(ctx, ident, nested_depth=1)}


async def test_provider_template_nested_stack(svc: EngineService,
                                              ctx: RequestContext) -> None:
    files = {"child.yaml": CHILD}
    stack = await create(svc, ctx, "prov", provider("one"), files=files)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    assert outputs(stack) == {"out": "one"}
    ident = stack["stack_identity"]
    (kid,) = await svc.list_stack_resources(ctx, ident)
    child = kid["nested_stack_id"]
    assert kid["physical_resource_id"] == child["stack_id"]
    assert [s["stack_name"] for s in await svc.list_stacks(ctx)] == ["prov"]
    listed = {s["stack_name"]: s for s in await svc.list_stacks(ctx, show_nested=True)}
    assert listed[child["stack_name"]]["parent"] == stack["id"]
    before = await nested_ids(svc, ctx, ident)
    assert set(before) == {"kid", "t"}

    stack = await update(svc, ctx, ident, provider("two"), files=files)
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    assert outputs(stack) == {"out": "two"}
    # the child stack and its resource are updated in place, not replaced
    assert await nested_ids(svc, ctx, ident) == before
    evs = await svc.list_events(ctx, ident, nested_depth=1, sort_dir="asc")
    order = [(e["resource_name"], e["resource_status"]) for e in evs]
    chain = [("kid", "UPDATE_IN_PROGRESS"), (child["stack_name"], "UPDATE_IN_PROGRESS"),
             ("t", "UPDATE_COMPLETE"), (child["stack_name"], "UPDATE_COMPLETE"),
             ("kid", "UPDATE_COMPLETE"), ("prov", "UPDATE_COMPLETE")]
    assert [order.index(step) for step in chain] == sorted(order.index(s) for s in chain)

    stack = await act(svc, ctx, ident, "delete_stack")
    assert stack["stack_status"] == "DELETE_COMPLETE"
    assert await svc.list_stacks(ctx, show_nested=True) == []


def group(count: int, value: str) -> dict[str, Any]:
    return hot({"grp": {"type": "OS::Heat::ResourceGroup", "properties": {
        "count": count, "resource_def": {"type": "OS::Heat::Value",
                                         "properties": {"value": value}}}}},
        outputs={"vals": {"value": {"get_attr": ["grp", "value"]}},
                 "rmap": {"value": {"get_attr": ["grp", "refs_map"]}}})


async def test_resource_group_create_update_delete(svc: EngineService,
                                                   ctx: RequestContext) -> None:
    stack = await create(svc, ctx, "grp", group(2, "v%index%"))
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    ident = stack["stack_identity"]
    before = outputs(stack)
    assert before["vals"] == ["v0", "v1"]
    assert list(before["rmap"]) == ["0", "1"]
    members = await svc.list_stack_resources(ctx, ident, nested_depth=1)
    assert sorted((r["resource_name"], r["resource_status"]) for r in members) == [
        ("0", "CREATE_COMPLETE"), ("1", "CREATE_COMPLETE"), ("grp", "CREATE_COMPLETE")]

    stack = await update(svc, ctx, ident, group(3, "w%index%"))
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    after = outputs(stack)
    assert after["vals"] == ["w0", "w1", "w2"]
    # existing members are updated in place (same references), one is added
    assert after["rmap"] == {**before["rmap"], "2": after["rmap"]["2"]}

    stack = await update(svc, ctx, ident, group(1, "w%index%"))
    assert outputs(stack) == {"vals": ["w0"], "rmap": {"0": before["rmap"]["0"]}}

    stack = await act(svc, ctx, ident, "delete_stack")
    assert stack["stack_status"] == "DELETE_COMPLETE"
    assert await svc.list_stacks(ctx, show_nested=True) == []


CHAIN = hot({"a": {"type": "OS::Heat::None"},
             "b": {"type": "OS::Heat::None", "depends_on": ["a"]},
             "c": {"type": "OS::Heat::Value", "properties": {"value": {"get_resource": "b"}}}})


async def test_event_list_filters_and_pagination(svc: EngineService,
                                                 ctx: RequestContext) -> None:
    stack = await create(svc, ctx, "evs", CHAIN)
    ident = stack["stack_identity"]
    oldest_first = await svc.list_events(ctx, ident, sort_dir="asc")
    names = [(e["resource_name"], e["resource_status"]) for e in oldest_first]
    assert names == [("evs", "CREATE_IN_PROGRESS"),
                     ("a", "CREATE_IN_PROGRESS"), ("a", "CREATE_COMPLETE"),
                     ("b", "CREATE_IN_PROGRESS"), ("b", "CREATE_COMPLETE"),
                     ("c", "CREATE_IN_PROGRESS"), ("c", "CREATE_COMPLETE"),
                     ("evs", "CREATE_COMPLETE")]
    ids = [e["id"] for e in oldest_first]
    assert len(set(ids)) == 8
    # Heat lists newest first by default
    assert [e["id"] for e in await svc.list_events(ctx, ident)] == ids[::-1]

    async def listed(**kw: Any) -> list[str]:
        return [e["id"] for e in await svc.list_events(ctx, ident, **kw)]

    assert await listed(filters={"resource_name": "b"}, sort_dir="asc") == ids[3:5]
    assert await listed(filters={"resource_action": "CREATE", "resource_status": "COMPLETE"},
                        sort_dir="asc") == [ids[i] for i in (2, 4, 6, 7)]
    assert await listed(filters={"resource_name": ["a", "c"], "resource_status": "IN_PROGRESS"},
                        sort_dir="asc") == [ids[1], ids[5]]
    assert await listed(filters={"resource_type": "OS::Heat::Value"},
                        sort_dir="asc") == ids[5:7]

    # pages of 3 in either direction cover every event once, in order
    for direction, expected in (("asc", ids), ("desc", ids[::-1])):
        pages: list[list[str]] = []
        marker = None
        while True:
            page = await listed(limit=3, marker=marker, sort_dir=direction)
            if not page:
                break
            pages.append(page)
            marker = page[-1]
        assert [len(p) for p in pages] == [3, 3, 2]
        assert [i for p in pages for i in p] == expected
    # a page by event_time with an explicit key is ascending unless told otherwise
    assert await listed(sort_keys=["event_time"], limit=2, marker=ids[1]) == ids[2:4]

    one = oldest_first[4]
    shown = await svc.show_event(ctx, ident, "b", one["id"])
    assert (shown["resource_name"], shown["resource_status"]) == ("b", "CREATE_COMPLETE")
    assert shown["physical_resource_id"] == \
        (await svc.describe_stack_resource(ctx, ident, "b"))["physical_resource_id"]


async def test_stack_list_filters_sort_and_pagination(svc: EngineService,
                                                      ctx: RequestContext) -> None:
    none = {"n": {"type": "OS::Heat::None"}}
    made = {}
    for name, template, tags in (("alpha", hot(none), "x"), ("beta", hot(none), "x,y"),
                                 ("gamma", hot({"f": tres("f", fail=True)}), "")):
        stack = await create(svc, ctx, name, template, tags=tags)
        made[name] = stack["id"]
    other = RequestContext(project_id="elsewhere", is_admin=False, roles=("member",))
    await create(svc, other, "alpha", hot(none))

    async def names(**kw: Any) -> list[str]:
        return [s["stack_name"] for s in await svc.list_stacks(ctx, **kw)]

    assert await names() == ["gamma", "beta", "alpha"]           # newest first
    assert await names(sort_keys=["stack_name"], sort_dir="asc") == ["alpha", "beta", "gamma"]
    assert await names(sort_keys=["stack_name"], sort_dir="desc") == ["gamma", "beta", "alpha"]
    assert await names(sort_keys=["creation_time"]) == ["alpha", "beta", "gamma"]
    assert await names(filters={"status": "FAILED"}) == ["gamma"]
    assert await names(filters={"name": ["alpha", "gamma"]}, sort_keys=["stack_name"]) == [
        "alpha", "gamma"]
    assert await names(filters={"action": "CREATE", "status": "COMPLETE"},
                       sort_keys=["stack_name"]) == ["alpha", "beta"]
    assert await names(tags=["x"], sort_keys=["stack_name"]) == ["alpha", "beta"]
    assert await names(tags=["x", "y"]) == ["beta"]
    assert await names(tags_any=["y", "z"]) == ["beta"]
    assert await names(not_tags=["x"]) == ["gamma"]
    assert await names(not_tags_any=["y"], sort_keys=["stack_name"]) == ["alpha", "gamma"]
    assert await svc.count_stacks(ctx) == 3
    assert await svc.count_stacks(ctx, filters={"status": "FAILED"}) == 1
    assert await svc.count_stacks(ctx, tags=["x"]) == 2

    assert await names(sort_keys=["stack_name"], limit=2) == ["alpha", "beta"]
    assert await names(sort_keys=["stack_name"], limit=2, marker=made["beta"]) == ["gamma"]
    seen: list[str] = []
    marker = None
    while page := await svc.list_stacks(ctx, limit=1, marker=marker):
        seen.append(page[0]["stack_name"])
        marker = page[0]["id"]
    assert seen == ["gamma", "beta", "alpha"]
    shown = (await svc.list_stacks(ctx, filters={"name": "beta"}))[0]
    assert (shown["id"], shown["stack_status"], shown["tags"]) == (
        made["beta"], "CREATE_COMPLETE", ["x", "y"])


async def test_update_during_create_is_refused_by_every_engine(
        svc: EngineService, second: EngineService, ctx: RequestContext) -> None:
    template = hot({"a": {"type": "OS::Heat::None"},
                    "b": {"type": "OS::Heat::None", "depends_on": ["a"]}})
    ident = await svc.create_stack(ctx, "locked", template, hooked("a", "pre-create"), {}, {})
    await asyncio.wait_for(
        svc.engine.breakpoints.reached(ident["stack_id"], "a", "pre-create"), PROMPT)
    changed = hot({"a": {"type": "OS::Heat::None"}})
    message = "Stack locked already has an action (CREATE) in progress."
    # this engine knows it runs the create; another engine sees the lock in the database
    for engine in (svc, second):
        with pytest.raises(ActionInProgress) as info:
            await engine.update_stack(ctx, ident, changed, {}, {}, {})
        assert str(info.value) == message
    shown = await svc.show_stack(ctx, ident)
    assert shown["stack_status"] == "CREATE_IN_PROGRESS"

    await svc.resource_signal(ctx, ident, "a", {"unset_hook": "pre-create"})
    await svc.wait_for_stack(ident["stack_id"], timeout=PROMPT)
    assert (await svc.show_stack(ctx, ident))["stack_status"] == "CREATE_COMPLETE"
    # the lock is released: the other engine may now run the update
    await second.update_stack(ctx, ident, changed, {}, {}, {})
    await second.wait_for_stack(ident["stack_id"], timeout=PROMPT)
    shown = await svc.show_stack(ctx, ident)
    assert shown["stack_status"] == "UPDATE_COMPLETE", shown["stack_status_reason"]
    assert [r["resource_name"] for r in await svc.list_stack_resources(ctx, ident)] == ["a"]


async def test_names_are_case_sensitive(svc: EngineService, ctx: RequestContext) -> None:
    """Heat 27 tells "alpha" from "Alpha" (observed: both stacks coexist, GET of the
    other spelling is "Stack not found", a name filter in the other case lists nothing)."""
    template = hot({"a": {"type": "OS::Heat::None"}})
    lower = await create(svc, ctx, "alpha", template)
    with pytest.raises(EntityNotFound):
        await svc.identify_stack(ctx, "ALPHA")
    upper = await create(svc, ctx, "Alpha", template)
    assert upper["id"] != lower["id"]
    assert (await svc.identify_stack(ctx, "alpha"))["stack_id"] == lower["id"]
    assert await svc.list_stacks(ctx, filters={"name": "ALPHA"}) == []
    assert await svc.list_events(ctx, lower["stack_identity"],
                                 filters={"resource_name": "A"}) == []
