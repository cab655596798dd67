"""tests/unit/db/test_resources.py on every backend (see conftest.py)."""

from tests.unit.db.test_resources import *  # noqa: F403
