"""tests/unit/db/test_change_sets_versions.py on every backend (see conftest.py)."""

from tests.unit.db.test_change_sets_versions import *  # noqa: F403
