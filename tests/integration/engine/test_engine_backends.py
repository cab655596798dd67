"""The engine's core flows on every supported database (SQLite, PostgreSQL, MariaDB):
create in dependency order, update in place and by replacement, rollback, nested
stacks, delete. Servers that are absent are skipped (or fail under KILN_REQUIRE_SERVICES)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from kiln.conf import CONF
from kiln.engine.service import EngineService, RequestContext


@pytest.fixture
def fast_polling() -> Iterator[None]:
    CONF.set_override("poll_initial_delay", 0.001, group="kiln_engine")
    CONF.set_override("poll_max_delay", 0.05, group="kiln_engine")
    yield
    CONF.clear_override("poll_initial_delay", group="kiln_engine")
    CONF.clear_override("poll_max_delay", group="kiln_engine")


@pytest.fixture
async def service(db_url: str, fast_polling: None) -> AsyncIterator[EngineService]:
    svc = EngineService(db_url=db_url)
    await svc.start()
    yield svc
    await svc.stop()


CTX = RequestContext(project_id="backend", is_admin=False, roles=("member",))


def tres(value: str, **props: Any) -> dict[str, Any]:
    return {"type": "OS::Heat::TestResource", "properties": {"value": value, **props}}


def hot(resources: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"heat_template_version": "2018-08-31", "resources": resources, **extra}


async def run_update(svc: EngineService, ident: Any, template: Any, **args: Any,
                     ) -> dict[str, Any]:
    await svc.update_stack(CTX, ident, template, {}, {}, args)
    await svc.wait_for_stack(ident["stack_id"])
    return await svc.show_stack(CTX, ident)


async def test_full_lifecycle(service: EngineService) -> None:
    v1 = hot({"a": tres("one"), "b": tres("one", update_replace=True),
              "c": {"type": "OS::Heat::Value",
                    "properties": {"value": {"get_attr": ["b", "output"]}}},
              "grp": {"type": "OS::Heat::ResourceGroup", "properties": {
                  "count": 3, "resource_def": {"type": "OS::Heat::RandomString"}}}},
             outputs={"c": {"value": {"get_attr": ["c", "value"]}},
                      "n": {"value": {"get_attr": ["grp", "refs"]}}})
    ident = await service.create_stack(CTX, "life", v1, {}, {}, {})
    await service.wait_for_stack(ident["stack_id"])
    shown = await service.show_stack(CTX, ident)
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    outs = {o["output_key"]: o["output_value"] for o in shown["outputs"]}
    assert outs["c"] == "one" and len(outs["n"]) == 3
    evs = [(e["resource_name"], e["resource_status"])
           for e in await service.list_events(CTX, ident, sort_dir="asc")]
    assert evs.index(("b", "CREATE_COMPLETE")) < evs.index(("c", "CREATE_IN_PROGRESS"))
    ids = {r["resource_name"]: r["physical_resource_id"]
           for r in await service.list_stack_resources(CTX, ident)}

    v2 = json.loads(json.dumps(v1))
    v2["resources"]["a"]["properties"]["value"] = "two"
    v2["resources"]["b"]["properties"]["value"] = "two"
    shown = await run_update(service, ident, v2)
    assert shown["stack_status"] == "UPDATE_COMPLETE", shown["stack_status_reason"]
    after = {r["resource_name"]: r["physical_resource_id"]
             for r in await service.list_stack_resources(CTX, ident)}
    assert after["a"] == ids["a"] and after["b"] != ids["b"]
    assert {o["output_key"]: o["output_value"] for o in shown["outputs"]}["c"] == "two"

    v3 = json.loads(json.dumps(v2))
    v3["resources"]["b"]["properties"].update(value="three", fail=True)
    shown = await run_update(service, ident, v3, disable_rollback=False)
    assert shown["stack_status"] == "ROLLBACK_COMPLETE", shown["stack_status_reason"]
    assert {r["resource_name"]: r["physical_resource_id"]
            for r in await service.list_stack_resources(CTX, ident)}["b"] == after["b"]

    await service.delete_stack(CTX, ident)
    await service.wait_for_stack(ident["stack_id"])
    assert (await service.show_stack(CTX, ident))["stack_status"] == "DELETE_COMPLETE"
    assert await service.list_stacks(CTX, show_nested=True) == []


async def test_failed_create_rolls_back(service: EngineService) -> None:
    template = hot({"a": {"type": "OS::Heat::None"},
                    "f": {"type": "OS::Heat::TestResource", "properties": {"fail": True},
                          "depends_on": ["a"]}})
    ident = await service.create_stack(CTX, "rb", template, {}, {},
                                       {"disable_rollback": False})
    await service.wait_for_stack(ident["stack_id"])
    shown = await service.show_stack(CTX, ident)
    assert shown["stack_status"] == "ROLLBACK_COMPLETE"
    assert await service.list_stack_resources(CTX, ident) == []
