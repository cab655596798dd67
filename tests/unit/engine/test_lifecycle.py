"""Suspend, resume, check and mark-unhealthy through EngineService (Heat 27 wording)."""

from __future__ import annotations

import pytest

from kiln.engine.service import EngineService, RequestContext
from kiln.errors import NotSupported

from .support import create, events, hot, resources

STACK = hot({
    "a": {"type": "OS::Heat::TestResource", "properties": {"value": "x"}},
    "b": {"type": "OS::Heat::None", "depends_on": ["a"]},
})


async def run(svc: EngineService, ctx: RequestContext, ident: dict, call: str) -> dict:  # type: ignore[type-arg]
    await getattr(svc, call)(ctx, ident)
    await svc.wait_for_stack(ident["stack_id"])
    return await svc.show_stack(ctx, ident)


async def test_suspend_walks_dependants_first_and_resume_reverses(
        service: EngineService, ctx: RequestContext) -> None:
    stack = await create(service, ctx, "sr", STACK)
    ident = stack["stack_identity"]
    n = len(await events(service, ctx, ident))
    shown = await run(service, ctx, ident, "stack_suspend")
    assert shown["stack_status"] == "SUSPEND_COMPLETE"
    assert shown["stack_status_reason"] == "Stack SUSPEND completed successfully"
    assert [(r, s) for r, s, _ in (await events(service, ctx, ident))[n:]] == [
        ("sr", "SUSPEND_IN_PROGRESS"), ("b", "SUSPEND_IN_PROGRESS"), ("b", "SUSPEND_COMPLETE"),
        ("a", "SUSPEND_IN_PROGRESS"), ("a", "SUSPEND_COMPLETE"), ("sr", "SUSPEND_COMPLETE")]
    n = len(await events(service, ctx, ident))
    shown = await run(service, ctx, ident, "stack_resume")
    assert shown["stack_status"] == "RESUME_COMPLETE"
    assert [(r, s) for r, s, _ in (await events(service, ctx, ident))[n:]] == [
        ("sr", "RESUME_IN_PROGRESS"), ("a", "RESUME_IN_PROGRESS"), ("a", "RESUME_COMPLETE"),
        ("b", "RESUME_IN_PROGRESS"), ("b", "RESUME_COMPLETE"), ("sr", "RESUME_COMPLETE")]


async def test_resume_of_a_stack_never_suspended_fails_with_heats_reason(
        service: EngineService, ctx: RequestContext) -> None:
    stack = await create(service, ctx, "rs", STACK)
    shown = await run(service, ctx, stack["stack_identity"], "stack_resume")
    assert shown["stack_status"] == "RESUME_FAILED"
    assert shown["stack_status_reason"] == (
        "Resource RESUME failed: Error: resources.a: "
        "State ('CREATE', 'COMPLETE') invalid for resume")


async def test_check_reports_plugins_without_check_support(service: EngineService,
                                                           ctx: RequestContext) -> None:
    stack = await create(service, ctx, "chk", STACK)
    ident = stack["stack_identity"]
    shown = await run(service, ctx, ident, "stack_check")
    assert shown["stack_status"] == "CHECK_COMPLETE"
    # Heat 27's words when a resource cannot check itself (seen on the peer)
    assert shown["stack_status_reason"] == (
        "Stack CHECK completed successfully. 'CHECK' not fully supported (see resources)")
    b = await service.describe_stack_resource(ctx, ident, "b")
    assert b["resource_status"] == "CHECK_COMPLETE"
    assert b["resource_status_reason"] == "CHECK not supported for OS::Heat::None"
    assert (await resources(service, ctx, ident))["a"] == "CHECK_COMPLETE"


async def test_check_of_resources_that_all_check_themselves_says_nothing_more(
        service: EngineService, ctx: RequestContext) -> None:
    """A resource backed by a child stack counts as checking itself, as in Heat 27 (its
    child's reason carries the note instead)."""
    group = {"type": "OS::Heat::ResourceGroup",
             "properties": {"count": 1, "resource_def": {"type": "OS::Heat::None"}}}
    stack = await create(service, ctx, "chk2", hot({
        "a": {"type": "OS::Heat::TestResource", "properties": {"value": "x"}}, "g": group}))
    shown = await run(service, ctx, stack["stack_identity"], "stack_check")
    assert (shown["stack_status"], shown["stack_status_reason"]) == (
        "CHECK_COMPLETE", "Stack CHECK completed successfully")


async def test_mark_unhealthy_then_update_replaces_the_resource(service: EngineService,
                                                                ctx: RequestContext) -> None:
    stack = await create(service, ctx, "sick", STACK)
    ident = stack["stack_identity"]
    before = (await service.describe_stack_resource(ctx, ident, "a"))["physical_resource_id"]
    await service.resource_mark_unhealthy(ctx, ident, "a", True, "broken disk")
    res = await service.describe_stack_resource(ctx, ident, "a")
    assert (res["resource_status"], res["resource_status_reason"]) == ("CHECK_FAILED",
                                                                      "broken disk")
    await service.update_stack(ctx, ident, None, {}, {}, {"existing": True})
    await service.wait_for_stack(ident["stack_id"])
    res = await service.describe_stack_resource(ctx, ident, "a")
    assert res["resource_status"] == "CREATE_COMPLETE"
    assert res["physical_resource_id"] != before
    # marking healthy a resource that is not CHECK_FAILED changes nothing
    await service.resource_mark_unhealthy(ctx, ident, "b", False)
    assert (await resources(service, ctx, ident))["b"] == "CREATE_COMPLETE"


async def test_a_suspended_stack_cannot_be_updated(service: EngineService,
                                                   ctx: RequestContext) -> None:
    stack = await create(service, ctx, "frozen", STACK)
    await run(service, ctx, stack["stack_identity"], "stack_suspend")
    with pytest.raises(NotSupported) as info:
        await service.update_stack(ctx, stack["stack_identity"], STACK, {}, {}, {})
    assert info.value.message == "Updating a stack when it is suspended is not supported."
