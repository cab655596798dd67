"""Software-config resource types through the real engine (EngineService), not through a
hand-wired runtime: the stores they read must be the engine's own."""

from __future__ import annotations

from kiln.engine.service import EngineService, RequestContext
from tests.unit.engine.support import create, hot


async def test_software_config_resource_is_stored_by_the_engine(
        service: EngineService, ctx: RequestContext) -> None:
    template = hot({"cfg": {"type": "OS::Heat::SoftwareConfig",
                            "properties": {"group": "script", "config": "echo hi"}}},
                   outputs={"id": {"value": {"get_resource": "cfg"}},
                            "body": {"value": {"get_attr": ["cfg", "config"]}}})
    shown = await create(service, ctx, "sc", template)
    assert (shown["stack_status"], shown["stack_status_reason"]) == (
        "CREATE_COMPLETE", "Stack CREATE completed successfully")
    outputs = {o["output_key"]: o["output_value"] for o in shown["outputs"]}
    stored = await service.show_software_config(ctx, outputs["id"])
    assert (stored["group"], stored["config"], outputs["body"]) == (
        "script", "echo hi", "echo hi")
    await service.delete_stack(ctx, {"stack_id": shown["id"]})
    await service.wait_for_stack(shown["id"])


async def test_deployment_of_a_config_to_a_deployed_server(
        service: EngineService, ctx: RequestContext) -> None:
    template = hot({
        "server": {"type": "OS::Heat::DeployedServer"},
        "cfg": {"type": "OS::Heat::StructuredConfig",
                "properties": {"group": "ansible", "config": {"a": 1}}},
        "dep": {"type": "OS::Heat::SoftwareDeployment",
                "properties": {"config": {"get_resource": "cfg"},
                               "server": {"get_resource": "server"},
                               "signal_transport": "NO_SIGNAL"}}})
    shown = await create(service, ctx, "sd", template)
    assert shown["stack_status"] == "CREATE_COMPLETE", shown["stack_status_reason"]
    deployments = await service.list_software_deployments(ctx)
    assert [(d["action"], d["status"]) for d in deployments] == [("CREATE", "COMPLETE")]
