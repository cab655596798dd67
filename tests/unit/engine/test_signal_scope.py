"""A signal to a stack this engine is running is taken without reading the stack's row,
under the same rules as any lookup: another project does not find it (by id or name), a
wrong name with the right id does not name it, an admin reaches it by id."""

from __future__ import annotations

import asyncio

import pytest

from kiln.engine.service import EngineService, RequestContext
from kiln.errors import EntityNotFound

TEMPLATE = {"heat_template_version": "2018-08-31", "resources": {
    "h": {"type": "OS::Heat::WaitConditionHandle"},
    "w": {"type": "OS::Heat::WaitCondition",
          "properties": {"handle": {"get_resource": "h"}, "timeout": 60, "count": 2}}}}


async def test_signals_to_a_running_stack_keep_projects_apart(
        service: EngineService, ctx: RequestContext) -> None:
    ident = dict(await service.create_stack(ctx, "waits", TEMPLATE, {}, {}, {}))
    for _ in range(500):                      # until the handle takes signals
        listed = {r["resource_name"]: r["resource_status"]
                  for r in await service.list_stack_resources(ctx, ident)}
        if listed.get("h") == "CREATE_COMPLETE":
            break
        await asyncio.sleep(0.01)  # status poll, bounded by the loop
    assert service.engine.live.get(ident["stack_id"]) is not None   # it is running

    other = RequestContext(project_id="other", is_admin=False, roles=("member",))
    for identity in (ident, {"stack_id": ident["stack_id"]}):
        with pytest.raises(EntityNotFound):
            await service.resource_signal(other, identity, "h", {"data": "x"})
    with pytest.raises(EntityNotFound):
        await service.resource_signal(ctx, {**ident, "stack_name": "not-its-name"}, "h",
                                      {"data": "x"})
    await service.resource_signal(ctx, ident, "h", {"data": "one", "id": "a"})
    admin = RequestContext(project_id="admin", is_admin=True, roles=("admin",))
    await service.resource_signal(admin, {"stack_id": ident["stack_id"]}, "h",
                                  {"data": "two", "id": "b"})
    await service.wait_for_stack(ident["stack_id"], timeout=30)
    shown = await service.show_stack(ctx, ident)
    assert shown["stack_status"] == "CREATE_COMPLETE"
