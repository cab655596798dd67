"""The engine's notifications through the Notifier seam, without a broker: what a stack's
life sends, in order; a notifier that raises fails no action (notifications are
best-effort)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.engine.service import EngineService, RequestContext

from .support import create, hot

TEMPLATE = hot({"a": {"type": "OS::Heat::None"}})


class Recording:
    """A notifier that keeps what it is given."""

    enabled = True

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, dict[str, Any]]] = []

    def send(self, event_type: str, priority: str, payload: Mapping[str, Any],
             context: Mapping[str, Any]) -> None:
        self.sent.append((event_type, priority, dict(payload)))

    def close(self) -> None:
        pass


class Raising(Recording):
    def send(self, event_type: str, priority: str, payload: Mapping[str, Any],
             context: Mapping[str, Any]) -> None:
        raise RuntimeError("broker library bug")


async def test_a_stacks_life_sends_start_and_end_of_each_action(
        sqlite_url: str, ctx: RequestContext) -> None:
    notifier = Recording()
    service = EngineService(db_url=sqlite_url, notifier=notifier)
    await service.start()
    try:
        stack = await create(service, ctx, "told", TEMPLATE)
        ident = stack["stack_identity"]
        await service.delete_stack(ctx, ident)
        await service.wait_for_stack(ident["stack_id"])
    finally:
        await service.stop()
    assert [(e, p) for e, p, _ in notifier.sent] == [
        ("orchestration.stack.create.start", "INFO"),
        ("orchestration.stack.create.end", "INFO"),
        ("orchestration.stack.delete.start", "INFO"),
        ("orchestration.stack.delete.end", "INFO"),
    ]
    body = notifier.sent[1][2]
    assert body["state"] == "CREATE_COMPLETE" and body["stack_name"] == "told"
    assert body["user_id"] == "demo" and body["user_identity"] == "demo-user"
    assert body["tenant_id"] == "demo" and body["parent"] is None


async def test_a_notifier_that_raises_fails_no_action(
        sqlite_url: str, ctx: RequestContext) -> None:
    service = EngineService(db_url=sqlite_url, notifier=Raising())
    await service.start()
    try:
        stack = await create(service, ctx, "unheard", TEMPLATE)
        assert stack["stack_status"] == "CREATE_COMPLETE"
    finally:
        await service.stop()
