"""tests/unit/db/test_facade.py on every backend (see conftest.py)."""

from tests.unit.db.test_facade import *  # noqa: F403
