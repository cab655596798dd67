"""tests/unit/db/test_templates.py on every backend (see conftest.py)."""

from tests.unit.db.test_templates import *  # noqa: F403
