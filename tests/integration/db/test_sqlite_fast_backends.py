"""tests/unit/db/test_sqlite_fast.py on every backend (see conftest.py)."""

from tests.unit.db.test_sqlite_fast import *  # noqa: F403
