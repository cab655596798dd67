"""Stack update through EngineService; expected events are those the live Heat 27 peer
produced for the same templates (convergence engine)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kiln.engine.service import EngineService, RequestContext
from kiln.errors import ActionInProgress, NotSupported, UnknownUserParameter
from kiln.resources.heat.test_resource import TestResource
from kiln.resources.registry import global_registry

from .support import create, events, hot, resources


def tres(value: str, **props: Any) -> dict[str, Any]:
    return {"type": "OS::Heat::TestResource", "properties": {"value": value, **props}}


V1 = hot({"a": tres("one"), "b": tres("one", update_replace=True),
          "c": {"type": "OS::Heat::Value", "properties": {"value": {"get_attr": ["b", "output"]}}},
          "gone": {"type": "OS::Heat::None"}},
         outputs={"c": {"value": {"get_attr": ["c", "value"]}}})
V2 = hot({"a": tres("two"), "b": tres("two", update_replace=True),
          "c": {"type": "OS::Heat::Value", "properties": {"value": {"get_attr": ["b", "output"]}}},
          "new": {"type": "OS::Heat::None"}},
         outputs={"c": {"value": {"get_attr": ["c", "value"]}}})


async def update(svc: EngineService, ctx: RequestContext, ident: Any, template: Any,
                 **args: Any) -> dict[str, Any]:
    await svc.update_stack(ctx, ident, template, args.pop("params", {}), {}, args)
    await svc.wait_for_stack(ident["stack_id"])
    return await svc.show_stack(ctx, ident)


async def physical_ids(svc: EngineService, ctx: RequestContext, ident: Any) -> dict[str, str]:
    return {r["resource_name"]: r["physical_resource_id"]
            for r in await svc.list_stack_resources(ctx, ident)}


async def test_update_in_place_replace_add_and_remove(service: EngineService,
                                                      ctx: RequestContext) -> None:
    stack = await create(service, ctx, "upd", V1)
    ident = stack["stack_identity"]
    before = await physical_ids(service, ctx, ident)
    n_create_events = len(await events(service, ctx, ident))

    preview = await service.preview_update_stack(ctx, ident, V2, {}, {}, {})
    assert {k: sorted(r["resource_name"] for r in v)
            for k, v in preview["resource_changes"].items()} == {
        "added": ["new"], "deleted": ["gone"], "replaced": ["b"], "updated": ["a"],
        "unchanged": ["c"]}

    stack = await update(service, ctx, ident, V2)
    assert stack["stack_status"] == "UPDATE_COMPLETE"
    assert stack["stack_status_reason"] == "Stack UPDATE completed successfully"
    assert stack["updated_time"] is not None
    assert stack["outputs"][0]["output_value"] == "two"
    after = await physical_ids(service, ctx, ident)
    assert after["a"] == before["a"]            # updated in place
    assert after["b"] != before["b"]            # replaced
    assert after["c"] == before["c"]
    assert set(after) == {"a", "b", "c", "new"}
    evs = (await events(service, ctx, ident))[n_create_events:]
    assert evs[0] == ("upd", "UPDATE_IN_PROGRESS", "Stack UPDATE started")
    assert evs[-1] == ("upd", "UPDATE_COMPLETE", "Stack UPDATE completed successfully")
    by_res: dict[str, list[str]] = {}
    for name, status, _ in evs[1:-1]:
        by_res.setdefault(name, []).append(status)
    assert by_res["a"] == ["UPDATE_IN_PROGRESS", "UPDATE_COMPLETE"]
    assert by_res["b"] == ["UPDATE_IN_PROGRESS", "UPDATE_COMPLETE", "CREATE_IN_PROGRESS",
                           "CREATE_COMPLETE", "DELETE_IN_PROGRESS", "DELETE_COMPLETE"]
    assert by_res["c"] == ["UPDATE_IN_PROGRESS", "UPDATE_COMPLETE"]
    assert by_res["gone"] == ["DELETE_IN_PROGRESS", "DELETE_COMPLETE"]
    assert by_res["new"] == ["CREATE_IN_PROGRESS", "CREATE_COMPLETE"]
    replace_reason = next(r for n, s, r in evs if n == "b" and s == "UPDATE_COMPLETE")
    assert replace_reason == (f'The Resource TestResource "b" [{before["b"]}] Stack "upd" '
                              f'[{stack["id"]}] requires replacement.')
    # the old b is deleted only after c (which needs b) was updated
    names = [(n, s) for n, s, _ in evs]
    assert names.index(("c", "UPDATE_COMPLETE")) < names.index(("b", "DELETE_IN_PROGRESS"))


async def test_patch_with_nothing_changed_is_a_fast_noop(service: EngineService,
                                                         ctx: RequestContext) -> None:
    template = hot({"r": {"type": "OS::Heat::RandomString",
                          "properties": {"length": {"get_param": "n"}}}},
                   parameters={"n": {"type": "number", "default": 8}})
    stack = await create(service, ctx, "patchy", template, params={"parameters": {"n": 12}})
    ident = stack["stack_identity"]
    before = await physical_ids(service, ctx, ident)
    n_events = len(await events(service, ctx, ident))
    stack = await update(service, ctx, ident, None, existing=True)
    assert stack["stack_status"] == "UPDATE_COMPLETE"
    assert stack["parameters"]["n"] == "12"     # PATCH keeps the stored parameters
    assert await physical_ids(service, ctx, ident) == before
    assert [s for _, s, _ in (await events(service, ctx, ident))[n_events:]] == [
        "UPDATE_IN_PROGRESS", "UPDATE_COMPLETE"]
    # a PATCH with a new parameter value replaces the resource (length not updatable)
    stack = await update(service, ctx, ident, None, existing=True,
                         params={"parameters": {"n": 5}})
    assert stack["parameters"]["n"] == "5"
    res = await service.describe_stack_resource(ctx, ident, "r")
    assert len(res["attributes"]["value"]) == 5
    assert res["physical_resource_id"] != before["r"]
    # PUT without parameters goes back to the template default
    stack = await update(service, ctx, ident, template)
    assert stack["parameters"]["n"] == "8"


async def test_patch_drops_parameters_the_template_does_not_declare(
        service: EngineService, ctx: RequestContext) -> None:
    """Heat 27 (peer): PATCH with an undeclared parameter is accepted and the parameter
    dropped, from the request and from the stored environment alike; PUT refuses it."""
    template = hot({"r": {"type": "OS::Heat::Value", "properties": {"value": 1}}},
                   parameters={"p": {"type": "string", "default": "a"}})
    stack = await create(service, ctx, "patch-unknown", template)
    ident = stack["stack_identity"]
    stack = await update(service, ctx, ident, None, existing=True,
                         params={"parameters": {"zz": 1, "p": "b"}})
    assert stack["stack_status"] == "UPDATE_COMPLETE"
    assert (await service.get_environment(ctx, ident))["parameters"] == {"p": "b"}
    with pytest.raises(UnknownUserParameter):
        await service.update_stack(ctx, ident, template, {"parameters": {"zz": 1}}, {}, {})


FAILING_REPLACE = hot({"a": tres("one"),
                       "b": tres("two", update_replace=True, fail=True)})
START = hot({"a": tres("one"), "b": tres("one", update_replace=True)})


async def test_failed_replacement_rolls_back_to_the_old_resource(
        service: EngineService, ctx: RequestContext) -> None:
    stack = await create(service, ctx, "rb", START, disable_rollback=False)
    ident = stack["stack_identity"]
    before = await physical_ids(service, ctx, ident)
    n_events = len(await events(service, ctx, ident))
    stack = await update(service, ctx, ident, FAILING_REPLACE, disable_rollback=False)
    assert stack["stack_status"] == "ROLLBACK_COMPLETE"
    assert stack["stack_status_reason"] == "Stack ROLLBACK completed successfully"
    reason = "ValueError: resources.b: Test Resource failed b"
    evs = [(n, s, r) for n, s, r in (await events(service, ctx, ident))[n_events:]]
    assert [(n, s) for n, s, _ in evs] == [
        ("rb", "UPDATE_IN_PROGRESS"), ("b", "UPDATE_IN_PROGRESS"), ("b", "UPDATE_COMPLETE"),
        ("b", "CREATE_IN_PROGRESS"), ("b", "CREATE_FAILED"), ("rb", "UPDATE_FAILED"),
        ("rb", "ROLLBACK_IN_PROGRESS"), ("b", "DELETE_IN_PROGRESS"),
        ("b", "DELETE_COMPLETE"), ("rb", "ROLLBACK_COMPLETE")]
    assert evs[4][2] == reason
    assert evs[5][2] == f"Resource CREATE failed: {reason}"
    # the resource the failed replacement would have superseded is back
    assert await physical_ids(service, ctx, ident) == before
    assert (await service.get_template(ctx, ident)) == START


async def test_a_new_type_replaces_without_updating_the_old_resource(
        service: EngineService, ctx: RequestContext) -> None:
    """Heat 27 (peer): a resource whose type changes is replaced without an UPDATE of the
    old one, so when the new one fails and the update rolls back, the old resource is
    back as it was: CREATE_COMPLETE, "state changed"."""
    old = hot({"r": {"type": "OS::Heat::Value", "properties": {"value": 1}}})
    stack = await create(service, ctx, "newtype", old)
    ident = stack["stack_identity"]
    n_events = len(await events(service, ctx, ident))
    stack = await update(service, ctx, ident, hot({"r": tres("x", fail=True)}),
                         disable_rollback=False)
    assert stack["stack_status"] == "ROLLBACK_COMPLETE"
    assert [(n, s) for n, s, _ in (await events(service, ctx, ident))[n_events:]] == [
        ("newtype", "UPDATE_IN_PROGRESS"), ("r", "CREATE_IN_PROGRESS"),
        ("r", "CREATE_FAILED"), ("newtype", "UPDATE_FAILED"),
        ("newtype", "ROLLBACK_IN_PROGRESS"), ("r", "DELETE_IN_PROGRESS"),
        ("r", "DELETE_COMPLETE"), ("newtype", "ROLLBACK_COMPLETE")]
    shown = await service.describe_stack_resource(ctx, ident, "r")
    assert (shown["resource_status"], shown["resource_status_reason"]) == (
        "CREATE_COMPLETE", "state changed")


async def test_a_delay_whose_properties_change_is_replaced(
        service: EngineService, ctx: RequestContext) -> None:
    """Heat 27's Delay has no update of its own: a changed property replaces it (after an
    UPDATE ending "The Resource r requires replacement."); restating a default value
    changes nothing but the definition and updates in place (seen on the peer)."""
    def delay(**props: Any) -> dict[str, Any]:
        return hot({"r": {"type": "OS::Heat::Delay", "properties": {"min_wait": 0, **props}}})

    stack = await create(service, ctx, "delay", delay())
    ident = stack["stack_identity"]
    n_events = len(await events(service, ctx, ident))
    preview = await service.preview_update_stack(ctx, ident, delay(jitter_multiplier=0.5),
                                                 {}, {}, {})
    assert [r["resource_name"] for r in preview["resource_changes"]["updated"]] == ["r"]
    stack = await update(service, ctx, ident, delay(jitter_multiplier=0.5))
    assert stack["stack_status"] == "UPDATE_COMPLETE"
    evs = (await events(service, ctx, ident))[n_events:]
    assert [(n, s, r) for n, s, r in evs if n == "r"][:2] == [
        ("r", "UPDATE_IN_PROGRESS", "state changed"),
        ("r", "UPDATE_COMPLETE", "The Resource r requires replacement.")]
    assert [(n, s) for n, s, _ in evs if n == "r"][2:] == [
        ("r", "CREATE_IN_PROGRESS"), ("r", "CREATE_COMPLETE"),
        ("r", "DELETE_IN_PROGRESS"), ("r", "DELETE_COMPLETE")]
    stack = await update(service, ctx, ident, delay(jitter_multiplier=0.5, max_jitter=0))
    assert (await resources(service, ctx, ident))["r"] == "UPDATE_COMPLETE"


async def test_failed_update_without_rollback_stays_failed(service: EngineService,
                                                           ctx: RequestContext) -> None:
    stack = await create(service, ctx, "norb", START)
    ident = stack["stack_identity"]
    stack = await update(service, ctx, ident, hot({"a": tres("two", fail=True),
                                                   "b": tres("one", update_replace=True)}))
    assert stack["stack_status"] == "UPDATE_FAILED"
    assert stack["stack_status_reason"] == (
        "Resource UPDATE failed: ValueError: resources.a: Test Resource failed a")
    assert (await resources(service, ctx, ident))["a"] == "UPDATE_FAILED"
    # the next update replaces the failed resource, as Heat does
    before = await physical_ids(service, ctx, ident)
    stack = await update(service, ctx, ident, START)
    assert stack["stack_status"] == "UPDATE_COMPLETE"
    assert (await physical_ids(service, ctx, ident))["a"] != before["a"]


async def test_update_while_creating_is_refused_and_cancel_needs_an_update(
        service: EngineService, ctx: RequestContext) -> None:
    slow = hot({"s": tres("x", wait_secs=30)})
    ident = await service.create_stack(ctx, "busy", slow, {}, {}, {})
    with pytest.raises(ActionInProgress) as info:
        await service.update_stack(ctx, ident, START, {}, {}, {})
    assert info.value.message == "Stack busy already has an action (CREATE) in progress."
    with pytest.raises(NotSupported, match="Cancelling update when stack is CREATE_IN_PROGRESS"):
        await service.stack_cancel_update(ctx, ident, cancel_with_rollback=True)
    # cancel without rollback may stop a create
    await service.stack_cancel_update(ctx, ident, cancel_with_rollback=False)
    await service.wait_for_stack(ident["stack_id"])
    shown = await service.show_stack(ctx, ident)
    assert shown["stack_status"] == "CREATE_FAILED"
    assert shown["stack_status_reason"] == "Stack CREATE cancelled"


async def test_cancel_update_with_rollback_restores_the_previous_template(
        service: EngineService, ctx: RequestContext) -> None:
    stack = await create(service, ctx, "cancelme", START)
    ident = stack["stack_identity"]
    slow = hot({"a": tres("one"), "b": tres("one", update_replace=True),
                "s": tres("x", action_wait_secs={"create": 30})})
    await service.update_stack(ctx, ident, slow, {}, {}, {})
    for _ in range(3000):  # observe the slow resource start (30 s at most)
        if (await resources(service, ctx, ident)).get("s") == "CREATE_IN_PROGRESS":
            break
        await asyncio.sleep(0.01)
    else:
        pytest.fail("the slow resource never reached CREATE_IN_PROGRESS")
    await service.stack_cancel_update(ctx, ident, cancel_with_rollback=True)
    await service.wait_for_stack(ident["stack_id"])
    shown = await service.show_stack(ctx, ident)
    assert shown["stack_status"] == "ROLLBACK_COMPLETE"
    assert set(await resources(service, ctx, ident)) == {"a", "b"}
    evs = await events(service, ctx, ident)
    assert ("s", "CREATE_FAILED", "CREATE aborted (Operation cancelled)") in evs
    assert ("cancelme", "UPDATE_FAILED", "Stack UPDATE cancelled") in evs


async def test_an_unchanged_resource_with_a_partial_nested_map_is_left_alone(
        service: EngineService, ctx: RequestContext) -> None:
    # action_wait_secs gives only "create": the other keys are unset. The stored values,
    # read back for the update, must compare equal to the template's, or every such
    # resource would be updated by an update that changes nothing (Heat: no events)
    template = hot({"t": tres("same", action_wait_secs={"create": 0}),
                    "u": tres("same", action_wait_secs={})})
    stack = await create(service, ctx, "partial_map", template)
    ident = stack["stack_identity"]
    n_events = len(await events(service, ctx, ident))
    stack = await update(service, ctx, ident, template)
    assert stack["stack_status"] == "UPDATE_COMPLETE"
    assert [(n, s) for n, s, _ in (await events(service, ctx, ident))[n_events:]] == [
        ("partial_map", "UPDATE_IN_PROGRESS"), ("partial_map", "UPDATE_COMPLETE")]


async def test_a_replaced_resource_is_deleted_with_its_own_properties(
        service: EngineService, ctx: RequestContext) -> None:
    """The superseded resource waits only for its delete, with the properties it was
    made with (here: no wait), not the replacement's (a wait that would outlast the
    test)."""
    old = hot({"b": tres("one", update_replace=True, action_wait_secs={"delete": 0})})
    new = hot({"b": tres("two", update_replace=True, action_wait_secs={"delete": 600})})
    stack = await create(service, ctx, "own", old)
    ident = stack["stack_identity"]
    before = await physical_ids(service, ctx, ident)
    stack = await asyncio.wait_for(update(service, ctx, ident, new), 30)
    assert stack["stack_status"] == "UPDATE_COMPLETE"
    assert (await physical_ids(service, ctx, ident))["b"] != before["b"]


class _OneAtATime(TestResource):
    """A physical resource whose old and new versions cannot coexist."""

    type_name = "Kiln::Test::OneAtATime"
    replace_create_first = False


@pytest.mark.parametrize("create_first", [True, False])
async def test_replace_create_first_sets_the_replacement_order(
        service: EngineService, ctx: RequestContext, create_first: bool) -> None:
    """The documented plugin option decides whether the old resource is deleted before
    its replacement is created (False) or after (True, Heat's default)."""
    cls = TestResource if create_first else _OneAtATime
    registry = global_registry()
    registry.register(_OneAtATime.type_name, _OneAtATime)
    try:
        def tmpl(value: str) -> dict[str, Any]:
            return hot({"r": {"type": cls.type_name,
                              "properties": {"value": value, "update_replace": True}}})

        stack = await create(service, ctx, "order", tmpl("one"))
        ident = stack["stack_identity"]
        done = await update(service, ctx, ident, tmpl("two"))
        assert done["stack_status"] == "UPDATE_COMPLETE", done["stack_status_reason"]
        evs = await service.list_events(ctx, ident, sort_dir="asc")
    finally:
        registry._types.pop(_OneAtATime.type_name, None)
    # the first create, then the replacement's create and the old one's delete
    order = [e["resource_status"] for e in evs if e["resource_name"] == "r"
             and e["resource_status"] in ("CREATE_IN_PROGRESS", "DELETE_IN_PROGRESS")][1:]
    assert order == (["CREATE_IN_PROGRESS", "DELETE_IN_PROGRESS"] if create_first
                     else ["DELETE_IN_PROGRESS", "CREATE_IN_PROGRESS"])


async def test_an_update_wait_condition_handle_is_replaced_without_an_update_event(
        service: EngineService, ctx: RequestContext) -> None:
    """Heat 27's UpdateWaitConditionHandle raises UpdateReplace from _needs_update, before
    the update's action recorder: the old handle records no UPDATE_IN_PROGRESS or
    UPDATE_COMPLETE, only the new handle's create and the old one's delete."""
    template = hot({"h": {"type": "OS::Heat::UpdateWaitConditionHandle"}})
    stack = await create(service, ctx, "uwch", template)
    ident = stack["stack_identity"]
    n_events = len(await events(service, ctx, ident))
    stack = await update(service, ctx, ident, template)
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    assert [(n, s) for n, s, _ in (await events(service, ctx, ident))[n_events:]] == [
        ("uwch", "UPDATE_IN_PROGRESS"), ("h", "CREATE_IN_PROGRESS"),
        ("h", "CREATE_COMPLETE"), ("h", "DELETE_IN_PROGRESS"), ("h", "DELETE_COMPLETE"),
        ("uwch", "UPDATE_COMPLETE")]


async def test_replacing_every_resource_writes_per_turn_not_per_resource(
        service: EngineService, ctx: RequestContext) -> None:
    """A replace-all update's writer jobs: the replacement rows, the removals of the old
    rows and each replaced resource's two UPDATE transitions are written per event-loop
    turn, not one job per resource (each job is a hand-off to the writer thread and
    mostly a commit of its own). Heat's events are all still there, in order."""
    n = 60

    def strings(salt: str) -> dict[str, Any]:
        return hot({f"r{i}": {"type": "OS::Heat::RandomString", "properties": {"salt": salt}}
                    for i in range(n)})

    stack = await create(service, ctx, "many", strings("one"))
    ident = stack["stack_identity"]
    before = await physical_ids(service, ctx, ident)
    n_create_events = len(await events(service, ctx, ident))
    writes = service.store.database.writes
    stack = await update(service, ctx, ident, strings("two"))
    assert stack["stack_status"] == "UPDATE_COMPLETE"
    # one job per resource for the rows alone was 2n; per turn it is a handful
    assert service.store.database.writes - writes < n
    after = await physical_ids(service, ctx, ident)
    assert set(after) == set(before) and not set(after.values()) & set(before.values())
    by_res: dict[str, list[str]] = {}
    for name, status, _ in (await events(service, ctx, ident))[n_create_events + 1:-1]:
        by_res.setdefault(name, []).append(status)
    assert by_res == {f"r{i}": ["UPDATE_IN_PROGRESS", "UPDATE_COMPLETE",
                                "CREATE_IN_PROGRESS", "CREATE_COMPLETE",
                                "DELETE_IN_PROGRESS", "DELETE_COMPLETE"] for i in range(n)}
