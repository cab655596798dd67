"""Fixtures shared by every suite live in tests/support (see tests/support/fixtures.py)."""

pytest_plugins = ["tests.support.fixtures"]
