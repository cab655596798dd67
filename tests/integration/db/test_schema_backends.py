"""tests/unit/db/test_schema.py on every backend (see conftest.py)."""

from tests.unit.db.test_schema import *  # noqa: F403
