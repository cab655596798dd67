"""The software-config and deployment plugins against the engine's real service, through
the adapters in kiln.resources.stores (the engine's SQLite tables, no fakes)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from kiln.engine.service import EngineService, RequestContext
from kiln.resources.stores import ServiceConfigStore, ServiceDeploymentStore
from tests.unit.resources.fakes import FakeRuntime, make, roundtrip, run


@pytest.fixture
async def service(sqlite_url: str) -> AsyncIterator[EngineService]:
    svc = EngineService(db_url=sqlite_url)
    await svc.start()
    yield svc
    await svc.stop()


@pytest.fixture
def runtime(service: EngineService) -> FakeRuntime:
    ctx = RequestContext(project_id="proj")
    rt = FakeRuntime()
    rt.software_configs = ServiceConfigStore(service, ctx)  # type: ignore[assignment]
    rt.software_deployments = ServiceDeploymentStore(service, ctx)  # type: ignore[assignment]
    return rt


async def test_config_and_deployment_through_the_service(
        runtime: FakeRuntime, service: EngineService) -> None:
    ctx = RequestContext(project_id="proj")
    sc = make(runtime, "sc", "OS::Heat::SoftwareConfig", {
        "group": "script", "config": "echo hi", "inputs": [{"name": "foo"}],
        "outputs": [{"name": "result"}]})
    await run(sc, "create")
    shown = await service.show_software_config(ctx, sc.reference_id())
    assert shown["config"] == "echo hi" and shown["group"] == "script"
    assert sc.get_attribute("config") == "echo hi"

    dep = make(runtime, "d", "OS::Heat::SoftwareDeployment",
               {"config": sc.reference_id(), "server": "server-1",
                "input_values": {"foo": "bar"}})
    token = roundtrip(await dep.handle_create())
    assert not await dep.check_create_complete(token)
    meta = await service.get_software_deployment_metadata(ctx, "server-1")
    assert [m["name"] for m in meta] == [shown["name"]]
    assert {i["name"]: i["value"] for i in meta[0]["inputs"]}["foo"] == "bar"

    reason = await dep.handle_signal({"result": "done", "deploy_status_code": 0})
    assert reason == f"deployment {dep.resource_id} succeeded"
    assert await dep.check_create_complete(token)
    assert dep.get_attribute("result") == "done"

    await run(dep, "delete")
    assert await service.list_software_deployments(ctx, server_id="server-1") == []
    await run(sc, "delete")
    assert await service.list_software_configs(ctx) == []
