"""Software configs and deployments through EngineService; expected bodies are what the
live Heat 27 answered for the same calls (POST/GET/PUT/DELETE /software_configs and
/software_deployments)."""

from __future__ import annotations

import pytest

from kiln.engine.service import EngineService, RequestContext
from kiln.errors import EntityNotFound, HTTPBadRequest, KilnError


async def _config(svc: EngineService, ctx: RequestContext, name: str = "cfg",
                  outputs: list[dict[str, object]] | None = None) -> dict[str, object]:
    return await svc.create_software_config(
        ctx, group="script", name=name, config="echo hi", inputs=[{"name": "foo"}],
        outputs=outputs if outputs is not None else [{"name": "bar"}], options={"a": 1})


async def test_config_body_has_heat_defaults(service: EngineService,
                                             ctx: RequestContext) -> None:
    cfg = await _config(service, ctx)
    assert set(cfg) == {"id", "name", "group", "creation_time", "config", "inputs",
                        "outputs", "options"}
    assert cfg["inputs"] == [{"name": "foo", "type": "String"}]
    assert cfg["outputs"] == [{"name": "bar", "type": "String", "error_output": False}]
    assert cfg["options"] == {"a": 1}
    assert cfg["config"] == "echo hi"
    assert str(cfg["creation_time"]).endswith("Z")
    assert await service.show_software_config(ctx, str(cfg["id"])) == cfg
    listed = await service.list_software_configs(ctx)
    assert listed == [{"id": cfg["id"], "name": "cfg", "group": "script",
                       "creation_time": cfg["creation_time"]}]


async def test_missing_config_and_deployment_are_not_found(service: EngineService,
                                                           ctx: RequestContext) -> None:
    with pytest.raises(EntityNotFound) as exc:
        await service.show_software_config(ctx, "nope")
    assert exc.value.error_type == "NotFound"
    with pytest.raises(EntityNotFound) as exc:
        await service.show_software_deployment(ctx, "nope")
    assert exc.value.error_type == "NotFound"
    with pytest.raises(HTTPBadRequest):
        await service.create_software_config(ctx, "script", "x", "", {"name": "a"}, [], {})


async def test_deployment_lifecycle_and_server_metadata(service: EngineService,
                                                        ctx: RequestContext) -> None:
    cfg_b = await _config(service, ctx, "b-config")
    cfg_a = await _config(service, ctx, "a-config")
    dep = await service.create_software_deployment(
        ctx, "server-1", str(cfg_b["id"]), {"foo": "x"}, "CREATE", "IN_PROGRESS", "")
    assert dep == {"id": dep["id"], "server_id": "server-1", "input_values": {"foo": "x"},
                   "output_values": None, "action": "CREATE", "status": "IN_PROGRESS",
                   "status_reason": "", "config_id": cfg_b["id"],
                   "creation_time": dep["creation_time"]}
    await service.create_software_deployment(
        ctx, "server-1", str(cfg_a["id"]), {}, "CREATE", "COMPLETE", "")
    # agents get the configs ordered by config name, full bodies
    meta = await service.get_software_deployment_metadata(ctx, "server-1")
    assert [m["name"] for m in meta] == ["a-config", "b-config"]
    assert meta[1]["config"] == "echo hi"

    updated = await service.update_software_deployment(
        ctx, str(dep["id"]), None, None, {"bar": "baz", "deploy_status_code": 0}, None,
        "COMPLETE", "Outputs received")
    assert updated["status"] == "COMPLETE"
    assert updated["status_reason"] == "Outputs received"
    assert updated["output_values"] == {"bar": "baz", "deploy_status_code": 0}
    assert updated["input_values"] == {"foo": "x"}      # not given: kept
    assert "updated_time" in updated
    assert next(d["id"] for d in await service.list_software_deployments(
        ctx, server_id="server-1")) == dep["id"]

    # a config in use cannot go (Heat: InvalidRestrictedAction)
    with pytest.raises(KilnError) as exc:
        await service.delete_software_config(ctx, str(cfg_b["id"]))
    assert exc.value.error_type == "InvalidRestrictedAction"
    assert "can not be deleted as it is referenced" in str(exc.value)
    await service.delete_software_deployment(ctx, str(dep["id"]))
    await service.delete_software_config(ctx, str(cfg_b["id"]))
    assert [m["name"] for m in await service.get_software_deployment_metadata(
        ctx, "server-1")] == ["a-config"]


async def test_signal_sets_outputs_and_status(service: EngineService,
                                              ctx: RequestContext) -> None:
    cfg = await _config(service, ctx, outputs=[{"name": "bar"},
                                               {"name": "err", "error_output": True}])
    ok = await service.create_software_deployment(
        ctx, "s", str(cfg["id"]), {}, "CREATE", "IN_PROGRESS", "")
    reason = await service.signal_software_deployment(
        ctx, str(ok["id"]), {"bar": 1, "deploy_stdout": "out", "ignored": 2})
    assert reason == f"deployment {ok['id']} succeeded"
    shown = await service.show_software_deployment(ctx, str(ok["id"]))
    assert shown["status"] == "COMPLETE"
    assert shown["status_reason"] == "Outputs received"
    assert shown["output_values"] == {"bar": 1, "deploy_stdout": "out",
                                      "deploy_stderr": None, "deploy_status_code": None}
    # a second signal after completion is ignored
    assert await service.signal_software_deployment(ctx, str(ok["id"]), {"bar": 2}) is None

    bad = await service.create_software_deployment(
        ctx, "s", str(cfg["id"]), {}, "CREATE", "IN_PROGRESS", "")
    reason = await service.signal_software_deployment(
        ctx, str(bad["id"]), {"deploy_status_code": 3})
    assert reason == f"deployment {bad['id']} failed (3)"
    shown = await service.show_software_deployment(ctx, str(bad["id"]))
    assert shown["status"] == "FAILED"
    assert shown["status_reason"] == ("deploy_status_code : Deployment exited with non-zero "
                                      "status code: 3")
    err = await service.create_software_deployment(
        ctx, "s", str(cfg["id"]), {}, "CREATE", "IN_PROGRESS", "")
    await service.signal_software_deployment(ctx, str(err["id"]), {"err": "boom"})
    shown = await service.show_software_deployment(ctx, str(err["id"]))
    assert (shown["status"], shown["status_reason"]) == ("FAILED", "err : boom")
