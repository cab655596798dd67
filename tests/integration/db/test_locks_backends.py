"""tests/unit/db/test_locks.py on every backend (see conftest.py)."""

from tests.unit.db.test_locks import *  # noqa: F403
