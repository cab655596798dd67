"""Where the heatclient-driven API tests point.

By default at the module's real ``kiln serve``. With ``KILN_API_COMPARE_URL`` set (e.g.
``http://127.0.0.1:8104/v1/admin``) the same tests run against a real Heat instead, which is
how their expected values were checked against Heat's own behaviour.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

COMPARE_URL = os.environ.get("KILN_API_COMPARE_URL")
DEADLINE = 60.0


def wait_for(fetch: Callable[[], Any], done: Callable[[Any], bool],
             what: str, deadline: float = DEADLINE) -> Any:
    """Observe ``fetch()`` until ``done`` holds, with growing pauses, up to ``deadline``."""
    end = time.monotonic() + deadline
    delay = 0.01
    while True:
        value = fetch()
        if done(value):
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}; last value: {value!r}")
        time.sleep(delay)  # polling a remote state; bounded by the deadline
        delay = min(delay * 2, 0.25)


def settled(hc: Any, stack_id: str) -> Any:
    """The stack once its current action is no longer IN_PROGRESS."""
    return wait_for(lambda: hc.stacks.get(stack_id),
                    lambda s: not s.stack_status.endswith("IN_PROGRESS"),
                    f"stack {stack_id} to settle")
