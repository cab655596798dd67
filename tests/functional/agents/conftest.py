"""Fixtures for the agent tests: a real ``kiln serve``, heatclient on it, and a fresh
sandbox instance root per test (tests/support/agents.py), where Heat's real agents run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.agents import Sandbox, agents_or_skip, make_sandbox
from tests.support.clients import heat_client
from tests.support.fixtures import report_errors
from tests.support.server import KilnProcess, start_kiln


@pytest.fixture(scope="module")
def kiln(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    # a deployment still waiting for its signal at the end must not hold the shutdown
    proc = start_kiln(tmp_path_factory.mktemp("kiln"),
                      options={"DEFAULT": {"graceful_shutdown_timeout": 2}})
    yield proc
    status = proc.stop()
    report_errors(proc)
    assert status == 0, f"kiln serve exited {status} on SIGTERM:\n{proc.logs()}"


@pytest.fixture
def hc(kiln: KilnProcess) -> Any:
    return heat_client(kiln.endpoint("demo"))


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    return make_sandbox(tmp_path / "instance", agents_or_skip())
