"""Several processes of one kind (kiln.workers), as Heat's operators configure them:
``[heat_api] workers`` and ``[DEFAULT] num_engine_workers``. Real ``kiln`` processes on a
shared database (a SQLite file, PostgreSQL): every child answers, a killed child is
replaced, SIGTERM stops them all with status 0, and the configurations that would lose
requests are refused."""

from __future__ import annotations

import http.client
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from tests.support.fixtures import StartKiln
from tests.support.server import (
    HTTP_TIMEOUT,
    KilnProcess,
    clean_env,
    kiln_command,
    write_config,
)

#: set only to allow several API processes: nothing here sends to the broker
BROKER = "rabbit://guest:guest@127.0.0.1:5672/"


def children(proc: KilnProcess) -> list[int]:
    return sorted(c.pid for c in psutil.Process(proc.proc.pid).children())


def wait_until(predicate: Any, what: str, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(delay)  # poll with backoff, bounded by the deadline
        delay = min(delay * 2, 0.5)


def answering_pids(proc: KilnProcess, want: set[int], rounds: int = 20) -> set[int]:
    """The pids that answered requests, sent 8 at a time on new connections until every
    pid in ``want`` answered (or ``rounds`` batches were sent): the access log record of
    each request (by its x-openstack-request-id) says which process answered it."""
    seen: set[int] = set()
    url = proc.endpoint("demo") + "/stacks"

    def one(_: int) -> str:
        answer = httpx.get(url, timeout=HTTP_TIMEOUT)  # a new connection each time
        assert answer.status_code == 200, answer.text
        return answer.headers["x-openstack-request-id"]

    with ThreadPoolExecutor(8) as pool:
        for _ in range(rounds):
            ids = set(pool.map(one, range(8)))
            records = proc.records_when_logged(
                lambda r, ids=ids: r.get("request_id") in ids
                and r.get("logger") == "kiln.access")
            seen |= {int(r["pid"]) for r in records if "pid" in r}
            if want <= seen:
                break
    return seen


def pids_of_connections_opened_together(proc: KilnProcess, count: int = 20) -> list[int]:
    """Open ``count`` connections at once (as a pool of keep-alive clients does), then
    send one request on each: the pid that answered on each connection."""
    assert proc.port is not None
    conns = [http.client.HTTPConnection("127.0.0.1", proc.port, timeout=HTTP_TIMEOUT)
             for _ in range(count)]
    for conn in conns:
        conn.connect()
    ids = []
    for conn in conns:
        conn.request("GET", "/v1/demo/stacks")
        answer = conn.getresponse()
        answer.read()
        assert answer.status == 200
        ids.append(answer.getheader("x-openstack-request-id"))
        conn.close()

    def logged() -> dict[str, int] | None:
        by_id = {r["request_id"]: int(r["pid"]) for r in proc.log_records()
                 if r.get("logger") == "kiln.access" and "pid" in r}
        return by_id if set(ids) <= set(by_id) else None

    by_id = wait_until(logged, "the access lines")
    return [by_id[i] for i in ids]


def serving_lines(proc: KilnProcess) -> list[dict[str, Any]]:
    return [r for r in proc.log_records()
            if str(r.get("message", "")).startswith("Kiln is serving")]


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgresql)])
def shared_db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'shared.sqlite'}"
    url: str = request.getfixturevalue("postgresql_url")
    return url


