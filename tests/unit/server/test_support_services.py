"""The test support's rule for absent database servers: skip locally with the reason,
fail under KILN_REQUIRE_SERVICES=1 (CI), so CI can never pass by testing nothing."""

from __future__ import annotations

import pytest

from tests.support import databases
from tests.support.ports import free_port


@pytest.fixture
def closed_port() -> int:
    return free_port()


@pytest.mark.parametrize(("env", "server"), [
    ("KILN_TEST_PG_URL", "postgresql"), ("KILN_TEST_MYSQL_URL", "mysql")])
def test_absent_server_skips_with_the_reason_locally(
        monkeypatch: pytest.MonkeyPatch, closed_port: int, env: str, server: str) -> None:
    monkeypatch.delenv("KILN_REQUIRE_SERVICES", raising=False)
    driver = "postgresql+psycopg" if server == "postgresql" else "mysql+pymysql"
    monkeypatch.setenv(env, f"{driver}://u@127.0.0.1:{closed_port}/x")
    opener = databases.postgresql_database if server == "postgresql" \
        else databases.mysql_database
    expected = f"127.0.0.1:{closed_port} is not available"
    with pytest.raises(pytest.skip.Exception, match=expected), opener():
        pass


@pytest.mark.parametrize(("env", "server"), [
    ("KILN_TEST_PG_URL", "postgresql"), ("KILN_TEST_MYSQL_URL", "mysql")])
def test_absent_server_fails_when_services_are_required(
        monkeypatch: pytest.MonkeyPatch, closed_port: int, env: str, server: str) -> None:
    monkeypatch.setenv("KILN_REQUIRE_SERVICES", "1")
    driver = "postgresql+psycopg" if server == "postgresql" else "mysql+pymysql"
    monkeypatch.setenv(env, f"{driver}://u@127.0.0.1:{closed_port}/x")
    opener = databases.postgresql_database if server == "postgresql" \
        else databases.mysql_database
    with pytest.raises(pytest.fail.Exception, match="KILN_REQUIRE_SERVICES=1"), opener():
        pass
