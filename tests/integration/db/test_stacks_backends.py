"""tests/unit/db/test_stacks.py on every backend (see conftest.py)."""

from tests.unit.db.test_stacks import *  # noqa: F403
