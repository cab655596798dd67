"""tests/unit/db/test_sealed.py on every backend (see conftest.py)."""

from tests.unit.db.test_sealed import *  # noqa: F403
