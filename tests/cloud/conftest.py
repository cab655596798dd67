"""The cloud suite: Kiln's OpenStack resource types against real OpenStack services.

One test cloud (tests/support/cloud) serves the whole session: started here unless
``scripts/test.sh`` (or ``python -m tests.support.cloud start``) already runs it, and
then left to whoever started it. Without MariaDB or RabbitMQ the suite is skipped with
the reason (a failure under ``KILN_REQUIRE_SERVICES=1``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.clients import heat_client
from tests.support.cloud import Cloud, CloudSetupError, running_cloud
from tests.support.server import KilnProcess, start_kiln
from tests.support.services import unavailable


@pytest.fixture(scope="session")
def cloud() -> Iterator[Cloud]:
    try:
        with running_cloud() as running:
            yield running
    except CloudSetupError as exc:
        unavailable(f"the test OpenStack cloud could not be started: {exc}")


def cloud_options(cloud: Cloud) -> dict[str, dict[str, Any]]:
    """The kiln.conf sections that point a single-user Kiln at the test cloud."""
    auth = cloud.auth
    return {"kiln_clients": {"auth_url": auth["auth_url"], "username": auth["username"],
                             "password": auth["password"],
                             "project_name": auth["project_name"],
                             "retry_initial_delay": 0.2},
            "DEFAULT": {"region_name_for_services": cloud.region}}


def _kiln(cloud: Cloud, tmp_path_factory: pytest.TempPathFactory, name: str
          ) -> Iterator[KilnProcess]:
    proc = start_kiln(tmp_path_factory.mktemp(name), options=cloud_options(cloud))
    try:
        yield proc
    finally:
        proc.stop()


@pytest.fixture(scope="module")
def cloud_kiln(cloud: Cloud, tmp_path_factory: pytest.TempPathFactory
               ) -> Iterator[KilnProcess]:
    yield from _kiln(cloud, tmp_path_factory, "cloud-kiln")


@pytest.fixture
def cloud_heat(cloud_kiln: KilnProcess) -> Any:
    return heat_client(cloud_kiln.endpoint("demo"))


@pytest.fixture(scope="session")
def swift(cloud: Cloud) -> Iterator[Any]:
    """Swift beside the cloud (tests/support/swift.py), in the cloud's catalog as
    ``object-store`` while this session uses it; a Swift that cannot be installed or
    started skips (fails under KILN_REQUIRE_SERVICES=1: it installs from PyPI here)."""
    from tests.support.swift import running_swift

    try:
        with running_swift(cloud.layout) as layout:
            yield layout
    except CloudSetupError as exc:
        unavailable(f"Swift could not be started beside the test cloud: {exc}")


@pytest.fixture(scope="module")
def swift_kiln(swift: Any, cloud: Cloud, tmp_path_factory: pytest.TempPathFactory
               ) -> Iterator[KilnProcess]:
    """A Kiln started once Swift is in the catalog (its listing follows the catalog)."""
    yield from _kiln(cloud, tmp_path_factory, "swift-kiln")


@pytest.fixture
def swift_heat(swift_kiln: KilnProcess) -> Any:
    return heat_client(swift_kiln.endpoint("demo"))


@pytest.fixture(scope="session")
def sdk(cloud: Cloud) -> Any:
    """openstacksdk as the cloud's admin: what the tests check the cloud with."""
    return cloud.connect()


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path
