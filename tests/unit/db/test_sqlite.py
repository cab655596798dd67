"""SQLite specifics: WAL, enforced foreign keys, the default file location."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from kiln.db.engine import default_url, normalise_url
from kiln.db.models import Resource


def test_pragmas(engine: sa.Engine) -> None:
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 1000


def test_foreign_keys_are_enforced(engine: sa.Engine) -> None:
    with pytest.raises(sa.exc.IntegrityError), engine.begin() as conn:
        conn.execute(sa.insert(Resource).values(
            uuid="u", stack_id="no-such-stack", root_stack_id="x", name="r", type="T",
            action="INIT", status="COMPLETE", status_reason=""))


def test_default_url_is_a_file_under_state_path(tmp_path: Path) -> None:
    url = default_url(str(tmp_path / "state"))
    assert url == f"sqlite:///{tmp_path / 'state' / 'kiln.sqlite'}"
    assert (tmp_path / "state").is_dir()


def test_bare_dialect_urls_get_kiln_drivers() -> None:
    assert normalise_url("postgresql://u@h/db").startswith("postgresql+psycopg://")
    mysql = normalise_url("mysql://u@h/db")
    assert mysql.startswith("mysql+pymysql://") and "charset=utf8mb4" in mysql
