"""The interleaving harness: a Gate registered as ``Kiln::Test::Gate`` for one test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kiln.resources.registry import global_registry

from . import gate as gate_module


@pytest.fixture
def gate() -> Iterator[gate_module.Gate]:
    registry = global_registry()
    registry.register(gate_module.TYPE, gate_module.GateResource)
    gate_module.CURRENT = gate_module.Gate()
    try:
        yield gate_module.CURRENT
    finally:
        gate_module.CURRENT = None
        registry._types.pop(gate_module.TYPE, None)
