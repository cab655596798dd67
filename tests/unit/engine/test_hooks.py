"""Lifecycle hooks and resource signals through EngineService.

Expected events, states and messages are what the live Heat 27 showed for the same
templates: a hooked resource stays INIT_COMPLETE with the event "CREATE paused until Hook
pre-create is cleared", the signal adds "Hook pre-create is cleared", a wrong hook is an
InvalidBreakPointHook naming the resource, a wait-condition handle signal is a
SIGNAL_COMPLETE event "Signal: status:SUCCESS reason:ok". Pauses are awaited through the
engine's breakpoint registry, never by sleeping.
"""

from __future__ import annotations

from typing import Any

import pytest

from kiln.engine.service import EngineService, RequestContext
from kiln.errors import EntityNotFound, InvalidBreakPointHook, ResourceActionNotSupported

from .support import events, hot, resources

TWO = hot({"a": {"type": "OS::Heat::None"},
           "b": {"type": "OS::Heat::None", "depends_on": ["a"]}})


def hooked(resource: str, *hooks: str) -> dict[str, Any]:
    return {"resource_registry": {"resources": {resource: {"hooks": list(hooks)}}}}


async def start(svc: EngineService, ctx: RequestContext, name: str, template: Any,
                env: dict[str, Any]) -> dict[str, Any]:
    return await svc.create_stack(ctx, name, template, env, {}, {})


async def paused(svc: EngineService, ident: dict[str, Any], resource: str,
                 hook: str) -> None:
    await svc.engine.breakpoints.reached(ident["stack_id"], resource, hook)


async def test_pre_create_pauses_until_signal(service: EngineService,
                                              ctx: RequestContext) -> None:
    ident = await start(service, ctx, "hooks", TWO, hooked("a", "pre-create"))
    await paused(service, ident, "a", "pre-create")
    assert await resources(service, ctx, ident) == {"a": "INIT_COMPLETE",
                                                    "b": "INIT_COMPLETE"}
    shown = await service.show_stack(ctx, ident)
    assert shown["stack_status"] == "CREATE_IN_PROGRESS"
    res = await service.describe_stack_resource(ctx, ident, "a")
    assert res["resource_status_reason"] == ""     # the pause is an event, not a state

    with pytest.raises(InvalidBreakPointHook) as exc:
        await service.resource_signal(ctx, ident, "a", {"unset_hook": "pre-update"})
    assert str(exc.value) == ('The "pre-update" hook is not defined on NoneResource "a" '
                              f'Stack "hooks" [{ident["stack_id"]}]')
    with pytest.raises(InvalidBreakPointHook) as exc:
        await service.resource_signal(ctx, ident, "a", {"unset_hook": "pre-bogus"})
    assert str(exc.value).startswith('Invalid hook type "pre-bogus" for NoneResource "a"')

    assert await service.resource_signal(ctx, ident, "a", {"unset_hook": "pre-create"}) \
        is None
    await service.wait_for_stack(ident["stack_id"])
    assert (await service.show_stack(ctx, ident))["stack_status"] == "CREATE_COMPLETE"
    assert (await events(service, ctx, ident))[:4] == [
        ("hooks", "CREATE_IN_PROGRESS", "Stack CREATE started"),
        ("a", "INIT_COMPLETE", "CREATE paused until Hook pre-create is cleared"),
        ("a", "INIT_COMPLETE", "Hook pre-create is cleared"),
        ("a", "CREATE_IN_PROGRESS", "state changed"),
    ]
    # cleared hooks are gone: signalling again is an error
    with pytest.raises(InvalidBreakPointHook):
        await service.resource_signal(ctx, ident, "a", {"unset_hook": "pre-create"})


async def test_post_create_holds_dependants(service: EngineService,
                                            ctx: RequestContext) -> None:
    env = {"resource_registry": {"resources": {"a*": {"hooks": "post-create"}}}}
    ident = await start(service, ctx, "post", TWO, env)
    await paused(service, ident, "a", "post-create")
    assert await resources(service, ctx, ident) == {"a": "CREATE_COMPLETE",
                                                    "b": "INIT_COMPLETE"}
    await service.resource_signal(ctx, ident, "a", {"unset_hook": "post-create"})
    await service.wait_for_stack(ident["stack_id"])
    assert await resources(service, ctx, ident) == {"a": "CREATE_COMPLETE",
                                                    "b": "CREATE_COMPLETE"}
    evs = await events(service, ctx, ident)
    assert ("a", "CREATE_COMPLETE", "CREATE paused until Hook post-create is cleared") in evs
    assert evs.index(("a", "CREATE_COMPLETE", "Hook post-create is cleared")) < \
        evs.index(("b", "CREATE_IN_PROGRESS", "state changed"))


