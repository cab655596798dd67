"""The cloud-free plugins inside the real engine (EngineService on SQLite): what a user
sees for the same template on Heat 27 — attributes, references, waiting and signals."""

from __future__ import annotations

import asyncio
import string
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kiln.conf import CONF
from kiln.engine.service import EngineService, RequestContext


@pytest.fixture
async def service(sqlite_url: str) -> AsyncIterator[EngineService]:
    CONF.set_override("poll_initial_delay", 0.001, group="kiln_engine")
    CONF.set_override("poll_max_delay", 0.05, group="kiln_engine")
    svc = EngineService(db_url=sqlite_url)
    await svc.start()
    yield svc
    await svc.stop()
    CONF.clear_override("poll_initial_delay", group="kiln_engine")
    CONF.clear_override("poll_max_delay", group="kiln_engine")


CTX = RequestContext(project_id="demo")


def outputs(stack: dict[str, Any]) -> dict[str, Any]:
    return {o["output_key"]: o.get("output_value") for o in stack.get("outputs", [])}


async def test_cloud_free_plugins_create(service: EngineService) -> None:
    template = {
        "heat_template_version": "2018-08-31",
        "resources": {
            "rs": {"type": "OS::Heat::RandomString", "properties": {"length": 8}},
            "v": {"type": "OS::Heat::Value",
                  "properties": {"value": {"get_attr": ["rs", "value"]}}},
            "t": {"type": "OS::Heat::TestResource",
                  "properties": {"value": {"get_resource": "rs"}, "wait_secs": 0.2}},
            "n": {"type": "OS::Heat::None", "properties": {"anything": 1}},
            "d": {"type": "OS::Heat::Delay", "properties": {"min_wait": 0.1}},
        },
        "outputs": {
            "rs": {"value": {"get_attr": ["rs", "value"]}},
            "v": {"value": {"get_attr": ["v", "value"]}},
            "t": {"value": {"get_attr": ["t", "output"]}},
            "t_all": {"value": {"get_attr": ["t"]}},
            "n": {"value": {"get_attr": ["n", "whatever"]}},
        },
    }
    ident = await service.create_stack(CTX, "plugins", template, {}, {}, {})
    await service.wait_for_stack(ident["stack_id"])
    stack = await service.show_stack(CTX, ident)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    out = outputs(stack)
    assert len(out["rs"]) == 8 and set(out["rs"]) <= set(string.ascii_letters + string.digits)
    assert out["v"] == out["rs"] == out["t"]
    assert out["t_all"] == {"output": out["rs"]}
    assert out["n"] is None


async def test_wait_condition_completes_on_signals(service: EngineService) -> None:
    template = {
        "heat_template_version": "2018-08-31",
        "resources": {
            "h": {"type": "OS::Heat::WaitConditionHandle"},
            "w": {"type": "OS::Heat::WaitCondition",
                  "properties": {"handle": {"get_resource": "h"}, "timeout": 30,
                                 "count": 2}},
        },
        "outputs": {"data": {"value": {"get_attr": ["w", "data"]}}},
    }
    ident = await service.create_stack(CTX, "waiting", template, {}, {}, {})
    for _ in range(200):                      # wait until the handle exists to take signals
        resources = {r["resource_name"]: r["resource_status"]
                     for r in await service.list_stack_resources(CTX, ident)}
        if resources.get("h") == "CREATE_COMPLETE":
            break
        await asyncio.sleep(0.01)  # status poll, bounded by the loop
    else:
        pytest.fail(f"the handle never completed: {resources}")
    await service.resource_signal(CTX, ident, "h", {"data": "one"})
    await service.resource_signal(CTX, ident, "h", {"data": "two", "id": "b"})
    await service.wait_for_stack(ident["stack_id"], timeout=30)
    stack = await service.show_stack(CTX, ident)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    assert outputs(stack)["data"] == '{"1": "one", "b": "two"}'


async def test_failing_test_resource_reason(service: EngineService) -> None:
    template = {"heat_template_version": "2018-08-31",
                "resources": {"t": {"type": "OS::Heat::TestResource",
                                    "properties": {"fail": True}}}}
    ident = await service.create_stack(CTX, "failing", template, {}, {},
                                       {"disable_rollback": True})
    await service.wait_for_stack(ident["stack_id"])
    stack = await service.show_stack(CTX, ident)
    # Heat 27 observed for the same template
    assert stack["stack_status"] == "CREATE_FAILED"
    assert stack["stack_status_reason"] == (
        "Resource CREATE failed: ValueError: resources.t: Test Resource failed t")


async def test_value_type_validates_but_returns_the_value_as_given(
        service: EngineService) -> None:
    """Heat 27 answered these outputs for the same template: ``type`` checks the value
    and converts nothing (a number given as text stays text, an int typed string stays
    an int)."""
    def value(kind: str, given: Any) -> dict[str, Any]:
        return {"type": "OS::Heat::Value", "properties": {"type": kind, "value": given}}

    given = {"num": value("number", "3.5"), "int": value("number", "3"),
             "lst": value("comma_delimited_list", ["a", 1]),
             "bo": value("boolean", "true"), "st": value("string", 42)}
    template = {"heat_template_version": "2018-08-31", "resources": given,
                "outputs": {k: {"value": {"get_attr": [k, "value"]}} for k in given}}
    ident = await service.create_stack(CTX, "values", template, {}, {}, {})
    await service.wait_for_stack(ident["stack_id"])
    stack = await service.show_stack(CTX, ident)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    assert outputs(stack) == {"num": "3.5", "int": "3", "lst": ["a", 1], "bo": "true",
                              "st": 42}
