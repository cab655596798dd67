"""Install the test cloud's services into their cached venv (once per install key).

About 2-4 minutes from nothing (pip's cache makes later builds of a changed key quicker),
a few milliseconds when the venv for this key is already complete. A lock file keeps two
test sessions from building the same venv at once; a marker written last says the venv
is complete, so an interrupted install is redone rather than trusted.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.cloud.layout import HERE, PACKAGES, CloudLayout


class CloudSetupError(RuntimeError):
    """The cloud could not be installed, prepared or started (the message says why)."""


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on *path* (created if missing), released on exit."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def run_logged(cmd: list[str], log: Path, *, what: str, env: dict[str, str] | None = None,
               timeout: float = 1200) -> None:
    """Run *cmd* with its output appended to *log*; a failure names *what* and shows
    the log's tail."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        out.write(f"\n$ {' '.join(cmd)}\n".encode())
        out.flush()
        result = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env,
                                timeout=timeout, check=False)
    if result.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-25:])
        raise CloudSetupError(f"{what} failed (exit {result.returncode}); {log}:\n{tail}")


def ensure_installed(layout: CloudLayout) -> float:
    """Build the venv for *layout*'s key unless it is complete; returns seconds spent."""
    marker = layout.home / ".installed"
    if marker.exists():
        return 0.0
    started = time.monotonic()
    with file_lock(layout.home / ".install.lock"):
        if marker.exists():
            return time.monotonic() - started
        if layout.venv.exists():
            shutil.rmtree(layout.venv)
        log = layout.home / "install.log"
        run_logged([sys.executable, "-m", "venv", str(layout.venv)], log, what="venv")
        pip = [str(layout.bin / "python"), "-m", "pip", "--disable-pip-version-check"]
        run_logged([*pip, "install", "-q", "-U", "pip", "setuptools", "wheel"], log,
                   what="pip upgrade")
        run_logged([*pip, "install", "-q", "-c", str(HERE / "pins.txt"), *PACKAGES], log,
                   what="pip install of the OpenStack services")
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(HERE / "ml2_agentless", Path(tmp) / "src")
            run_logged([*pip, "install", "-q", "--no-deps", "--no-build-isolation",
                        str(Path(tmp) / "src")], log, what="ML2 driver install")
        marker.write_text(f"{time.time()}\n")
    return time.monotonic() - started
