"""How a scaling adjustment becomes a group size, with Heat 27's rounding and bounds.

The HOT policy spells the adjustment types in snake case, the AWS one in camel case;
both mean the same three rules. A percentage change smaller than one member still
moves the group by one (rounded away from zero); a larger one is truncated towards
zero; ``min_adjustment_step`` then raises a percentage step to at least that many
members. The result is clamped to ``[minimum, maximum]``.
"""

from __future__ import annotations

import math

CHANGE_IN_CAPACITY = "change_in_capacity"
EXACT_CAPACITY = "exact_capacity"
PERCENT_CHANGE_IN_CAPACITY = "percent_change_in_capacity"
ADJUSTMENT_TYPES = (CHANGE_IN_CAPACITY, EXACT_CAPACITY, PERCENT_CHANGE_IN_CAPACITY)

CFN_CHANGE_IN_CAPACITY = "ChangeInCapacity"
CFN_EXACT_CAPACITY = "ExactCapacity"
CFN_PERCENT_CHANGE_IN_CAPACITY = "PercentChangeInCapacity"
CFN_ADJUSTMENT_TYPES = (CFN_CHANGE_IN_CAPACITY, CFN_EXACT_CAPACITY,
                        CFN_PERCENT_CHANGE_IN_CAPACITY)

_CANONICAL = {
    CFN_CHANGE_IN_CAPACITY: CHANGE_IN_CAPACITY,
    CFN_EXACT_CAPACITY: EXACT_CAPACITY,
    CFN_PERCENT_CHANGE_IN_CAPACITY: PERCENT_CHANGE_IN_CAPACITY,
}


def canonical(adjustment_type: str) -> str:
    """The HOT spelling of either spelling of an adjustment type."""
    return _CANONICAL.get(adjustment_type, adjustment_type)


def percent_step(current: int, percent: float) -> int:
    """Members a percentage change adds (or removes, when negative)."""
    delta = current * percent / 100.0
    if abs(delta) < 1.0:
        return int(math.ceil(delta) if delta > 0 else math.floor(delta))
    return int(math.floor(delta) if delta > 0 else math.ceil(delta))


def new_capacity(current: int, adjustment: float, adjustment_type: str, *,
                 minimum: int, maximum: int, min_adjustment_step: int | None = None) -> int:
    """The group's size after the adjustment, kept within its bounds."""
    kind = canonical(adjustment_type)
    if kind == CHANGE_IN_CAPACITY:
        size = current + int(adjustment)
    elif kind == EXACT_CAPACITY:
        size = int(adjustment)
    elif kind == PERCENT_CHANGE_IN_CAPACITY:
        step = percent_step(current, adjustment)
        if min_adjustment_step and min_adjustment_step > abs(step):
            step = min_adjustment_step if step > 0 else -min_adjustment_step
        size = current + step
    else:
        raise ValueError(f"Unknown adjustment type {adjustment_type}")
    return max(min(size, maximum), minimum)
