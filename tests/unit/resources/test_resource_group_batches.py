"""The batching arithmetic of ResourceGroup's update_policy.

Every expected value is what the live Heat 27 did with the same group (TestResource
members, value "one" -> "two"), read from its child stack's events: one child UPDATE per
step, which members it created, changed and deleted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from kiln.resources.common.group_batches import (
    TIMEOUT_MESSAGE,
    Step,
    batch_steps,
    member_names,
    step_members,
    step_timeout,
)

OLD = {"type": "OS::Heat::TestResource", "properties": {"value": "one"}}
NEW = {"type": "OS::Heat::TestResource", "properties": {"value": "two"}}


def new(name: str) -> Mapping[str, Any]:
    return NEW


def replay(count: int, target: int, batch: int, min_in_service: int,
           ) -> list[tuple[set[str], set[str], set[str]]]:
    """Run every step over a child of ``count`` old members: per step the members
    created, changed and removed (what the child's events show)."""
    child: dict[str, Mapping[str, Any]] = {str(i): OLD for i in range(count)}
    seen = []
    for step in batch_steps(target, count, batch, min_in_service):
        members = dict(step_members(list(child.items()), member_names(step.capacity, ()),
                                    target=target, step=step, new=new))
        seen.append(({n for n in members if n not in child},
                     {n for n in members if n in child and members[n] != child[n]},
                     {n for n in child if n not in members}))
        child = members
    assert all(d == NEW for d in child.values())   # every member ends up changed
    assert sorted(child, key=int) == [str(i) for i in range(target)]
    return seen


@pytest.mark.parametrize(("sizes", "steps"), [
    # batch_create: count 4, max_batch_size 2 -> two child updates of two new members
    ((4, 0, 2, 0), [(2, 2), (4, 2)]),
    # rolling_update: count 3, rolling_update {} (max_batch_size defaults to 1)
    ((3, 3, 1, 0), [(3, 1), (3, 1), (3, 1)]),
    # count 4, max_batch_size 2, min_in_service 3: capacity 5, 5, 4
    ((4, 4, 2, 3), [(5, 2), (5, 2), (4, 1)]),
    # count 2, min_in_service 10: bounded by the size; a last step only removes
    ((2, 2, 1, 10), [(3, 1), (3, 1), (3, 1), (2, 0)]),
    # count 2 -> 4 in the same update as the change
    ((4, 2, 1, 0), [(3, 1), (4, 1), (4, 1), (4, 1)]),
    # count 4 -> 2 in the same update as the change
    ((2, 4, 1, 0), [(2, 1), (2, 1)]),
])
def test_steps_match_heat(sizes: tuple[int, int, int, int],
                          steps: list[tuple[int, int]]) -> None:
    target, current, batch, min_in_service = sizes
    assert batch_steps(target, current, batch, min_in_service) == [Step(*s) for s in steps]


def test_a_batch_as_big_as_the_group_is_one_step() -> None:
    assert batch_steps(3, 3, 5, 0) == [Step(3, 3)]
    assert batch_steps(3, 0, 5, 0) == [Step(3, 3)]


def test_min_in_service_creates_first_and_removes_the_surplus_last() -> None:
    assert replay(4, 4, 2, 3) == [({"4"}, {"3"}, set()),
                                  (set(), {"2", "1"}, set()),
                                  (set(), {"0"}, {"4"})]
    assert replay(2, 2, 1, 10) == [({"2"}, set(), set()), (set(), {"1"}, set()),
                                   (set(), {"0"}, set()), (set(), set(), {"2"})]


def test_highest_index_changes_first() -> None:
    assert replay(3, 3, 1, 0) == [(set(), {"2"}, set()), (set(), {"1"}, set()),
                                  (set(), {"0"}, set())]


def test_growing_adds_new_members_before_changing_old_ones() -> None:
    assert replay(2, 4, 1, 0) == [({"2"}, set(), set()), ({"3"}, set(), set()),
                                  (set(), {"1"}, set()), (set(), {"0"}, set())]


def test_shrinking_drops_the_highest_members_in_the_first_step() -> None:
    assert replay(4, 2, 1, 0) == [(set(), {"1"}, {"2", "3"}), (set(), {"0"}, set())]


def test_removed_names_are_skipped() -> None:
    assert member_names(3, {"0", "2"}) == ["1", "3", "4"]
    assert member_names(0, ()) == []


def test_pauses_count_against_the_stack_timeout() -> None:
    # Heat 27, timeout_mins 1: three batches with pause_time 30 fail the action
    with pytest.raises(ValueError, match=TIMEOUT_MESSAGE):
        step_timeout(60, 3, 30)
    # each child update gets what the pauses leave, in whole minutes (rounded up)
    assert step_timeout(60, 3, 29) == 1
    assert step_timeout(3600, 3, 600) == 40
    # the last batch is followed by no pause
    assert step_timeout(60, 1, 3600) == 1
