"""A replaced resource's row goes in the write that records its DELETE_COMPLETE (issue 26).

An update that replaces N resources wrote each old row's DELETE state and then, in a
write of its own, deleted the row: N row updates nobody could use, and a second write
per resource. The events (what a heatclient user sees) are unchanged: each replaced
resource still shows UPDATE, then CREATE of the new one, then DELETE of the old one.
"""

from __future__ import annotations

from typing import Any

import pytest

from kiln.db import resources as db_resources
from kiln.engine.service import EngineService, RequestContext

from .support import create, events, hot, resources


def _salted(n: int, salt: str) -> dict[str, Any]:
    return hot({f"r{i}": {"type": "OS::Heat::RandomString",
                          "properties": {"salt": salt, "length": 8}} for i in range(n)})


async def test_a_replaced_row_is_deleted_without_being_updated_to_its_delete_state(
        service: EngineService, ctx: RequestContext, monkeypatch: pytest.MonkeyPatch) -> None:
    stack = await create(service, ctx, "replaced-rows", _salted(4, "a"))
    ident = stack["stack_identity"]
    updated: list[tuple[int, str]] = []
    real = db_resources.update_resources

    def recorded(s: Any, updates: Any) -> None:
        updated.extend((rid, values.get("action", "")) for rid, values in updates)
        real(s, updates)

    monkeypatch.setattr(db_resources, "update_resources", recorded)
    await service.update_stack(ctx, ident, _salted(4, "b"), {}, {}, {})
    await service.wait_for_stack(stack["id"])
    shown = await service.show_stack(ctx, ident)
    assert shown["stack_status"] == "UPDATE_COMPLETE", shown["stack_status_reason"]
    assert [u for u in updated if u[1] == "DELETE"] == []
    assert await resources(service, ctx, ident) == {f"r{i}": "CREATE_COMPLETE"
                                                    for i in range(4)}
    # the old rows are gone: only the replacements are left
    rows = await service.engine.store.resources.of_stack(stack["id"])
    assert len(rows) == 4 and all(r.action == "CREATE" for r in rows)
    seen = await events(service, ctx, ident)
    for i in range(4):
        mine = [status for name, status, _ in seen if name == f"r{i}"]
        assert mine == ["CREATE_IN_PROGRESS", "CREATE_COMPLETE",
                        "UPDATE_IN_PROGRESS", "UPDATE_COMPLETE",
                        "CREATE_IN_PROGRESS", "CREATE_COMPLETE",
                        "DELETE_IN_PROGRESS", "DELETE_COMPLETE"], (i, seen)
