"""The real clients users drive Heat with: the ``openstack`` CLI and heatclient's API.

Both are pointed at Kiln the way a user without Keystone would: auth type ``none`` and the
endpoint ``<url>/v1/<project>``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.server import clean_env

CLI_TIMEOUT = 120.0


def openstack_command() -> list[str]:
    script = Path(sys.executable).parent / "openstack"
    return [str(script)] if script.exists() else [sys.executable, "-m", "openstackclient.shell"]


class OpenStackCLI:
    """Runs ``openstack --os-auth-type none --os-endpoint <endpoint> ...``."""

    def __init__(self, endpoint: str, cwd: Path | None = None) -> None:
        self.endpoint = endpoint
        self.cwd = cwd

    def run(self, *args: str, check: bool = True,
            timeout: float = CLI_TIMEOUT) -> subprocess.CompletedProcess[str]:
        cmd = [*openstack_command(), "--os-auth-type", "none", "--os-endpoint", self.endpoint,
               *args]
        result = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, env=clean_env(),
            cwd=self.cwd, check=False)
        if check and result.returncode != 0:
            raise AssertionError(
                f"`openstack {' '.join(args)}` exited {result.returncode}\n"
                f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}")
        return result

    def json(self, *args: str) -> Any:
        """Run a command with ``-f json`` and return the parsed output."""
        return json.loads(self.run(*args, "-f", "json").stdout)


def heat_client(endpoint: str) -> Any:
    """python-heatclient's v1 Client on a keystoneauth session without authentication."""
    from heatclient import client as heat
    from keystoneauth1 import session
    from keystoneauth1.noauth import NoAuth

    sess = session.Session(auth=NoAuth(endpoint=endpoint))
    return heat.Client("1", session=sess, endpoint_override=endpoint)


def wait_for_stack_status(heat: Any, stack: str, *, timeout: float = 60.0) -> Any:
    """Poll (short, growing pauses; bounded) until the stack's action is no longer
    IN_PROGRESS, as `openstack stack create --wait` does; return the stack."""
    import time

    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        current = heat.stacks.get(stack)
        if not current.stack_status.endswith("_IN_PROGRESS"):
            return current
        if time.monotonic() > deadline:
            raise AssertionError(f"stack {stack} still {current.stack_status} after {timeout}s")
        time.sleep(delay)  # status poll with backoff, bounded by the deadline
        delay = min(delay * 2, 0.5)
