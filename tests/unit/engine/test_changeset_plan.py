"""Masking in a change set's values: a hidden parameter's value never shows, wherever
it sits in a property (whole, inside a string, inside a list or map)."""

from __future__ import annotations

from kiln.engine.service.changeset_plan import MASK, masked


def test_hidden_values_are_masked_wherever_they_sit() -> None:
    secrets = {"pa55word"}
    assert masked("pa55word", secrets) == MASK
    assert masked("user:pa55word@db", secrets) == MASK
    assert masked(["a", "x-pa55word"], secrets) == ["a", MASK]
    assert masked({"k": {"deep": "pa55word"}, "n": 3}, secrets) == {"k": {"deep": MASK}, "n": 3}
    assert masked("public", secrets) == "public"
    assert masked(12, {"12"}) == MASK
    assert masked(None, secrets) is None


def test_nothing_is_masked_without_hidden_values() -> None:
    assert masked({"a": ["b", 1]}, set()) == {"a": ["b", 1]}
