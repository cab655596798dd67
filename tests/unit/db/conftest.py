from __future__ import annotations

import pytest

from tests.unit.db.support import db, engine, tx

__all__ = ["db", "engine", "tx"]


@pytest.fixture
def url(sqlite_url: str) -> str:
    return sqlite_url
