"""Which members a scaling group's next child template holds (Heat 27's rules).

``existing`` lists the current members as ``(name, definition)``, failed ones first,
then oldest first (the order :meth:`NestedStackOps.members` gives). A group of ``size``
keeps the *last* ``size`` of them, so a scale-down removes failed members and then the
oldest. Of the kept ones, up to ``changes`` (less the members added) whose definition
differs from the new one get it, oldest first; new members get fresh short ids.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

Snippet = Mapping[str, Any]


def member_definitions(existing: Sequence[tuple[str, Snippet]], new: Snippet, size: int,
                       changes: int, new_name: Callable[[], str]
                       ) -> list[tuple[str, Snippet]]:
    kept = list(existing[max(len(existing) - size, 0):]) if size else []
    replace = changes - (size - len(kept))
    out: list[tuple[str, Snippet]] = []
    for name, old in kept:
        if old != new and replace > 0:
            replace -= 1
            out.append((name, new))
        else:
            out.append((name, old))
    taken = {name for name, _ in out}
    while len(out) < size:
        name = new_name()
        if name not in taken:
            taken.add(name)
            out.append((name, new))
    return out
