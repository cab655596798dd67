"""pytest fixtures built on the support modules (registered by tests/conftest.py).

- ``kiln_server``: one real ``kiln serve`` shared by a test module (read-mostly tests);
  ``start_kiln``: a factory for tests that need their own process or options; every
  process started is stopped at teardown.
- ``openstack``: the real ``openstack`` CLI pointed at ``kiln_server`` (project ``demo``);
  ``heat``: python-heatclient's v1 Client likewise.
- ``keystone``: a real Keystone for the session (tests/support/keystone.py);
  ``start_keystone_factory`` for private ones with other settings.
- ``sqlite_url``, ``postgresql_url``, ``mysql_url``: a fresh database each;
  ``db_url``: the same test once per backend.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import databases
from tests.support.clients import OpenStackCLI, heat_client
from tests.support.keystone import (
    KEYSTONE_VERSION,
    KeystoneProcess,
    KeystoneUnavailable,
    start_keystone,
)
from tests.support.server import KilnProcess, start_kiln
from tests.support.services import unavailable

StartKiln = Callable[..., KilnProcess]


def report_errors(proc: KilnProcess) -> None:
    """Print the server's ERROR records, so a failing test's report shows what the server
    logged (pytest shows captured output of failing tests only)."""
    for record in proc.log_records():
        if record.get("level") in ("ERROR", "CRITICAL"):
            print(f"kiln {proc.stderr_path.name}: {record}")


@pytest.fixture
def start_kiln_factory(tmp_path: Path) -> Iterator[StartKiln]:
    started: list[KilnProcess] = []
    counter = iter(range(1000))

    def factory(**kwargs: Any) -> KilnProcess:
        workdir = kwargs.pop("workdir", None) or tmp_path / f"kiln{next(counter)}"
        proc = start_kiln(workdir, **kwargs)
        started.append(proc)
        return proc

    yield factory
    for proc in reversed(started):
        proc.stop()
        report_errors(proc)


@pytest.fixture(scope="module")
def kiln_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    proc = start_kiln(tmp_path_factory.mktemp("kiln"))
    yield proc
    status = proc.stop()
    report_errors(proc)
    assert status == 0, f"kiln serve exited {status} on SIGTERM:\n{proc.logs()}"


@pytest.fixture
def openstack(kiln_server: KilnProcess, tmp_path: Path) -> OpenStackCLI:
    return OpenStackCLI(kiln_server.endpoint("demo"), cwd=tmp_path)


@pytest.fixture
def heat(kiln_server: KilnProcess) -> Any:
    return heat_client(kiln_server.endpoint("demo"))


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return databases.sqlite_database(tmp_path)


@pytest.fixture
def postgresql_url() -> Iterator[str]:
    with databases.postgresql_database() as url:
        yield url


@pytest.fixture
def mysql_url() -> Iterator[str]:
    with databases.mysql_database() as url:
        yield url


@pytest.fixture(params=[
    "sqlite",
    pytest.param("postgresql", marks=pytest.mark.postgresql),
    pytest.param("mysql", marks=pytest.mark.mysql),
])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield databases.sqlite_database(tmp_path)
    elif request.param == "postgresql":
        with databases.postgresql_database() as url:
            yield url
    else:
        with databases.mysql_database() as url:
            yield url


@pytest.fixture(scope="session")
def keystone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeystoneProcess]:
    """A real Keystone shared by the session's tests (one per xdist worker; they make their
    own users and projects with ``keystone.account()``). Skips, or fails under
    KILN_REQUIRE_SERVICES=1, when it cannot be installed or started."""
    try:
        proc = start_keystone(tmp_path_factory.mktemp("keystone"))
    except KeystoneUnavailable as exc:
        unavailable(f"Keystone {KEYSTONE_VERSION} is not available: {exc}")
    yield proc
    proc.stop()


StartKeystone = Callable[..., KeystoneProcess]


@pytest.fixture
def start_keystone_factory(tmp_path: Path) -> Iterator[StartKeystone]:
    """Private Keystones for tests that change its settings (``token_expiration=60``) or
    stop it; every one started is stopped at teardown."""
    started: list[KeystoneProcess] = []
    counter = iter(range(1000))

    def factory(**kwargs: Any) -> KeystoneProcess:
        try:
            proc = start_keystone(tmp_path / f"keystone{next(counter)}", **kwargs)
        except KeystoneUnavailable as exc:
            unavailable(f"Keystone {KEYSTONE_VERSION} is not available: {exc}")
        started.append(proc)
        return proc

    yield factory
    for proc in started:
        proc.stop()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Name the directory of the browser tests' screenshots when any were taken."""
    from tests.support.browser import SESSION_MARKER, artifacts_dir

    folder = artifacts_dir()
    if (folder / SESSION_MARKER).exists():
        terminalreporter.write_line(f"browser screenshots: {folder}")


def kiln_with_plugin(workdir: Path, filename: str, source: str,
                     options: dict[str, dict[str, Any]] | None = None) -> Iterator[KilnProcess]:
    """A `kiln serve` that loads one resource plugin (*source*) from ``plugin_dirs``: a
    stand-in for a cloud where a test needs a resource to behave a certain way. A
    generator, for a fixture to ``yield from``; errors in the log fail the test."""
    plugins = workdir / "plugins"
    plugins.mkdir()
    (plugins / filename).write_text(source)
    given = dict(options or {})
    given["DEFAULT"] = {**given.get("DEFAULT", {}), "plugin_dirs": str(plugins)}
    proc = start_kiln(workdir, options=given)
    yield proc
    proc.stop()
    report_errors(proc)
