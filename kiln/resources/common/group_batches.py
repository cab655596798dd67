"""The arithmetic of a ResourceGroup's batched create and rolling update (pure).

Heat 27 runs both as a series of updates of the group's child stack, each step a
complete child template: a step has a *capacity* (how many members the child holds
during it) and a number of *updates* (how many members, new or existing, get the new
definition in it). ``min_in_service`` can make the capacity exceed the target count for
a while: new members are added first and the surplus is removed in the last steps.
Existing members are given the new definition from the highest index down; members the
group no longer wants go first; surplus members are never changed. These rules were
read from Heat's source and checked against the live Heat 27 (see
tests/unit/resources/test_resource_group_batches.py for the observed cases).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, NamedTuple

Snippet = Mapping[str, Any]

#: Heat's reason (a ValueError) when the pauses alone would outlast the stack's timeout
TIMEOUT_MESSAGE = "The current update policy will result in stack update timeout."


class Step(NamedTuple):
    capacity: int   # members in the child during this step
    updates: int    # members given the new definition in this step (created or changed)


def batch_steps(target: int, current: int, batch_size: int,
                min_in_service: int) -> list[Step]:
    """The steps that take a group of ``current`` members to ``target`` members that all
    have the new definition, at most ``batch_size`` at a time, keeping at least
    ``min_in_service`` (bounded by both sizes) members untouched meanwhile. A batched
    create is the same walk from ``current=0`` with ``min_in_service=0``."""
    steps: list[Step] = []
    done = 0   # members known to have the new definition
    while not (done >= current == target):
        keep = min(min_in_service, target, current)
        size = min(batch_size, max(target - done, 0))
        capacity = size + max(min(current, target - size), keep)
        steps.append(Step(capacity, size))
        # members above both sizes are surplus, to be removed: they do not count as done
        done += size - max(capacity - max(current, target), 0)
        current = capacity
    return steps


def step_timeout(limit: float, steps: int, pause: float) -> int:
    """Minutes each step's child update may take: the stack's ``limit`` (seconds) less
    every pause between steps (none after the last). Raises ValueError with Heat's
    message when the pauses alone reach the limit."""
    pauses = pause * max(steps - 1, 0)
    if pauses >= limit:
        raise ValueError(TIMEOUT_MESSAGE)
    return math.ceil((limit - pauses) / 60)


def member_names(count: int, skipped: Collection[str]) -> list[str]:
    """The first ``count`` names "0", "1", ... that the removal policies did not take."""
    names = (str(i) for i in itertools.count())
    return list(itertools.islice((n for n in names if n not in skipped), count))


def step_members(existing: Sequence[tuple[str, Snippet]], names: Sequence[str], *,
                 target: int, step: Step,
                 new: Callable[[str], Snippet]) -> list[tuple[str, Snippet]]:
    """The child's members during ``step``, each with its definition.

    ``existing``: the child's current members that count (not failed, not removed by a
    policy) with their definitions, in the child's listing order; ``names``: the first
    ``step.capacity`` usable names; ``new(name)``: the new definition of a member.
    """
    position = {name: i for i, name in enumerate(names)}

    def priority(item: tuple[str, Snippet]) -> int:
        index = position.get(item[0])
        if index is None:
            return 0                       # not wanted at this capacity: dropped first
        if index < target:
            return target - index          # the highest index is changed first
        return step.capacity               # surplus kept in service: never changed

    ordered = sorted(existing, key=priority)
    kept = ordered[max(len(ordered) - step.capacity, 0):]
    taken = {name for name, _ in existing}
    fresh = (name for name in names if name not in taken)
    changes = step.updates - (step.capacity - len(kept))
    members: list[tuple[str, Snippet]] = []
    for i in range(step.capacity):
        if i >= len(kept):
            name = next(fresh)
            members.append((name, new(name)))
            continue
        name, old = kept[i]
        wanted = new(name)
        if changes > 0 and old != wanted:
            changes -= 1
            members.append((name, wanted))
        else:
            members.append((name, old))
    return members
