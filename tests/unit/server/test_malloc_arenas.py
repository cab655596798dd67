"""The server shares one glibc malloc arena between its threads unless the operator
chose a number with glibc's own ``MALLOC_ARENA_MAX``."""

from __future__ import annotations

import platform

import pytest

from kiln import server


def test_an_operator_setting_is_left_to_glibc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert server.limit_malloc_arenas() is False


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_glibc_accepts_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert server.limit_malloc_arenas() is True
