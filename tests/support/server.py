"""Start a real Kiln process for a test and stop it again.

The process is the installed ``kiln`` command, run exactly as an operator would run it:
a config file in a temporary directory (state_path, bind port, any extra options), logs
on stderr captured to a file. Readiness is observed, not assumed: the API process is
polled over HTTP with short, growing pauses until it answers (the engine-only process
until it logs that it runs), with an overall deadline, failing fast if the process exits.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

from tests.support.ports import free_port, listens_on

# httpx's default 5 s read timeout is shorter than a busy 2-core CI machine can take to
# answer; tests pass this explicitly so a slow reply is not mistaken for a failure.
HTTP_TIMEOUT = 60.0

#: a loaded CI machine (load 15-25 on 2 CPUs) has taken over 20 s to start a server
READY_DEADLINE = 90.0


def kiln_command() -> list[str]:
    """The ``kiln`` console script of the interpreter running the tests."""
    script = Path(sys.executable).parent / "kiln"
    return [str(script)] if script.exists() else [sys.executable, "-m", "kiln.cli"]


def clean_env() -> dict[str, str]:
    """The test's environment without OpenStack client settings that would leak in."""
    return {k: v for k, v in os.environ.items() if not k.startswith("OS_")}


def write_config(path: Path, sections: Mapping[str, Mapping[str, Any]]) -> Path:
    lines: list[str] = []
    for section, options in sections.items():
        lines.append(f"[{section}]")
        lines += [f"{key} = {value}" for key, value in options.items()]
        lines.append("")
    path.write_text("\n".join(lines))
    return path


