"""Every built-in resource type through every stack action, through EngineService (the
real engine's wiring, not a plugin test's hand-built runtime). The same sequence runs
through kiln serve and python-heatclient in tests/functional/test_server_engine_wiring.py.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from kiln.engine.service import EngineService, RequestContext
from kiln.resources.registry import global_registry
from tests.support.all_types import FILES, SAMPLES, Sample, builtin_types
from tests.unit.engine.conftest import Override

DEADLINE = 60.0


async def _settle(svc: EngineService, ctx: RequestContext, ident: Any,
                  sample: Sample | None = None) -> dict[str, Any]:
    """Wait for the action to end, signalling the sample's handle whenever the resource
    under test waits for it (a wait condition being created)."""
    deadline = time.monotonic() + DEADLINE
    signal = sample.signal if sample is not None else None
    signalled: set[str] = set()
    while True:
        try:
            await svc.wait_for_stack(ident["stack_id"], timeout=0.05 if signal else DEADLINE)
            return await svc.show_stack(ctx, ident)
        except TimeoutError:
            pass
        assert time.monotonic() < deadline, f"still in progress after {DEADLINE}s"
        rows = {r["resource_name"]: r for r in await svc.list_stack_resources(ctx, ident)}
        waiting = rows.get("r")
        if (signal is not None and waiting is not None
                and waiting["resource_status"] == "CREATE_IN_PROGRESS"
                and waiting["physical_resource_id"] not in signalled):
            assert sample is not None
            await svc.resource_signal(ctx, ident, signal, sample.signal_data, sync_call=True)
            signalled.add(waiting["physical_resource_id"])


async def _creates(svc: EngineService, ctx: RequestContext, ident: Any) -> int:
    """How many times ``r`` was created: a replacement is one more, an update in place
    none (a wait condition has no physical id to tell them apart, as in Heat)."""
    return sum(e["resource_name"] == "r" and e["resource_status"] == "CREATE_IN_PROGRESS"
               for e in await svc.list_events(ctx, ident))


@pytest.mark.parametrize("type_name", builtin_types())
async def test_every_type_through_every_action(service: EngineService, ctx: RequestContext,
                                               type_name: str, override: Override) -> None:
    override(heat_waitcondition_server_url="http://127.0.0.1:8000")
    sample = SAMPLES.get(type_name)
    assert sample is not None, f"add a sample for {type_name} to tests/support/all_types.py"
    template = sample.template(sample.created, type_name)
    ident = await service.create_stack(ctx, "every", template, {}, FILES, {})
    stack = await _settle(service, ctx, ident, sample)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]

    if sample.in_place is not None:
        await service.update_stack(ctx, ident, sample.template(sample.in_place, type_name),
                                   {}, FILES, {})
        stack = await _settle(service, ctx, ident, sample)
        assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
        assert await _creates(service, ctx, ident) == 1              # updated in place
    if sample.replaced is not None:
        await service.update_stack(ctx, ident, sample.template(sample.replaced, type_name),
                                   {}, FILES, {})
        stack = await _settle(service, ctx, ident, sample)
        assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
        assert await _creates(service, ctx, ident) == 2              # replaced

    for action, call in (("SUSPEND", service.stack_suspend), ("RESUME", service.stack_resume),
                         ("CHECK", service.stack_check)):
        await call(ctx, ident)
        stack = await _settle(service, ctx, ident)
        assert stack["stack_status"] == f"{action}_COMPLETE", stack["stack_status_reason"]
    checked = await service.describe_stack_resource(ctx, ident, "r")
    assert checked["resource_status"] == "CHECK_COMPLETE"
    if not global_registry().get(type_name).supports("check"):
        # Heat 27: "CHECK not supported for OS::Heat::Value", the resource still COMPLETE
        assert checked["resource_status_reason"] == f"CHECK not supported for {type_name}"

    snapshot = await service.stack_snapshot(ctx, ident, "snap")
    stack = await _settle(service, ctx, ident)
    shown = await service.show_snapshot(ctx, ident, snapshot["id"])
    assert shown["status"] == "COMPLETE", shown["status_reason"]
    await service.stack_restore(ctx, ident, snapshot["id"])
    stack = await _settle(service, ctx, ident, sample)
    assert stack["stack_status"] == "RESTORE_COMPLETE", stack["stack_status_reason"]

    await service.delete_stack(ctx, ident)
    await service.wait_for_stack(ident["stack_id"])
    gone = await service.show_stack(ctx, {"stack_id": ident["stack_id"]})
    assert gone["stack_status"] == "DELETE_COMPLETE", gone["stack_status_reason"]
