from __future__ import annotations

import pytest

from tests.unit.db.support import db, engine, tx

__all__ = ["db", "engine", "tx"]


@pytest.fixture
def url(db_url: str) -> str:
    """The unit suite's tests, once per backend (SQLite, PostgreSQL, MariaDB)."""
    return db_url
