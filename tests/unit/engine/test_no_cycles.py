"""Kiln's own objects make no reference cycles: a stack loaded for an action or a read,
and a parsed template, are freed by reference counting as soon as the last reference
goes, with the cycle collector off (issue 23; the engine no longer runs collections and
the template layer no longer switches the collector)."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from kiln.engine.service import EngineService, RequestContext
from kiln.template import load_template
from kiln.template.definitions import StackIdentity

from .support import create, hot

#: a template using what builds back-references: plugins with their runtime and
#: stored properties, get_attr between resources, outputs, conditions, a group of
#: nested stacks
_TEMPLATE = hot(
    {"r0": {"type": "OS::Heat::RandomString"},
     "r1": {"type": "OS::Heat::RandomString", "condition": "on"},
     "v": {"type": "OS::Heat::Value",
           "properties": {"value": {"get_attr": ["r0", "value"]}}},
     "g": {"type": "OS::Heat::ResourceGroup",
           "properties": {"count": 2,
                          "resource_def": {"type": "OS::Heat::Value",
                                           "properties": {"value": "x"}}}},
     "n": {"type": "OS::Heat::None", "depends_on": ["v"]}},
    outputs={"o": {"value": {"get_attr": ["v", "value"]}},
             "all": {"value": {"get_attr": ["r0"]}}},
    conditions={"on": {"equals": [1, 1]}})


@pytest.fixture
def no_collector() -> Iterator[list[Any]]:
    """The cycle collector off; yields the list that the objects found only in cycles
    (gc.DEBUG_SAVEALL) end up in once the test collects."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield gc.garbage
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()


def _kiln_objects(objects: list[Any]) -> Counter[str]:
    return Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in objects
                   if type(o).__module__.startswith("kiln."))


def test_a_parsed_and_bound_template_is_freed_without_the_collector(
        no_collector: list[Any]) -> None:
    template = load_template(_TEMPLATE)
    bound = template.bind(environment=None, user_params={}, resolver=None,
                          identity=StackIdentity(stack_name="s", stack_id="i",
                                                 project_id="p"))
    bound.validate()
    assert bound.conditions == {"on": True}
    assert sorted(bound.resource_definitions()) == ["g", "n", "r0", "r1", "v"]
    refs = [weakref.ref(template), weakref.ref(bound)]
    del template, bound
    assert [r() for r in refs] == [None, None]
    gc.collect()
    assert _kiln_objects(no_collector) == Counter()


async def test_stacks_leave_nothing_for_the_collector(
        service: EngineService, ctx: RequestContext, no_collector: list[Any]) -> None:
    """Create, show, update and delete stacks (each loads LiveStacks, binds templates,
    makes plugins): none of Kiln's objects is left in a cycle for gc.collect()."""
    for i in range(2):
        stack = await create(service, ctx, f"s{i}", _TEMPLATE)
        assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
        ident = stack["stack_identity"]
        assert {o["output_key"] for o in stack["outputs"]} == {"o", "all"}
        assert len(await service.list_stack_resources(ctx, ident)) == 5
        live = weakref.ref(await service.engine.load(stack["id"]))
        assert live() is None                     # nothing but the caller held it
        await service.delete_stack(ctx, ident)
        await service.wait_for_stack(stack["id"])
    for _ in range(3):
        await asyncio.sleep(0)
    gc.collect()
    assert _kiln_objects(no_collector) == Counter()


async def test_a_failed_create_leaves_nothing_for_the_collector(
        service: EngineService, ctx: RequestContext, no_collector: list[Any]) -> None:
    """A resource's failure is kept as data (its exception) until the action's outcome
    is reported: not with the traceback, whose frames would point back at the walk."""
    template = hot({"ok": {"type": "OS::Heat::None"},
                    "bad": {"type": "OS::Heat::TestResource",
                            "properties": {"fail": True}, "depends_on": ["ok"]}})
    stack = await create(service, ctx, "failing", template)
    assert stack["stack_status"] == "CREATE_FAILED"
    await service.delete_stack(ctx, stack["stack_identity"])
    await service.wait_for_stack(stack["id"])
    for _ in range(3):
        await asyncio.sleep(0)
    gc.collect()
    assert _kiln_objects(no_collector) == Counter()
