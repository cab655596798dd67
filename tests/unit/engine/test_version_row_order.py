"""A create's or update's answer does not wait for its history row (issue 26, session 13:
awaiting the row's commit, queued behind the action's own first writes, made a 1,000-
resource create's POST answer 0.1-0.5 s later); the row is still queued before anything
the action writes, so it is kept whenever the action's progress is visible."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kiln.engine.service import EngineService, RequestContext

from .support import hot

TEMPLATE = hot({"r": {"type": "OS::Heat::None"}})


async def test_the_answer_does_not_wait_for_the_version_row(
        service: EngineService, ctx: RequestContext, monkeypatch: pytest.MonkeyPatch) -> None:
    store = service.store.versions
    real_add = store.add
    held: list[asyncio.Future[int]] = []
    order: list[str] = []

    def add(*args: Any) -> asyncio.Future[int]:
        order.append("version")
        written = real_add(*args)
        held.append(asyncio.get_running_loop().create_future())  # never resolved here
        written.add_done_callback(lambda _: None)
        return held[-1]

    monkeypatch.setattr(store, "add", add)
    ident = await asyncio.wait_for(
        service.create_stack(ctx, "ordered", TEMPLATE, {}, {}, {}), 30)
    await service.wait_for_stack(ident["stack_id"])
    await asyncio.wait_for(
        service.update_stack(ctx, ident, hot({"r": {"type": "OS::Heat::None"},
                                              "s": {"type": "OS::Heat::None"}}), {}, {}, {}),
        30)
    await service.wait_for_stack(ident["stack_id"])
    assert order == ["version", "version"]
    assert not any(f.done() for f in held)  # both answers came without it
    listed = await service.list_stack_versions(ctx, ident)
    assert [(v["version"], v["action"]) for v in listed] == [(1, "CREATE"), (2, "UPDATE")]
