"""tests/unit/db/test_user_creds.py on every backend (see conftest.py)."""

from tests.unit.db.test_user_creds import *  # noqa: F403
