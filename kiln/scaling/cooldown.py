"""When a group may scale again, kept in the group's metadata as Heat keeps it.

A group's metadata (visible through ``stack resource metadata``) holds
``scaling_in_progress`` and ``cooldown_end: {<ISO time>: <reason>}``. A scaling request
is refused while another is in progress or before the cooldown ends; each completed
change of size moves ``cooldown_end`` to now + cooldown (never earlier than it was).
Heat writes naive UTC ISO timestamps, which compare correctly as strings.

Kiln adds one rule Heat lacks: ``scaling_in_progress`` records when it was set
(``scaling_started``), so a flag left by a process killed mid-scale stops blocking
the group once the stack's action timeout has passed since.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

IN_PROGRESS = "scaling_in_progress"
STARTED = "scaling_started"
COOLDOWN_END = "cooldown_end"


class ScalingRefused(Exception):
    """The group cannot scale now; the message says why (Heat's NoActionRequired)."""

    def __init__(self, group: str, reason: str) -> None:
        super().__init__(f"The resource {group} could not perform scaling action: {reason}")


def iso(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).replace(tzinfo=None).isoformat()


def sanitize(cooldown: float | None) -> float:
    return 0.0 if cooldown is None else max(0.0, float(cooldown))


def check_allowed(metadata: Mapping[str, Any], *, group: str, cooldown: float | None,
                  now: float, stale_after: float) -> dict[str, Any]:
    """Raise :class:`ScalingRefused`, or return the metadata to store before scaling
    (``scaling_in_progress`` set)."""
    started = metadata.get(STARTED)
    stale = isinstance(started, (int, float)) and now - float(started) > stale_after
    if metadata.get(IN_PROGRESS) and not stale:
        raise ScalingRefused(group, "due to scaling activity")
    ends = metadata.get(COOLDOWN_END)
    if isinstance(ends, Mapping) and ends and iso(now) < str(next(iter(ends))):
        raise ScalingRefused(group, f"due to cooldown, cooldown {_show(cooldown)}")
    out = dict(metadata)
    out[IN_PROGRESS] = True
    out[STARTED] = now
    return out


def finished(metadata: Mapping[str, Any], *, cooldown: float | None, reason: str,
             now: float, size_changed: bool = True) -> dict[str, Any]:
    """The metadata after a scaling action (or a create/update) ended."""
    out = dict(metadata)
    if size_changed:
        end = iso(now + sanitize(cooldown))
        ends = out.get(COOLDOWN_END)
        if isinstance(ends, Mapping) and ends:
            end = max(str(next(iter(ends))), end)
        out[COOLDOWN_END] = {end: reason}
    out[IN_PROGRESS] = False
    out.pop(STARTED, None)
    return out


def _show(cooldown: float | None) -> str:
    if cooldown is None:
        return "None"
    return str(int(cooldown)) if float(cooldown).is_integer() else str(cooldown)
