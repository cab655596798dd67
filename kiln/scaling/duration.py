"""ISO 8601 durations as the AWS update policies write them (``PT1H30M5S``)."""

from __future__ import annotations

import re

_DURATION = re.compile(r"PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?$")


def seconds(duration: str) -> int:
    """Seconds in ``PT#H#M#S``; ValueError (Heat's message) for anything else."""
    found = _DURATION.match(str(duration))
    if not found:
        raise ValueError("Only ISO 8601 duration format of the form PT#H#M#S is supported.")
    hours, minutes, secs = (int(g) if g else 0 for g in found.groups())
    return hours * 3600 + minutes * 60 + secs
