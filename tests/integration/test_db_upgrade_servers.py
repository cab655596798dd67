"""`kiln db upgrade` against real PostgreSQL and MariaDB servers (fresh database each)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.commands import check_upgrade_twice


@pytest.mark.postgresql
def test_postgresql(tmp_path: Path, postgresql_url: str) -> None:
    check_upgrade_twice(tmp_path, postgresql_url, postgresql_url)


@pytest.mark.postgresql
def test_postgresql_bare_dialect_name_uses_psycopg(tmp_path: Path, postgresql_url: str) -> None:
    bare = postgresql_url.replace("postgresql+psycopg://", "postgresql://")
    check_upgrade_twice(tmp_path, bare, postgresql_url)


@pytest.mark.mysql
def test_mariadb(tmp_path: Path, mysql_url: str) -> None:
    check_upgrade_twice(tmp_path, mysql_url, mysql_url)
