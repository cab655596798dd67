"""What the change set and history tests share: waiting for a stack's action to end
(python-heatclient) and running ``kiln stack`` as a subprocess."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

from tests.support.server import KilnProcess, clean_env, kiln_command

TIMEOUT = 60


def settled(heat: Any, name: str) -> Any:
    """The stack once its action is over (bounded by ``TIMEOUT``)."""
    deadline = time.monotonic() + TIMEOUT
    delay = 0.05
    while True:
        found = heat.stacks.get(name)
        if not found.stack_status.endswith("IN_PROGRESS"):
            return found
        assert time.monotonic() < deadline, found.stack_status
        time.sleep(delay)  # status poll with backoff, bounded by the deadline
        delay = min(delay * 2, 0.5)


def cli(kiln: KilnProcess, workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``kiln stack ARGS`` against the server, as a user runs it."""
    env = {**clean_env(), "OS_ENDPOINT": kiln.endpoint("demo"), "NO_COLOR": "1"}
    return subprocess.run(
        [*kiln_command(), "stack", *args],
        capture_output=True,
        text=True,
        cwd=workdir,
        env=env,
        timeout=TIMEOUT,
        check=False,
    )


def ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, (result.stdout, result.stderr)
    return result
