"""heat-cfntools' real ``cfn-push-stats``, pointed at a test's CloudWatch port.

The tool is installed from PyPI into ``~/.cache/kiln-test/cfn-push-stats-<hash>`` (pinned
below; a file lock makes concurrent workers wait for one installer) and run unchanged.
Two things in it need steering, both before anything leaves the process:

- It talks to ``<endpoint>:8003`` (port hard-coded) through boto 2, whose endpoint host
  comes from the boto config; the script points ``BOTO_CONFIG`` at a system path, but
  boto reads its config once, at import. The launcher imports boto first with a config
  of ours: the endpoint host is 127.0.0.1 and boto's HTTP proxy is the test's Kiln
  CloudWatch port, so every request (with ``Host: 127.0.0.1:8003``, as signed) reaches
  that port and nothing else.
- To tag metrics it fetches the instance's metadata with ``curl http://169.254.169.254/``
  (a remote API that cannot run here, and an address tests must never contact). A
  ``curl`` stand-in placed first on ``PATH`` fails at once, so the tool carries on
  with no tags, as it does on a server without the metadata service.

It logs to ``/var/log/cfn-push-stats.log`` (its own choice): without write access there
the tool cannot start, and the test is skipped with that reason.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

REQUIREMENTS = ("heat-cfntools==2.0.0", "boto==2.49.0", "psutil>=5.9", "six>=1.16")
CACHE = Path(os.environ.get("KILN_TEST_CACHE", Path.home() / ".cache" / "kiln-test"))
LAUNCHER = """\
import os, runpy, sys
os.environ["BOTO_CONFIG"] = sys.argv[1]
import boto  # reads BOTO_CONFIG now; the script's own override comes too late
script = sys.argv[2]
sys.argv = [script, *sys.argv[3:]]
runpy.run_path(script, run_name="__main__")
"""


def _key() -> str:
    text = "\n".join((*REQUIREMENTS, sys.version, LAUNCHER))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def install() -> Path:
    """The venv holding cfn-push-stats (installed once per machine and pin set)."""
    home = CACHE / f"cfn-push-stats-{_key()}"
    ready = home / "ready"
    with _locked(CACHE / f"cfn-push-stats-{_key()}.lock"):
        if not ready.exists():
            subprocess.run([sys.executable, "-m", "venv", str(home / "venv")], check=True)
            subprocess.run([str(home / "venv" / "bin" / "pip"), "install", "-q",
                            *REQUIREMENTS], check=True, timeout=600)
            (home / "launch.py").write_text(LAUNCHER)
            ready.write_text("ok\n")
    return home


def require() -> None:
    """Skip (or, with services required, fail) the calling test when the tool cannot
    run here: its log is not writable, or it could not be installed."""
    from tests.support.services import unavailable

    if not writable_log():
        unavailable("cfn-push-stats must write /var/log/cfn-push-stats.log")
    try:
        install()
    except (OSError, subprocess.SubprocessError) as exc:
        unavailable(f"heat-cfntools could not be installed: {exc}")


def writable_log() -> bool:
    log = Path("/var/log/cfn-push-stats.log")
    return os.access(log if log.exists() else log.parent, os.W_OK)


def push(workdir: Path, *, port: int, access: str, secret: str,
         args: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``cfn-push-stats <args>`` against the CloudWatch API on ``port``."""
    home = install()
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "boto.cfg"
    config.write_text("[Boto]\ndebug = 0\nnum_retries = 0\n"
                      "cloudwatch_region_name = RegionOne\n"
                      "cloudwatch_region_endpoint = 127.0.0.1\n"
                      f"proxy = 127.0.0.1\nproxy_port = {port}\n")
    creds = workdir / "cfn-credentials"
    creds.write_text(f"AWSAccessKeyId={access}\nAWSSecretKey={secret}\n")
    stubs = workdir / "stub-bin"
    stubs.mkdir(exist_ok=True)
    curl = stubs / "curl"
    curl.write_text("#!/bin/sh\necho 'no metadata service in tests' >&2\nexit 7\n")
    curl.chmod(0o755)
    env = {"PATH": f"{stubs}:{os.environ.get('PATH', '/usr/bin:/bin')}",
           "HOME": str(workdir), "LANG": "C.UTF-8"}
    venv = home / "venv" / "bin"
    return subprocess.run(
        [str(venv / "python"), str(home / "launch.py"), str(config),
         str(venv / "cfn-push-stats"), "--credential-file", str(creds), *args],
        capture_output=True, text=True, env=env, cwd=workdir, timeout=60, check=False)
