"""`kiln serve` as a process: starts fast on embedded defaults, answers with request ids,
logs JSON lines, and stops cleanly on SIGTERM."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from tests.support.fixtures import StartKiln
from tests.support.server import HTTP_TIMEOUT, KilnProcess

REQ_ID = re.compile(r"^req-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
STARTUP_BUDGET = 2.0


def test_starts_in_under_two_seconds(start_kiln_factory: StartKiln,
                                     record_property: Callable[[str, object], None]) -> None:
    # From exec to the first answer on GET / (the versions document, which Heat answers
    # with 300 Multiple Choices), on a fresh state directory. The CPU the process used
    # until then is the start-up work itself: it must fit the budget on every start. The
    # wall-clock time is that plus waiting for a CPU, so it is held to the budget (best of
    # three cold starts) only when the machine was quiet before and after the starts;
    # either way it is recorded in the test report.
    quiet_before = machine_is_quiet()
    walls, cpus = [], []
    for _ in range(3):
        proc = start_kiln_factory()
        walls.append(round(proc.startup_seconds, 3))
        cpus.append(round(proc.startup_cpu_seconds, 3))
        assert proc.stop() == 0
        if proc.startup_seconds < STARTUP_BUDGET:
            break
    record_property("startup_wall_seconds", walls)
    record_property("startup_cpu_seconds", cpus)
    assert max(cpus) < STARTUP_BUDGET, f"start-up CPU seconds: {cpus}"
    if quiet_before and machine_is_quiet():
        assert min(walls) < STARTUP_BUDGET, f"start-up wall-clock seconds: {walls}"


def cpu_pressure() -> float | None:
    """The share of the last 10 s in which some task waited for a CPU (Linux PSI,
    /proc/pressure/cpu ``some avg10``, in percent), None where the kernel has no PSI."""
    try:
        first = Path("/proc/pressure/cpu").read_text().splitlines()[0]
    except (OSError, IndexError):
        return None
    fields = dict(part.split("=", 1) for part in first.split()[1:])
    return float(fields["avg10"])


def machine_is_quiet() -> bool:
    """No more runnable tasks than CPUs. The one-minute load average lags a burst by tens
    of seconds (a CI suite starting its next module), so the last 10 s of CPU pressure
    must be low too where the kernel reports it."""
    pressure = cpu_pressure()
    return os.getloadavg()[0] <= (os.cpu_count() or 1) and (pressure is None or pressure < 20)


def test_embedded_defaults_create_sqlite_under_state_path(kiln_server: KilnProcess) -> None:
    database = kiln_server.workdir / "state" / "kiln.sqlite"
    assert database.is_file()
    with sqlite3.connect(database) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert {"stack", "resource", "event"} <= tables


def test_versions_document_and_request_id(kiln_server: KilnProcess) -> None:
    response = httpx.get(kiln_server.url + "/", timeout=HTTP_TIMEOUT)
    assert response.status_code == 300
    assert response.json()["versions"][0]["id"] == "v1.0"
    assert REQ_ID.match(response.headers["x-openstack-request-id"])


def test_every_response_has_its_own_request_id(kiln_server: KilnProcess) -> None:
    with httpx.Client(base_url=kiln_server.url, timeout=HTTP_TIMEOUT) as client:
        ids = [client.get("/v1/demo/stacks").headers["x-openstack-request-id"]
               for _ in range(3)]
        missing = client.get("/v1/demo/stacks/no-such-stack")
    assert all(REQ_ID.match(i) for i in ids)
    assert len(set(ids)) == 3
    assert missing.status_code == 404
    assert REQ_ID.match(missing.headers["x-openstack-request-id"])


def test_logs_are_json_lines_with_the_request_id(kiln_server: KilnProcess) -> None:
    response = httpx.get(kiln_server.endpoint("demo") + "/stacks", timeout=HTTP_TIMEOUT)
    request_id = response.headers["x-openstack-request-id"]
    # the access line is written after the response is sent, so it may not be there yet;
    # other records of the request can come first
    (entry,) = kiln_server.records_when_logged(
        lambda r: r.get("request_id") == request_id and r.get("logger") == "kiln.access",
        timeout=60)
    assert entry["method"] == "GET"
    assert entry["path"] == "/v1/demo/stacks"
    assert entry["status"] == response.status_code
    # one read of the log: every complete line parses (the server may be writing the
    # next one, which has no newline yet)
    complete = kiln_server.logs().split("\n")[:-1]
    for line in filter(str.strip, complete):
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        assert isinstance(record, dict), f"not a JSON object: {line!r}"


def test_sigterm_stops_cleanly_with_status_zero(start_kiln_factory: StartKiln) -> None:
    proc = start_kiln_factory()
    httpx.get(proc.url + "/", timeout=HTTP_TIMEOUT)
    started = time.monotonic()
    assert proc.stop(signal.SIGTERM) == 0
    # an idle server does not wait out graceful_shutdown_timeout (60 s by default); 30 s
    # leaves a loaded machine (load 15+ on 2 CPUs) room to run the shutdown itself
    assert time.monotonic() - started < 30
    messages = [r["message"] for r in proc.log_records()]
    assert "received SIGTERM, stopping" in messages
    assert "kiln serve stopped" in messages
    assert "Traceback" not in proc.logs()


def test_sigint_stops_cleanly_too(start_kiln_factory: StartKiln) -> None:
    proc = start_kiln_factory()
    assert proc.stop(signal.SIGINT) == 0


def test_restart_keeps_the_database(start_kiln_factory: StartKiln, tmp_path: Path) -> None:
    first = start_kiln_factory(workdir=tmp_path / "k")
    assert first.stop() == 0
    second = start_kiln_factory(workdir=tmp_path / "k")
    assert httpx.get(second.endpoint("demo") + "/stacks", timeout=HTTP_TIMEOUT).status_code == 200
    assert second.stop() == 0


def test_api_and_engine_processes_share_a_database(start_kiln_factory: StartKiln,
                                                   tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/shared.sqlite"
    options = {"database": {"connection": db}}
    engine = start_kiln_factory(command="engine", options=options)
    api = start_kiln_factory(command="api", options=options)
    response = httpx.get(api.endpoint("demo") + "/stacks", timeout=HTTP_TIMEOUT)
    assert response.status_code == 200
    assert response.json() == {"stacks": []}
    assert api.stop() == 0
    assert engine.stop() == 0
