"""A resource with effects outside Kiln must find its IN_PROGRESS state committed before
its handle runs: otherwise a crash between the two leaves no trace that the outside work
started, and recovery would start it a second time (a duplicate server, say)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kiln.db import resources as db_resources
from kiln.engine.service import EngineService, RequestContext
from kiln.resources.base import Resource
from kiln.resources.registry import global_registry

from .support import create, hot

SEEN: dict[str, tuple[str, str]] = {}
SERVICE: list[EngineService] = []


class _Observer(Resource):
    async def handle_create(self) -> Any:
        rec = await SERVICE[0].store.database.run(db_resources.get_resource_by_name,
                                                  self.runtime.stack_id, self.name)
        SEEN[self.name] = (rec.action, rec.status)
        return None


class OutsideEffects(_Observer):
    type_name = "Kiln::Test::OutsideEffects"


@pytest.fixture
def observers(service: EngineService) -> Iterator[None]:
    registry = global_registry()
    for cls in (OutsideEffects,):
        registry.register(cls.type_name, cls)
    SERVICE[:] = [service]
    SEEN.clear()
    try:
        yield
    finally:
        for cls in (OutsideEffects,):
            registry._types.pop(cls.type_name, None)
        SERVICE.clear()


async def test_outside_effects_start_only_after_in_progress_is_committed(
        service: EngineService, ctx: RequestContext, observers: None) -> None:
    stack = await create(service, ctx, "durable", hot({
        "a": {"type": OutsideEffects.type_name},
        "b": {"type": OutsideEffects.type_name, "depends_on": ["a"]}}))
    assert stack["stack_status"] == "CREATE_COMPLETE"
    assert SEEN == {"a": ("CREATE", "IN_PROGRESS"), "b": ("CREATE", "IN_PROGRESS")}

