"""Start the test cloud's processes, see them become ready, and stop them.

Every process gets its own session (so a stop reaches a gunicorn's workers too) and its
pid is written under ``state/run``; a stop signals only those process groups. Readiness
is observed: an HTTP service is ready when ``GET /`` answers (2xx, 3xx or 401); an RPC
service when it has written a heartbeat into its services table since it was launched.
All processes are launched first and awaited afterwards: on two cores their imports
overlap with the waits.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.support.cloud.configs import Configs
from tests.support.cloud.install import CloudSetupError, run_logged
from tests.support.cloud.layout import HERE, HTTP_SERVICES, CloudLayout

#: seconds a whole start may take (cold caches on a busy 2-core machine: ~3 minutes)
START_DEADLINE = float(os.environ.get("KILN_TEST_CLOUD_START_TIMEOUT", "400"))


@dataclass
class Launched:
    name: str
    proc: subprocess.Popen[bytes]
    log: Path


def _wsgi(layout: CloudLayout, name: str, port: int, app: str,
          env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    cmd = [str(layout.bin / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", "1",
           "--worker-class", "gthread", "--threads", "4", "--timeout", "300",
           "--graceful-timeout", "5", "--no-control-socket", "--name", name,
           "--error-logfile", str(layout.logs / f"{name}-gunicorn.log"),
           "--pythonpath", str(HERE), "wsgi_entry:application"]
    return cmd, {"KILN_CLOUD_WSGI_APP": app, "KILN_CLOUD_WSGI_NAME": name, **env}


def commands(layout: CloudLayout) -> dict[str, tuple[list[str], dict[str, str]]]:
    """name -> (argv, extra environment) of every process, in launch order."""
    st = layout.state
    b = layout.bin
    nova_conf = ["--config-file", str(st / "nova" / "nova.conf")]
    nova_db = ["--config-file", str(st / "nova" / "nova-db.conf")]
    cinder_conf = ["--config-file", str(st / "cinder" / "cinder.conf")]
    logs = layout.logs
    return {
        "keystone": _wsgi(layout, "keystone", layout.port("keystone"),
                          "keystone.wsgi.api:application",
                          {"OS_KEYSTONE_CONFIG_DIR": str(st / "keystone"),
                           "OS_KEYSTONE_CONFIG_FILES": "keystone.conf"}),
        "placement": _wsgi(layout, "placement", layout.port("placement"),
                           "placement.wsgi.api:application",
                           {"OS_PLACEMENT_CONFIG_DIR": str(st / "placement")}),
        "neutron": _wsgi(layout, "neutron", layout.port("neutron"),
                         "neutron.wsgi.api:application",
                         {"OS_NEUTRON_CONFIG_DIR": str(st / "neutron"),
                          "OS_NEUTRON_CONFIG_FILES": "neutron.conf"}),
        "glance": _wsgi(layout, "glance", layout.port("glance"),
                        "glance.wsgi.api:application",
                        {"OS_GLANCE_CONFIG_DIR": str(st / "glance")}),
        "nova": _wsgi(layout, "nova", layout.port("nova"),
                      "nova.wsgi.osapi_compute:application",
                      {"OS_NOVA_CONFIG_DIR": str(st / "nova"),
                       "OS_NOVA_CONFIG_FILES": "api-paste.ini;nova.conf;nova-db.conf"}),
        "nova-conductor": ([str(b / "nova-conductor"), *nova_conf, *nova_db,
                            "--log-file", str(logs / "nova-conductor.log")], {}),
        "nova-scheduler": ([str(b / "nova-scheduler"), *nova_conf, *nova_db,
                            "--log-file", str(logs / "nova-scheduler.log")], {}),
        "nova-compute": ([str(b / "nova-compute"), *nova_conf,
                          "--log-file", str(logs / "nova-compute.log")], {}),
        "cinder": _wsgi(layout, "cinder", layout.port("cinder"), "cinder.wsgi.api:application",
                        {"KILN_CLOUD_WSGI_ARGV": f"--config-file {st}/cinder/cinder.conf "
                                                 f"--log-file {logs}/cinder-api.log"}),
        "cinder-scheduler": ([str(b / "cinder-scheduler"), *cinder_conf,
                              "--log-file", str(logs / "cinder-scheduler.log")], {}),
        "cinder-volume": ([str(b / "cinder-volume"), *cinder_conf,
                           "--log-file", str(logs / "cinder-volume.log")], {}),
    }

#: RPC services: (database, binary) whose heartbeat says they are ready
HEARTBEATS = (("nova", "nova-conductor"), ("nova", "nova-scheduler"),
              ("nova", "nova-compute"), ("cinder", "cinder-scheduler"),
              ("cinder", "cinder-volume"))


def launch(layout: CloudLayout, names: list[str] | None = None) -> list[Launched]:
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("OS_", "PYTHON"))}
    base_env["PYTHONWARNINGS"] = "ignore"
    started: list[Launched] = []
    run = layout.state / "run"
    for name, (argv, extra) in commands(layout).items():
        if names is not None and name not in names:
            continue
        log = layout.logs / f"{name}.out"
        with log.open("ab") as out:
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, env={**base_env, **extra},
                                    start_new_session=True, cwd=layout.state)
        (run / f"{name}.pid").write_text(str(proc.pid))
        started.append(Launched(name, proc, log))
    return started


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def wait_until(what: str, ready: Callable[[], bool], deadline: float,
               alive: Launched | None = None) -> None:
    """Poll *ready* with short, growing pauses until it holds or *deadline* passes."""
    pause = 0.1
    while not ready():
        if alive is not None and alive.proc.poll() is not None:
            raise CloudSetupError(f"{alive.name} exited ({alive.proc.returncode}) before it "
                                  f"was ready:\n{_tail(alive.log)}\n"
                                  f"{_tail(alive.log.with_name(alive.name + '-gunicorn.log'))}")
        if time.monotonic() > deadline:
            raise CloudSetupError(f"{what} was not ready within {START_DEADLINE:.0f} s")
        time.sleep(pause)  # a poll interval while waiting on a condition with a deadline
        pause = min(pause * 1.5, 1.0)


def http_ready(url: str) -> Callable[[], bool]:
    def probe() -> bool:
        try:
            code = httpx.get(url, timeout=3).status_code
        except httpx.HTTPError:
            return False
        return code < 400 or code == 401
    return probe


def heartbeat_ready(configs: Configs, database: str, binary: str,
                    since: datetime.datetime) -> Callable[[], bool]:
    import pymysql

    layout = configs.layout

    def probe() -> bool:
        try:
            conn = pymysql.connect(host=configs.db_host, port=configs.db_port,
                                   user=layout.db_user, password=layout.db_password,
                                   database=f"{layout.db_prefix}{database}",
                                   connect_timeout=3)
        except pymysql.err.MySQLError:
            return False
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT count(*) FROM services WHERE `binary` = %s AND "
                            "deleted = 0 AND updated_at >= %s",
                            (binary, since.replace(tzinfo=None)))
                row = cur.fetchone()
        except pymysql.err.MySQLError:
            return False
        finally:
            conn.close()
        return bool(row and row[0])
    return probe


def start_processes(layout: CloudLayout, configs: Configs,
                    register: Callable[[], None] | None) -> list[Launched]:
    """Launch everything and wait for every service; maps the compute host once.

    With *register* (the service users and catalog are not in Keystone yet), Keystone
    is started alone first and *register* runs before the others start: a service
    that cannot log in at start exits."""
    deadline = time.monotonic() + START_DEADLINE
    since = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    started = launch(layout, ["keystone"])
    by_name = {p.name: p for p in started}
    try:
        if register is not None:
            wait_until("keystone", http_ready(layout.auth_url), deadline, by_name["keystone"])
            register()
        rest = [name for name in commands(layout) if name != "keystone"]
        started += launch(layout, rest)
        by_name = {p.name: p for p in started}
        wait_until("keystone", http_ready(layout.auth_url), deadline, by_name["keystone"])
        for service in HTTP_SERVICES:
            wait_until(service, http_ready(layout.url(service) + "/"), deadline,
                       by_name[service])
        for database, binary in HEARTBEATS:
            wait_until(binary, heartbeat_ready(configs, database, binary, since), deadline,
                       by_name[binary])
        mapped = layout.state / ".done-host-mapping"
        if not mapped.exists():
            st = layout.state
            run_logged([str(layout.bin / "nova-manage"), "--config-file",
                        str(st / "nova" / "nova.conf"), "--config-file",
                        str(st / "nova" / "nova-db.conf"), "cell_v2", "discover_hosts"],
                       layout.logs / "prepare.log", what="nova-manage discover_hosts")
            mapped.write_text("")
    except BaseException:
        stop_processes(layout)
        raise
    return started


def _pids(layout: CloudLayout) -> list[tuple[Path, int]]:
    out = []
    for pidfile in sorted((layout.state / "run").glob("*.pid")):
        try:
            out.append((pidfile, int(pidfile.read_text())))
        except (OSError, ValueError):
            pidfile.unlink(missing_ok=True)
    return out


def stop_processes(layout: CloudLayout, grace: float = 10.0) -> None:
    """TERM every process group this layout started, KILL what is left after *grace*."""
    groups = []
    for pidfile, pid in _pids(layout):
        try:
            os.killpg(pid, signal.SIGTERM)
            groups.append(pid)
        except ProcessLookupError:
            pass
        pidfile.unlink(missing_ok=True)
    deadline = time.monotonic() + grace
    for pid in groups:
        while time.monotonic() < deadline:
            try:
                os.killpg(pid, 0)
            except ProcessLookupError:
                break
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
            time.sleep(0.1)  # waiting on the process group's exit, with a deadline
        else:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)


def running(layout: CloudLayout) -> bool:
    """Whether processes recorded for this layout are still alive."""
    for _, pid in _pids(layout):
        try:
            os.killpg(pid, 0)
            return True
        except ProcessLookupError:
            continue
    return False
