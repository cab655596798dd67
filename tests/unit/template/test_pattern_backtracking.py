"""allowed_pattern: which patterns may backtrack exponentially (matched in a child
process with a deadline) and which are matched in place, and what either answers."""

from __future__ import annotations

import pytest

from kiln.template.constraints import AllowedPattern, ConstraintViolation, backtracks


@pytest.mark.parametrize("pattern", [r"(a|aa)+$", r"(a+)+$", r"(\w+\.)*\w+", r"(.*)*",
                                     r"(a)\1", r"((ab)*c)+", r"(x+y?)*"])
def test_nested_repeats_alternations_and_backreferences_are_risky(pattern: str) -> None:
    assert backtracks(pattern)


@pytest.mark.parametrize("pattern", [r"[a-z][-a-z0-9]*", r"^[a-z]([-a-z0-9]*[a-z0-9])?$",
                                     r"\d+-\d+", r"[A-Za-z0-9_.-]{1,64}", r"(?:ab)+",
                                     r"(a|b)+", r"[0-9]+(\.[0-9]+)?"])
def test_ordinary_patterns_are_matched_in_place(pattern: str) -> None:
    assert not backtracks(pattern)


def test_a_risky_pattern_still_matches_and_refuses_like_any_other() -> None:
    constraint = AllowedPattern.of(r"(\w+\.)*\w+")
    constraint.validate("www.example.org")
    with pytest.raises(ConstraintViolation, match='"bad value!" does not match pattern'):
        constraint.validate("bad value!")


def test_a_match_past_the_deadline_is_refused_with_the_reason(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("kiln.template.constraints.PATTERN_SECONDS", 0.5)
    constraint = AllowedPattern.of(r"(a|aa)+$")
    with pytest.raises(ConstraintViolation, match=r'could not be matched against pattern '
                                                  r'"\(a\|aa\)\+\$" within 0.5 seconds'):
        constraint.validate("a" * 60 + "b")