def merge_sections(*parts: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    merged: dict[str, dict[str, Any]] = {}
    for part in parts:
        for section, options in part.items():
            merged.setdefault(section, {}).update(options)
    return merged


@dataclass
class KilnProcess:
    """A running ``kiln`` process and where to reach it."""

    proc: subprocess.Popen[bytes]
    workdir: Path
    config_file: Path
    stderr_path: Path
    port: int | None
    #: the CloudFormation API's port (``kiln serve``, ``kiln api-cfn``)
    cfn_port: int | None = None
    #: the CloudWatch API's port (``kiln serve``, ``kiln api-cloudwatch``)
    cloudwatch_port: int | None = None
    #: wall-clock seconds from exec to the first HTTP answer (or the engine's "running")
    startup_seconds: float = 0.0
    #: CPU seconds (user + system) the process had used by then: the start-up work itself,
    #: independent of how busy the machine is
    startup_cpu_seconds: float = 0.0
    _stderr: Any = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def cloudwatch_url(self) -> str:
        """The CloudWatch API's endpoint (boto3's ``endpoint_url``)."""
        return f"http://127.0.0.1:{self.cloudwatch_port}"

    @property
    def cfn_url(self) -> str:
        """The CloudFormation API's endpoint, as boto3 and the agents are given it."""
        return f"http://127.0.0.1:{self.cfn_port}/v1/"

    def endpoint(self, project: str = "demo") -> str:
        """The orchestration endpoint a client is given: ``<url>/v1/<project>``."""
        return f"{self.url}/v1/{project}"

    def logs(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def log_records(self) -> list[dict[str, Any]]:
        """The JSON log records written so far (non-JSON lines are skipped)."""
        records = []
        for line in self.logs().splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                records.append(record)
        return records

    def records_when_logged(self, predicate: Callable[[dict[str, Any]], bool],
                            timeout: float = 30.0) -> list[dict[str, Any]]:
        """The records matching ``predicate`` once at least one is written.

        An access line is written when its response ends; a streamed response ends when
        the server notices the client left, which can be after the client itself exited.
        """
        deadline = time.monotonic() + timeout
        delay = 0.01
        while True:
            found = [r for r in self.log_records() if predicate(r)]
            if found or time.monotonic() > deadline:
                return found
            time.sleep(delay)  # log poll with backoff, bounded by the deadline
            delay = min(delay * 2, 0.2)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        """Send ``sig`` and wait for the exit status (killing it if it will not stop)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError(
                    f"kiln did not stop within {timeout}s of signal {sig}:\n{self.logs()}"
                ) from None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        return self.proc.returncode


class PortTaken(AssertionError):
    """The server could not listen: another process took a port between ``free_port``
    choosing it and the server binding it (any process on the machine can be handed the
    same free port in that window, which on a loaded machine lasts seconds)."""


def _exited_before_ready(proc: KilnProcess) -> AssertionError:
    logs = proc.logs()
    kind = PortTaken if "address already in use" in logs else AssertionError
    return kind(f"kiln exited with {proc.proc.returncode} before it was ready:\n{logs}")


def _listens_on(proc: KilnProcess, port: int) -> bool:
    return listens_on(proc.proc.pid, port)


def _wait_http(proc: KilnProcess, deadline: float) -> None:
    delay = 0.01
    assert proc.port is not None
    with httpx.Client(timeout=2.0) as client:
        while True:
            if proc.proc.poll() is not None:
                raise _exited_before_ready(proc)
            try:
                client.get(proc.url + "/")
                if _listens_on(proc, proc.port):
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                proc.stop(signal.SIGKILL)
                raise AssertionError("kiln was not ready in time:\n"
                                     f"{proc.logs()}")
            time.sleep(delay)  # readiness poll with backoff, bounded by the deadline
            delay = min(delay * 2, 0.2)


def _wait_log(proc: KilnProcess, needle: str, deadline: float) -> None:
    delay = 0.01
    while needle not in proc.logs():
        if proc.proc.poll() is not None:
            raise _exited_before_ready(proc)
        if time.monotonic() > deadline:
            proc.stop(signal.SIGKILL)
            raise AssertionError(f"kiln did not log {needle!r} within {READY_DEADLINE}s:\n"
                                 f"{proc.logs()}")
        time.sleep(delay)  # readiness poll with backoff, bounded by the deadline
        delay = min(delay * 2, 0.2)


def start_kiln(workdir: Path, *, command: str = "serve",
               options: Mapping[str, Mapping[str, Any]] | None = None,
               port: int | None = None, wait: bool = True,
               launcher: Sequence[str] | None = None,
               ready_deadline: float = READY_DEADLINE,
               args: Sequence[str] = ()) -> KilnProcess:
    """Start ``kiln <command>`` with a fresh config in ``workdir``; return once it is ready.

    ``options`` are extra config sections (``{"DEFAULT": {"max_stacks_per_tenant": 3}}``).
    The default state_path is ``workdir/state`` (SQLite there unless ``[database]
    connection`` is given). ``args`` follow ``--config-file`` on the command line
    (``kiln serve --no-cfn``). ``launcher`` replaces the ``kiln`` command (a wrapper taking
    the same arguments, e.g. bench/traced_serve.py).

    A port taken by another process before the server bound it (``PortTaken``) is a race
    of the test machine, not of Kiln: the start is repeated on newly chosen ports (the
    failed start's log is kept beside, as ``kiln-<command>.log.port-taken-<n>``).
    """
    for attempt in range(1, PORT_ATTEMPTS + 1):
        try:
            return _start_once(workdir, command=command, options=options, port=port,
                               wait=wait, launcher=launcher, ready_deadline=ready_deadline,
                               args=args)
        except PortTaken:
            if attempt == PORT_ATTEMPTS:
                raise
            log = workdir / f"kiln-{command}.log"
            log.rename(log.with_name(f"{log.name}.port-taken-{attempt}"))
    raise AssertionError("unreachable")


#: starts tried when a port chosen for the server is taken before it binds it
PORT_ATTEMPTS = 3
#: the auth_encryption_key of servers given a ``[database] connection`` (several of them
#: may share it) unless the test sets its own
SHARED_DATABASE_KEY = "kiln-tests-shared-database-key-0123456789"


def _start_once(workdir: Path, *, command: str,
                options: Mapping[str, Mapping[str, Any]] | None, port: int | None,
                wait: bool, launcher: Sequence[str] | None,
                ready_deadline: float, args: Sequence[str] = ()) -> KilnProcess:
    workdir.mkdir(parents=True, exist_ok=True)
    serves_http = command in ("serve", "api", "api-cfn", "api-cloudwatch")
    # every listener on a port of its own: the defaults (8004, 8000) would collide with
    # any other server on the machine
    if serves_http and port is None:
        port = free_port()
    cfn_port = port if command == "api-cfn" else free_port()
    base: dict[str, dict[str, Any]] = {"DEFAULT": {"state_path": workdir / "state"}}
    if command in ("serve", "api"):
        base["heat_api"] = {"bind_host": "127.0.0.1", "bind_port": port}
    base["heat_api_cfn"] = {"bind_host": "127.0.0.1", "bind_port": cfn_port}
    watch_port = port if command == "api-cloudwatch" else free_port()
    base["heat_api_cloudwatch"] = {"bind_host": "127.0.0.1", "bind_port": watch_port}
    if (options or {}).get("database", {}).get("connection"):
        # processes sharing a database must share the key (docs/security.md); each test
        # process has a state_path of its own, where each would generate a different one
        base["DEFAULT"]["auth_encryption_key"] = SHARED_DATABASE_KEY
    config = write_config(workdir / "kiln.conf", merge_sections(base, options or {}))
    stderr_path = workdir / f"kiln-{command}.log"
    stderr = stderr_path.open("ab")
    started = time.monotonic()
    proc = subprocess.Popen(
        [*(launcher or kiln_command()), command, "--config-file", str(config), *args],
        stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr, env=clean_env(),
        cwd=workdir)
    kiln = KilnProcess(proc=proc, workdir=workdir, config_file=config,
                       stderr_path=stderr_path, port=port if serves_http else None,
                       cfn_port=cfn_port if command in ("serve", "api-cfn") else None,
                       cloudwatch_port=(watch_port if command in ("serve", "api-cloudwatch")
                                        else None),
                       _stderr=stderr)
    if wait:
        deadline = started + ready_deadline
        try:
            if serves_http:
                _wait_http(kiln, deadline)
            else:
                _wait_log(kiln, "kiln engine running", deadline)
        except PortTaken:
            kiln.stop()  # it has exited; this closes its log
            raise
        kiln.startup_seconds = time.monotonic() - started
        times = psutil.Process(proc.pid).cpu_times()
        kiln.startup_cpu_seconds = times.user + times.system
    return kiln
