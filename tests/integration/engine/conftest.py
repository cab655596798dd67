"""Fixtures for driving EngineService on each database backend: ``svc`` is an
EngineService on a fresh database (``db_url``: SQLite, PostgreSQL, MariaDB), ``second``
a second engine on the same database (what another ``kiln engine`` process would be)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from kiln.conf import CONF
from kiln.engine.service import EngineService, RequestContext

#: group -> option -> value: fast polling keeps TestResource timers and hook re-reads short;
#: a short graceful stop keeps teardown quick if a test failed mid-action.
_OVERRIDES: dict[str | None, dict[str, float]] = {
    "kiln_engine": {"poll_initial_delay": 0.001, "poll_max_delay": 0.05},
    None: {"graceful_shutdown_timeout": 2},
}


@pytest.fixture
def engine_conf() -> Iterator[None]:
    for group, values in _OVERRIDES.items():
        for name, value in values.items():
            CONF.set_override(name, value, group=group)
    yield
    for group, values in _OVERRIDES.items():
        for name in values:
            CONF.clear_override(name, group=group)


@pytest.fixture
async def svc(db_url: str, engine_conf: None) -> AsyncIterator[EngineService]:
    service = EngineService(db_url=db_url)
    await service.start()
    yield service
    await service.stop()


@pytest.fixture
async def second(db_url: str, svc: EngineService) -> AsyncIterator[EngineService]:
    service = EngineService(db_url=db_url)
    await service.start()
    yield service
    await service.stop()


@pytest.fixture
def ctx() -> RequestContext:
    return RequestContext(project_id="backend", is_admin=False, roles=("member",),
                          username="tester", user_id="tester-id")
