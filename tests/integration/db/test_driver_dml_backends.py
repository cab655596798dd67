"""tests/unit/db/test_driver_dml.py on every backend (see conftest.py)."""

from tests.unit.db.test_driver_dml import *  # noqa: F403
