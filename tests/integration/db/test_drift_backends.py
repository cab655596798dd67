"""tests/unit/db/test_drift.py on every backend (see conftest.py)."""

from tests.unit.db.test_drift import *  # noqa: F403
