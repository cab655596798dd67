"""What the engine keeps in memory between actions: the parsed-template cache (bounded,
reused by reads of a stack being created or deleted, dropped with the stack) and the
stacks of finished actions (freed as soon as the action ends)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

from kiln.engine.service import EngineService, RequestContext
from kiln.engine.store.template_cache import TemplateCache
from kiln.template import load_template

from .support import create, hot


def _template(n: int) -> Any:
    """A parsed template of n resources, its body unlike any other's (the cache shares
    one parse between equal bodies)."""
    return load_template(hot({f"r{i}": {"type": "OS::Heat::None"} for i in range(n)},
                             description=uuid.uuid4().hex))


def test_cache_is_bounded_by_the_resources_it_holds() -> None:
    cache = TemplateCache(size=10, max_resources=100)
    small, mid, big = _template(30), _template(60), _template(150)
    cache.put(1, small)
    cache.put(2, mid)
    assert cache.cached(1) is small and cache.cached(2) is mid   # 90 resources
    cache.put(3, _template(20))                                  # 110: oldest goes
    assert 1 not in cache and 2 in cache and 3 in cache
    cache.put(4, big)            # bigger than the bound alone: it stays, the rest go
    assert [k for k in (1, 2, 3, 4) if k in cache] == [4]
    cache.discard(4)
    cache.discard(4)             # twice is harmless
    assert 4 not in cache


def test_cache_keeps_the_most_recently_used() -> None:
    cache = TemplateCache(size=2)
    cache.put(1, _template(1))
    cache.put(2, _template(1))
    assert cache.cached(1) is not None      # 1 is now the most recent
    cache.put(3, _template(1))
    assert 1 in cache and 2 not in cache and 3 in cache


async def test_reads_during_and_after_a_create_do_not_parse_the_template_again(
        service: EngineService, ctx: RequestContext,
        monkeypatch: pytest.MonkeyPatch) -> None:
    import kiln.template

    template = hot({f"r{i}": {"type": "OS::Heat::Value", "properties": {"value": i}}
                    for i in range(5)}, description="five values")
    ident = await service.create_stack(ctx, "cached", template, {}, {}, {})
    parsed: list[Any] = []   # parses after the request's own
    real = kiln.template.load_template

    def counted(*args: Any, **kwargs: Any) -> Any:
        parsed.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(kiln.template, "load_template", counted)
    await service.wait_for_stack(ident["stack_id"])
    shown = await service.show_stack(ctx, ident)
    assert (shown["stack_status"], shown["description"]) == ("CREATE_COMPLETE", "five values")
    assert len(await service.list_stack_resources(ctx, ident)) == 5
    await service.delete_stack(ctx, ident)
    await service.wait_for_stack(ident["stack_id"])
    assert parsed == []
    assert (await service.show_stack(ctx, ident))["stack_status"] == "DELETE_COMPLETE"


async def test_a_deleted_stack_leaves_no_template_in_the_cache(
        service: EngineService, ctx: RequestContext) -> None:
    stack = await create(service, ctx, "gone", hot({"a": {"type": "OS::Heat::None"}}))
    ident = stack["stack_identity"]
    engine = service.engine
    rec = await service.core.find(ctx, ident)
    assert rec.raw_template_id in engine.template_cache
    await service.delete_stack(ctx, ident)
    await service.wait_for_stack(ident["stack_id"])
    assert rec.raw_template_id not in engine.template_cache


async def test_load_fetches_the_body_when_the_template_left_the_cache_meanwhile(
        service: EngineService, ctx: RequestContext,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The database read saw the template cached, but it was evicted before the load
    could use it: the body is read after all and the stack loads whole."""
    stack = await create(service, ctx, "evicted", hot({
        "a": {"type": "OS::Heat::Value", "properties": {"value": "x"}},
        "b": {"type": "OS::Heat::Value",
              "properties": {"value": {"get_attr": ["a", "value"]}}}}))
    engine = service.engine
    cache = engine.template_cache
    monkeypatch.setattr(TemplateCache, "cached",
                        lambda self, raw_id: None)   # always gone by the time we look
    live = await engine.load(stack["id"])
    assert sorted(live.slots) == ["a", "b"]
    assert live.template.resource_names == ["a", "b"]
    assert live.slots["b"].requires == frozenset({"a"})
    assert cache is engine.template_cache


@pytest.mark.parametrize("preempt", [False, True])
async def test_a_big_stack_is_freed_as_soon_as_its_action_ends(
        service: EngineService, ctx: RequestContext, preempt: bool) -> None:
    """Once its action is over nothing holds a LiveStack, and it makes no reference
    cycles: reference counting frees it then, with the cycle collector off - also when
    a delete pre-empts the action."""
    import gc
    import weakref

    template = hot({"a": {"type": "OS::Heat::TestResource",
                          "properties": {"action_wait_secs": {"create": 5 if preempt else 0}}},
                    "b": {"type": "OS::Heat::None", "depends_on": ["a"]}})
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        ident = await service.create_stack(ctx, "freed", template, {}, {}, {})
        live = weakref.ref(service.engine.live[ident["stack_id"]])
        if preempt:
            await service.delete_stack(ctx, ident)   # cancels the create
        await service.wait_for_stack(ident["stack_id"])
        for _ in range(3):
            await asyncio.sleep(0)
        assert live() is None
    finally:
        if was_enabled:
            gc.enable()
