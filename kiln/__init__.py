"""Kiln: an orchestration service wire-compatible with OpenStack Heat."""

__version__ = "0.1.0"
