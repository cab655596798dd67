"""Which HOT function class each version uses (filled in as the groups are written)."""

from __future__ import annotations
