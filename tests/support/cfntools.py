"""heat-cfntools (cfn-signal, cfn-get-metadata, cfn-hup, cfn-init) for the tests.

The PyPI package (pinned below, with boto 2.49, which it needs and which runs on
Python 3.11) goes into its own venv, cached per machine under
``~/.cache/kiln-test/cfntools-<hash>`` (the hash covers the requirements and the Python
version) and built under a file lock so concurrent workers wait for one installer.

The tools hard-code system paths (/var/lib/heat-cfntools, /etc/cfn, /var/log/cfn-*.log,
/var/cache/heat-cfntools) and so need root. ``SystemPaths`` serialises the tests that use
them on a machine-wide lock and removes, at the end, every one of those paths that did
not exist before. cfn-signal is always run with ``-i`` (without it, it asks the metadata
service at 169.254.169.254 for an instance id).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from tests.support.services import unavailable

REQUIREMENTS = ("heat-cfntools==2.0.0", "boto==2.49.0")
INSTALL_TIMEOUT = 600.0
#: every path the tools write, as the tools spell them
SYSTEM_PATHS = (Path("/var/lib/heat-cfntools"), Path("/etc/cfn"),
                Path("/var/cache/heat-cfntools"), Path("/var/log/cfn-signal.log"),
                Path("/var/log/cfn-get-metadata.log"), Path("/var/log/cfn-hup.log"),
                Path("/var/log/cfn-init.log"), Path("/var/log/cfn-push-stats.log"))
LOCK_FILE = Path("/tmp/kiln-test-heat-cfntools.lock")


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kiln-test"


def install_key() -> str:
    text = "\n".join([*REQUIREMENTS, f"py{sys.version_info[0]}.{sys.version_info[1]}"])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # waits for the other holder; released on close
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def venv() -> Path:
    """The cached venv with heat-cfntools, installed first if needed; skips (fails under
    KILN_REQUIRE_SERVICES=1) with the reason when it cannot be installed."""
    root = cache_root() / f"cfntools-{install_key()}"
    ready = root / "ready"
    if ready.exists():
        return root / "venv"
    with _locked(cache_root() / f"cfntools-{install_key()}.lock"):
        if ready.exists():
            return root / "venv"
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        log = root / "install.log"
        try:
            with log.open("w") as out:
                subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True,
                               stdout=out, stderr=out, timeout=120)
                subprocess.run([str(root / "venv" / "bin" / "pip"), "install", "-q",
                                *REQUIREMENTS], check=True, stdout=out, stderr=out,
                               timeout=INSTALL_TIMEOUT)
        except (subprocess.SubprocessError, OSError):
            unavailable(f"heat-cfntools could not be installed (see {log})")
        ready.write_text("ok\n")
    return root / "venv"


def command(name: str) -> list[str]:
    return [str(venv() / "bin" / name)]


def run(name: str, *args: str, timeout: float = 60.0,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run one of the tools; a failure is reported with its output, not raised."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
    full_env["PYTHONWARNINGS"] = "ignore"
    full_env.update(env or {})
    return subprocess.run([*command(name), *args], capture_output=True, text=True,
                          timeout=timeout, env=full_env, check=False)


def failure(result: subprocess.CompletedProcess[str], name: str) -> str:
    """What a tool printed and logged, for an assertion message: its own log
    (/var/log/<name>.log) is read only if the tool got as far as writing it."""
    log = Path(f"/var/log/{name}.log")
    logged = log.read_text() if log.exists() else f"({log} was not written)"
    return (f"{name} exited {result.returncode}\nstdout: {result.stdout}\n"
            f"stderr: {result.stderr}\nlog: {logged}")


class SystemPaths:
    """Exclusive use of the tools' system paths, restored afterwards."""

    def __init__(self) -> None:
        self.created: list[Path] = []

    def write(self, path: Path, text: str) -> None:
        """Write a file under one of the tools' directories (created if absent)."""
        for parent in reversed(path.parents):
            if str(parent) in ("/", "/var", "/etc", "/var/lib", "/var/cache", "/var/log"):
                continue
            if not parent.exists():
                parent.mkdir()
        path.write_text(text)


@contextlib.contextmanager
def system_paths() -> Iterator[SystemPaths]:
    """Hold the machine-wide lock on the tools' paths; skip when not root."""
    if os.geteuid() != 0:
        unavailable("heat-cfntools writes /var/lib/heat-cfntools, /etc/cfn and /var/log: "
                    "these tests need root")
    venv()
    with _locked(LOCK_FILE):
        existed = {p for p in SYSTEM_PATHS if p.exists()}
        holder = SystemPaths()
        try:
            yield holder
        finally:
            for path in SYSTEM_PATHS:
                if path in existed:
                    continue
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                elif path.exists():
                    path.unlink()


def paths_in_use() -> Sequence[Path]:
    return [p for p in SYSTEM_PATHS if p.exists()]
