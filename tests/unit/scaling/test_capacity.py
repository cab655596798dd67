"""Heat 27's adjustment rules (heat/scaling/scalingutil.py, read for the facts): the
expected sizes are worked out by hand from the documented rules, not from Kiln."""

from __future__ import annotations

import pytest

from kiln.scaling import capacity, cooldown, duration
from kiln.scaling.members import member_definitions


@pytest.mark.parametrize(("current", "adjustment", "kind", "step", "expected"), [
    (2, 1, "change_in_capacity", None, 3),
    (2, -1, "ChangeInCapacity", None, 1),
    (2, 5, "exact_capacity", None, 5),
    (10, 15, "percent_change_in_capacity", None, 11),    # 1.5 members: truncated to 1
    (10, 25, "percent_change_in_capacity", None, 12),    # 2.5 -> 2
    (2, 10, "percent_change_in_capacity", None, 3),      # 0.2 of a member still adds one
    (2, -10, "percent_change_in_capacity", None, 1),     # and removes one
    (10, -15, "PercentChangeInCapacity", None, 9),       # -1.5 -> -1
    (10, 10, "percent_change_in_capacity", 3, 13),       # 1 member raised to the step of 3
    (10, -10, "percent_change_in_capacity", 3, 7),
    (4, 3, "change_in_capacity", None, 5),               # clamped to max 5
    (2, -4, "change_in_capacity", None, 1),              # clamped to min 1
    (2, 9, "exact_capacity", None, 5),
])
def test_new_capacity(current: int, adjustment: float, kind: str, step: int | None,
                      expected: int) -> None:
    assert capacity.new_capacity(current, adjustment, kind, minimum=1, maximum=5 if expected
                                 <= 5 else 100, min_adjustment_step=step) == expected


def test_unknown_adjustment_type() -> None:
    with pytest.raises(ValueError):
        capacity.new_capacity(1, 1, "bogus", minimum=0, maximum=3)


def test_cooldown_refuses_until_it_ends_then_allows() -> None:
    meta = cooldown.finished({}, cooldown=60, reason="ExactCapacity : 1", now=1000.0)
    assert meta["scaling_in_progress"] is False
    with pytest.raises(cooldown.ScalingRefused, match="due to cooldown, cooldown 60"):
        cooldown.check_allowed(meta, group="g", cooldown=60, now=1059.0, stale_after=3600)
    started = cooldown.check_allowed(meta, group="g", cooldown=60, now=1061.0,
                                     stale_after=3600)
    assert started["scaling_in_progress"] is True
    with pytest.raises(cooldown.ScalingRefused, match="due to scaling activity"):
        cooldown.check_allowed(started, group="g", cooldown=60, now=1062.0, stale_after=3600)


def test_a_flag_left_by_a_dead_process_expires() -> None:
    started = cooldown.check_allowed({}, group="g", cooldown=0, now=1000.0, stale_after=100)
    cooldown.check_allowed(started, group="g", cooldown=0, now=1101.0, stale_after=100)


def test_cooldown_end_never_moves_back_and_failures_keep_it() -> None:
    meta = cooldown.finished({}, cooldown=600, reason="a", now=1000.0)
    later = cooldown.finished(meta, cooldown=0, reason="b", now=1010.0)
    assert list(later["cooldown_end"]) == list(meta["cooldown_end"])
    failed = cooldown.finished(meta, cooldown=0, reason="c", now=5000.0, size_changed=False)
    assert failed["cooldown_end"] == meta["cooldown_end"]


def test_scale_down_drops_failed_then_oldest_and_rollouts_change_oldest_first() -> None:
    old = {"type": "A"}
    new = {"type": "B"}
    existing = [("failed", old), ("oldest", old), ("middle", old), ("newest", old)]
    names = iter(["n1", "n2"])
    assert [n for n, _ in member_definitions(existing, new, 2, 0, lambda: next(names))] == [
        "middle", "newest"]
    grown = member_definitions(existing[1:], new, 4, 0, lambda: next(names))
    assert grown[-1] == ("n1", new) and [d for _, d in grown[:3]] == [old, old, old]
    rolled = member_definitions(existing[1:], new, 3, 1, lambda: "x")
    assert rolled == [("oldest", new), ("middle", old), ("newest", old)]
    assert member_definitions(existing, new, 0, 0, lambda: "x") == []


def test_durations() -> None:
    assert duration.seconds("PT1H2M3S") == 3723
    assert duration.seconds("PT0S") == 0
    with pytest.raises(ValueError, match="PT#H#M#S"):
        duration.seconds("P1D")
