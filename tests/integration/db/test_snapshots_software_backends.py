"""tests/unit/db/test_snapshots_software.py on every backend (see conftest.py)."""

from tests.unit.db.test_snapshots_software import *  # noqa: F403
