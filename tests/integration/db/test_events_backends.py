"""tests/unit/db/test_events.py on every backend (see conftest.py)."""

from tests.unit.db.test_events import *  # noqa: F403
