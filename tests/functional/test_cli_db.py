"""`kiln db upgrade`: creates the schema an empty database needs, and is safe to repeat.

PostgreSQL and MariaDB: tests/integration/test_db_upgrade_servers.py.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.commands import check_upgrade_twice, db_upgrade
from tests.support.ports import free_port


def test_default_database_is_created_under_state_path(tmp_path: Path) -> None:
    check_upgrade_twice(tmp_path, None, f"sqlite:///{tmp_path}/state/kiln.sqlite")


def test_configured_sqlite_file(tmp_path: Path, sqlite_url: str) -> None:
    check_upgrade_twice(tmp_path, sqlite_url, sqlite_url)


def test_unreachable_database_server_is_one_clear_line(tmp_path: Path) -> None:
    result = db_upgrade(tmp_path, f"postgresql://postgres@127.0.0.1:{free_port()}/kiln")
    assert result.returncode == 1
    assert result.stderr.startswith("kiln: error: cannot open the database:")
    assert "Traceback" not in result.stderr


def test_unknown_database_dialect_is_a_config_error(tmp_path: Path) -> None:
    result = db_upgrade(tmp_path, "oracle+nosuchdriver://scott@db/kiln")
    assert result.returncode == 2
    assert result.stderr.startswith("kiln: error: invalid [database] connection:")
    assert "Traceback" not in result.stderr
