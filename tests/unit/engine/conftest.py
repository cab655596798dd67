"""An EngineService on a fresh SQLite database per test, plus helpers to drive it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

from kiln.conf import CONF
from kiln.engine.service import EngineService, RequestContext

Override = Callable[..., None]


@pytest.fixture
def override() -> Iterator[Override]:
    """Set CONF options for one test: ``override(max_stacks_per_tenant=1)`` or
    ``override(max_concurrency=2, group="kiln_engine")``."""
    done: list[tuple[str, str | None]] = []

    def set_(group: str | None = None, **values: Any) -> None:
        for name, value in values.items():
            CONF.set_override(name, value, group=group)
            done.append((name, group))

    yield set_
    for name, group in done:
        CONF.clear_override(name, group=group)


@pytest.fixture
async def service(sqlite_url: str, override: Override) -> AsyncIterator[EngineService]:
    # fast polling keeps tests that wait on TestResource timers short
    override(poll_initial_delay=0.001, poll_max_delay=0.05, group="kiln_engine")
    override(graceful_shutdown_timeout=2)
    svc = EngineService(db_url=sqlite_url)
    await svc.start()
    yield svc
    await svc.stop()


@pytest.fixture
def ctx() -> RequestContext:
    return RequestContext(project_id="demo", is_admin=False, roles=("member",),
                          username="demo", user_id="demo-user")