def test_api_workers_serve_restart_and_stop(start_kiln_factory: StartKiln,
                                            shared_db: str) -> None:
    api = start_kiln_factory(command="api", options={
        "DEFAULT": {"transport_url": BROKER},
        "database": {"connection": shared_db}, "heat_api": {"workers": 2}})
    first = wait_until(lambda: len(children(api)) == 2 and children(api), "2 children")
    # both children answer on the one socket the parent bound; their lines carry their pid
    assert answering_pids(api, set(first)) == set(first), api.logs()
    # connections opened together are spread over both (each child has a socket of its
    # own in one SO_REUSEPORT group): not all taken by the first child to wake
    spread = pids_of_connections_opened_together(api)
    assert set(spread) == set(first) and min(map(spread.count, first)) >= 3, spread
    # the parent made nothing a child could share: one thread, no database connection
    parent = psutil.Process(api.proc.pid)
    assert parent.num_threads() == 1
    assert [c for c in parent.net_connections() if c.status != psutil.CONN_LISTEN] == []
    tagged = [r for r in api.log_records() if "pid" in r]
    assert {(r["worker"], r["pid"]) for r in tagged} <= {(0, first[0]), (1, first[1]),
                                                          (0, first[1]), (1, first[0])}
    wait_until(lambda: serving_lines(api), "the serving line")
    assert len(serving_lines(api)) == 1, "the parent says it serves, once"
    assert "pid" not in serving_lines(api)[0]

    # the port is taken for anyone else, a second Kiln too, although the children's
    # sockets share it among themselves (SO_REUSEPORT)
    second = run_kiln(api.workdir / "second", "api", {
        "DEFAULT": {"transport_url": BROKER}, "database": {"connection": shared_db},
        "heat_api": {"bind_port": api.port, "workers": 2}})
    assert second.returncode == 1, second.stderr
    assert "address already in use" in second.stderr.strip().splitlines()[-1]

    # a child killed outright is replaced, and the new one answers too
    victim = first[0]
    psutil.Process(victim).kill()
    # connections made meanwhile wait for the replacement rather than being refused
    with ThreadPoolExecutor(10) as pool:
        codes = list(pool.map(lambda _: httpx.get(api.endpoint("demo") + "/stacks",
                                                  timeout=HTTP_TIMEOUT).status_code,
                              range(10)))
    assert codes == [200] * 10
    now = wait_until(lambda: (len(c := children(api)) == 2 and victim not in c and c),
                     "a replacement child")
    (new,) = set(now) - set(first)
    assert new in answering_pids(api, {new}), api.logs()
    assert [r for r in api.log_records() if r.get("level") == "WARNING"
            and f"(pid {victim}) was killed by SIGKILL; restarting it" in r["message"]]
    assert len(serving_lines(api)) == 1

    # SIGTERM stops every child gracefully, then the parent, with status 0
    assert api.stop(signal.SIGTERM) == 0, api.logs()
    assert not [p for p in now if psutil.pid_exists(p)
                and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    stopped = [r for r in api.log_records() if r.get("message") == "kiln api stopped"]
    assert sorted(r.get("pid", 0) for r in stopped) == [0, *sorted(now)]


def test_engine_workers_register_each_in_the_service_list(start_kiln_factory: StartKiln,
                                                          shared_db: str) -> None:
    options = {"database": {"connection": shared_db},
               "kiln_engine": {"heartbeat_interval": 0.5}}
    api = start_kiln_factory(command="api", options=options)

    def up() -> list[dict[str, Any]]:
        answer = httpx.get(api.endpoint("demo") + "/services", timeout=HTTP_TIMEOUT)
        assert answer.status_code == 200, answer.text
        return [s for s in answer.json()["services"] if s["status"] == "up"]

    alone = {s["engine_id"] for s in up()}  # the API process's own engine
    engine = start_kiln_factory(command="engine", options={
        **options, "DEFAULT": {"num_engine_workers": 2}})
    assert len(children(engine)) == 2
    running = [r for r in engine.log_records()
               if str(r.get("message", "")).startswith("kiln engine running")]
    assert len(running) == 1 and "pid" not in running[0], engine.logs()
    engines = wait_until(lambda: len(ids := {s["engine_id"] for s in up()} - alone) == 2
                         and ids, "two more engines up")
    assert len(engines) == 2
    assert engine.stop(signal.SIGINT) == 0, engine.logs()
    # each engine unregistered on its way out
    assert {s["engine_id"] for s in up()} == alone


def test_workers_stop_when_their_parent_is_killed(start_kiln_factory: StartKiln,
                                                  tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'shared.sqlite'}"
    engine = start_kiln_factory(command="engine", options={
        "database": {"connection": db}, "DEFAULT": {"num_engine_workers": 2}})
    workers = [psutil.Process(p) for p in children(engine)]
    assert len(workers) == 2
    assert engine.stop(signal.SIGKILL) == -signal.SIGKILL
    _, alive = psutil.wait_procs(workers, timeout=60)
    assert not alive
    stopped = [r for r in engine.log_records() if r.get("message") == "kiln engine stopped"]
    assert sorted(r["pid"] for r in stopped) == sorted(w.pid for w in workers)


def run_kiln(tmp_path: Path, command: str, sections: dict[str, dict[str, Any]]
             ) -> subprocess.CompletedProcess[str]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    config = write_config(tmp_path / f"{command}.conf", {
        "DEFAULT": {"state_path": tmp_path / "state", **sections.pop("DEFAULT", {})},
        **sections})
    return subprocess.run([*kiln_command(), command, "--config-file", str(config)],
                          capture_output=True, text=True, env=clean_env(), timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize(("command", "group"), [
    ("api", "heat_api"), ("serve", "heat_api"), ("api-cfn", "heat_api_cfn")])
def test_api_workers_without_a_broker_are_refused(tmp_path: Path, command: str,
                                                  group: str) -> None:
    done = run_kiln(tmp_path, command, {group: {"bind_port": 1, "workers": 2}})
    assert done.returncode == 2, done.stderr  # a configuration error, as kiln.cli says
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith(f"kiln: error: [{group}] workers = 2 (2 processes) needs "
                           "[DEFAULT] transport_url: without a message broker each API "
                           "process runs the stack actions it accepts itself"), line
    assert "run `kiln engine`" in line and f"or set [{group}] workers = 1" in line


def test_a_taken_port_is_the_one_process_error(tmp_path: Path) -> None:
    import socket
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        done = run_kiln(tmp_path, "api", {
            "DEFAULT": {"transport_url": BROKER},
            "heat_api": {"bind_port": taken.getsockname()[1], "workers": 2}})
    assert done.returncode == 1, done.stderr
    assert "address already in use" in done.stderr.strip().splitlines()[-1]
    assert "started API process" not in done.stderr


def test_children_failing_to_start_stop_the_parent_with_their_error(tmp_path: Path
                                                                    ) -> None:
    done = run_kiln(tmp_path, "api", {
        "DEFAULT": {"transport_url": BROKER, "auth_encryption_key": "k" * 32},
        "heat_api": {"bind_port": 0, "workers": 2},
        "database": {"connection": "postgresql+psycopg://postgres@127.0.0.1:1/none"}})
    assert done.returncode == 1, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("kiln: error:")]
    assert len(errors) == 1, done.stderr
    assert errors[0].startswith("kiln: error: cannot open the database"), errors
    assert "Kiln is serving" not in done.stderr


def test_children_that_keep_dying_at_start_stop_the_parent(start_kiln_factory: StartKiln,
                                                           tmp_path: Path) -> None:
    db = tmp_path / "shared.sqlite"
    api = start_kiln_factory(command="api", options={
        "DEFAULT": {"transport_url": BROKER}, "database": {"connection": f"sqlite:///{db}"},
        "heat_api": {"workers": 2}})
    first = wait_until(lambda: len(children(api)) == 2 and children(api), "2 children")
    # the running children keep the database they opened; a new one finds garbage
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"this is no database\n" * 200)
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    garbage.replace(db)
    psutil.Process(first[0]).kill()
    # restarted after 0.5, 1, 2, 4 and 8 s, each failing: the fifth failure ends it all
    assert api.proc.wait(timeout=120) == 1, api.logs()
    error = api.logs().strip().splitlines()[-1]
    assert error.startswith("kiln: error: API processes keep dying at start (5 times in a "
                            "row); the last: cannot open the database"), error
    assert not psutil.pid_exists(first[1]) or psutil.Process(first[1]).status() == \
        psutil.STATUS_ZOMBIE
