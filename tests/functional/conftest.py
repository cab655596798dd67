"""Functional tests run a real `kiln serve` (tests/support/server.py) and real clients."""