async def test_delete_during_paused_hook(service: EngineService, ctx: RequestContext) -> None:
    ident = await start(service, ctx, "gone", TWO, hooked("b", "pre-create"))
    await paused(service, ident, "b", "pre-create")
    await service.delete_stack(ctx, ident)
    await service.wait_for_stack(ident["stack_id"])
    shown = await service.show_stack(ctx, ident)
    assert shown["stack_status"] == "DELETE_COMPLETE"
    assert await service.list_stacks(ctx) == []


async def test_pre_delete_hook(service: EngineService, ctx: RequestContext) -> None:
    ident = await start(service, ctx, "predel", TWO, hooked("b", "pre-delete"))
    await service.wait_for_stack(ident["stack_id"])
    assert (await service.show_stack(ctx, ident))["stack_status"] == "CREATE_COMPLETE"
    await service.delete_stack(ctx, ident)
    await paused(service, ident, "b", "pre-delete")
    # b (the dependant) is deleted first, so a has not been touched yet
    assert await resources(service, ctx, ident) == {"a": "CREATE_COMPLETE",
                                                    "b": "CREATE_COMPLETE"}
    await service.resource_signal(ctx, ident, "b", {"unset_hook": "pre-delete"})
    await service.wait_for_stack(ident["stack_id"])
    assert (await service.show_stack(ctx, ident))["stack_status"] == "DELETE_COMPLETE"


WAIT = hot({
    "handle": {"type": "OS::Heat::WaitConditionHandle"},
    "wait": {"type": "OS::Heat::WaitCondition",
             "properties": {"handle": {"get_resource": "handle"}, "timeout": 60}},
    "plain": {"type": "OS::Heat::None"},
}, outputs={"data": {"value": {"get_attr": ["wait", "data"]}}})


async def test_signal_reaches_a_waiting_condition(service: EngineService,
                                                  ctx: RequestContext) -> None:
    ident = await start(service, ctx, "wc", WAIT, hooked("handle", "post-create"))
    await paused(service, ident, "handle", "post-create")
    await service.resource_signal(ctx, ident, "handle",
                                  {"status": "SUCCESS", "reason": "ok", "data": "x",
                                   "id": "1"})
    await service.resource_signal(ctx, ident, "handle", {"unset_hook": "post-create"})
    await service.wait_for_stack(ident["stack_id"])
    shown = await service.show_stack(ctx, ident)
    assert shown["stack_status"] == "CREATE_COMPLETE"
    assert shown["outputs"][0]["output_value"] == '{"1": "x"}'
    assert ("handle", "SIGNAL_COMPLETE", "Signal: status:SUCCESS reason:ok") in \
        await events(service, ctx, ident)
    meta = (await service.describe_stack_resource(ctx, ident, "handle"))["metadata"]
    assert meta == {"1": {"data": "x", "reason": "ok", "status": "SUCCESS"}}


async def test_signal_errors(service: EngineService, ctx: RequestContext) -> None:
    ident = await start(service, ctx, "sigerr", TWO, {})
    await service.wait_for_stack(ident["stack_id"])
    with pytest.raises(ResourceActionNotSupported) as exc:
        await service.resource_signal(ctx, ident, "a", {"foo": 1})
    assert str(exc.value) == "signal is not supported for resource."
    with pytest.raises(EntityNotFound) as nf:
        await service.resource_signal(ctx, ident, "zz", {})
    assert nf.value.error_type == "ResourceNotFound"
    assert str(nf.value) == "The Resource (zz) could not be found in Stack sigerr."


async def test_pre_update_hook(service: EngineService, ctx: RequestContext) -> None:
    def values(v: str) -> dict[str, Any]:
        return hot({"a": {"type": "OS::Heat::Value", "properties": {"value": v}},
                    "b": {"type": "OS::Heat::None"}})

    ident = await start(service, ctx, "upd", values("1"), {})
    await service.wait_for_stack(ident["stack_id"])
    await service.update_stack(ctx, ident, values("2"), hooked("a", "pre-update"), {}, {})
    await paused(service, ident, "a", "pre-update")
    assert (await service.show_stack(ctx, ident))["stack_status"] == "UPDATE_IN_PROGRESS"
    assert (await resources(service, ctx, ident))["a"] == "CREATE_COMPLETE"
    await service.resource_signal(ctx, ident, "a", {"unset_hook": "pre-update"})
    await service.wait_for_stack(ident["stack_id"])
    assert (await service.show_stack(ctx, ident))["stack_status"] == "UPDATE_COMPLETE"
    evs = await events(service, ctx, ident)
    assert ("a", "CREATE_COMPLETE", "UPDATE paused until Hook pre-update is cleared") in evs
    assert evs.index(("a", "CREATE_COMPLETE", "Hook pre-update is cleared")) < \
        evs.index(("a", "UPDATE_IN_PROGRESS", "state changed"))
