"""tests/unit/db/test_signals.py on every backend (see conftest.py)."""

from tests.unit.db.test_signals import *  # noqa: F403
