"""OpenStack Swift beside the test cloud: the object store the cloud itself does not run.

Swift from PyPI (proxy, account, container and object servers) runs as four ordinary
processes on 127.0.0.1: one replica, one zone, a directory under the cache as its only
device (the object server keeps metadata in extended attributes, which ext4 has), rings
built with ``swift-ring-builder``, no memcached. The proxy checks tokens with
keystonemiddleware against the running test cloud's Keystone (user ``swift``) and the
start registers it in that Keystone's catalog as ``object-store``; a stop removes the
entry again, so the cloud's catalog says Swift exists only while it runs. Used as::

    with running_swift(cloud.layout):   # installs on first use, then starts
        ...

Costs (2 cores): the first install about 75 s (its own venv under
``~/.cache/kiln-test/swift-<key>``, apart from the cloud's so the cloud's install key
does not change), each start a few seconds, about 150 MB of memory. A Swift already
running is reused; the last session using one that a session started stops it.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.cloud import catalog
from tests.support.cloud.install import CloudSetupError, file_lock, run_logged
from tests.support.cloud.launch import Launched, http_ready, wait_until
from tests.support.cloud.layout import CloudLayout

PACKAGES = ("swift==2.38.3", "keystonemiddleware==13.0.1")

#: server -> offset from the port base (the proxy is the API)
SERVERS = {"proxy": 0, "account": 1, "container": 2, "object": 3}

START_DEADLINE = 120.0

#: the servers this process started, kept to be reaped when it stops them
_CHILDREN: list[subprocess.Popen[bytes]] = []


def install_key() -> str:
    digest = hashlib.sha256(f"{sys.version_info[:2]}\n{PACKAGES}".encode())
    return digest.hexdigest()[:12]


@dataclass(frozen=True)
class SwiftLayout:
    """Where this Swift lives: ``KILN_TEST_SWIFT_PORT_BASE`` (19510) overrides its ports,
    ``KILN_TEST_CLOUD_HOME`` its cache as for the cloud."""

    cloud: CloudLayout
    port_base: int = field(default_factory=lambda: int(
        os.environ.get("KILN_TEST_SWIFT_PORT_BASE", "19510")))
    user: str = "swift"

    @property
    def home(self) -> Path:
        return self.cloud.cache / f"swift-{install_key()}"

    @property
    def bin(self) -> Path:
        return self.home / "venv" / "bin"

    @property
    def state(self) -> Path:
        return self.home / "state"

    def port(self, server: str) -> int:
        return self.port_base + SERVERS[server]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port('proxy')}"

    @property
    def endpoint(self) -> str:
        return f"{self.url}/v1/AUTH_%(project_id)s"


def ensure_installed(layout: SwiftLayout) -> None:
    marker = layout.home / ".installed"
    if marker.exists():
        return
    with file_lock(layout.home / ".install.lock"):
        if marker.exists():
            return
        log = layout.home / "install.log"
        run_logged([sys.executable, "-m", "venv", "--clear", str(layout.home / "venv")],
                   log, what="swift venv")
        run_logged([str(layout.bin / "python"), "-m", "pip", "install", "-q",
                    "--disable-pip-version-check", *PACKAGES], log,
                   what="pip install of Swift")
        marker.write_text(f"{time.time()}\n")


def _ini(sections: dict[str, dict[str, str]]) -> str:
    return "".join(f"[{name}]\n" + "".join(f"{k} = {v}\n" for k, v in body.items()) + "\n"
                   for name, body in sections.items())


def write_configs(layout: SwiftLayout) -> Path:
    etc = layout.state / "etc"
    etc.mkdir(parents=True, exist_ok=True)
    (layout.state / "devices" / "d1").mkdir(parents=True, exist_ok=True)
    (etc / "swift.conf").write_text(_ini({
        "swift-hash": {"swift_hash_path_suffix": "kiln-test",
                       "swift_hash_path_prefix": "kiln-test"},
        "storage-policy:0": {"name": "Policy-0", "default": "yes"}}))
    common = {"bind_ip": "127.0.0.1", "workers": "0", "swift_dir": str(etc)}
    for server in ("account", "container", "object"):
        (etc / f"{server}-server.conf").write_text(_ini({
            "DEFAULT": {**common, "bind_port": str(layout.port(server)),
                        "devices": str(layout.state / "devices"), "mount_check": "false",
                        "disable_fallocate": "true"},
            "pipeline:main": {"pipeline": f"healthcheck {server}-server"},
            "filter:healthcheck": {"use": "egg:swift#healthcheck"},
            f"app:{server}-server": {"use": f"egg:swift#{server}"}}))
    cloud = layout.cloud
    (etc / "proxy-server.conf").write_text(_ini({
        "DEFAULT": {**common, "bind_port": str(layout.port("proxy"))},
        "pipeline:main": {"pipeline": "catch_errors healthcheck proxy-logging authtoken "
                                      "keystoneauth tempurl copy versioned_writes "
                                      "proxy-logging proxy-server"},
        "app:proxy-server": {"use": "egg:swift#proxy", "account_autocreate": "true"},
        "filter:catch_errors": {"use": "egg:swift#catch_errors"},
        "filter:healthcheck": {"use": "egg:swift#healthcheck"},
        "filter:proxy-logging": {"use": "egg:swift#proxy_logging"},
        "filter:tempurl": {"use": "egg:swift#tempurl"},
        "filter:copy": {"use": "egg:swift#copy"},
        # X-Versions-Location (Heat's SwiftSignalHandle versions its object, one version
        # per signal); /info lists it when on, which the signal tests check
        "filter:versioned_writes": {"use": "egg:swift#versioned_writes",
                                    "allow_versioned_writes": "true"},
        "filter:authtoken": {
            "paste.filter_factory": "keystonemiddleware.auth_token:filter_factory",
            "www_authenticate_uri": cloud.auth_url, "auth_url": cloud.auth_url,
            "auth_type": "password", "project_domain_name": "Default",
            "user_domain_name": "Default", "project_name": "service",
            "username": layout.user, "password": cloud.service_password,
            "delay_auth_decision": "true"},
        "filter:keystoneauth": {"use": "egg:swift#keystoneauth",
                                "operator_roles": "admin, member",
                                "reseller_admin_role": "ResellerAdmin"}}))
    builder = str(layout.bin / "swift-ring-builder")
    log = layout.state / "rings.log"
    for server in ("account", "container", "object"):
        ring = etc / f"{server}.builder"
        if (etc / f"{server}.ring.gz").exists():
            continue
        run_logged([builder, str(ring), "create", "8", "1", "1"], log, what="ring create")
        run_logged([builder, str(ring), "add",
                    f"r1z1-127.0.0.1:{layout.port(server)}/d1", "1"], log, what="ring add")
        run_logged([builder, str(ring), "rebalance"], log, what="ring rebalance")
    return etc


def _pidfile(layout: SwiftLayout, server: str) -> Path:
    return layout.state / "run" / f"{server}.pid"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def running(layout: SwiftLayout) -> bool:
    for server in SERVERS:
        path = _pidfile(layout, server)
        if not path.exists() or not _alive(int(path.read_text())):
            return False
    return http_ready(f"{layout.url}/healthcheck")()


def _register(layout: SwiftLayout) -> None:
    """The ``swift`` service user and the ``object-store`` catalog entry (idempotent)."""
    conn = catalog.connect(layout.cloud)
    idn = conn.identity
    project = idn.find_project("service", domain_id="default", ignore_missing=False)
    user = idn.find_user(layout.user, domain_id="default")
    if user is None:
        user = idn.create_user(name=layout.user, domain_id="default",
                               password=layout.cloud.service_password,
                               default_project_id=project.id)
    for role in ("admin", "service"):
        idn.assign_project_role_to_user(project, user, idn.find_role(role,
                                                                     ignore_missing=False))
    service = _service(idn) or idn.create_service(name="swift", type="object-store",
                                                  description="swift")
    have = {e.interface: e for e in idn.endpoints(service_id=service.id)}
    for interface in ("public", "internal", "admin"):
        if interface not in have:
            idn.create_endpoint(service_id=service.id, url=layout.endpoint,
                                interface=interface, region_id=layout.cloud.region)
        elif have[interface].url != layout.endpoint:
            idn.update_endpoint(have[interface], url=layout.endpoint)


def _service(idn: Any) -> Any:
    return next((s for s in idn.services(type="object-store") if s.name == "swift"), None)


def _deregister(layout: SwiftLayout) -> None:
    with suppress(Exception):
        idn = catalog.connect(layout.cloud).identity
        service = _service(idn)
        if service is not None:
            idn.delete_service(service)


def _stop_processes(layout: SwiftLayout) -> None:
    for server in SERVERS:
        path = _pidfile(layout, server)
        if path.exists():
            with suppress(OSError, ValueError):
                os.killpg(int(path.read_text()), signal.SIGTERM)
            path.unlink()
    while _CHILDREN:
        with suppress(subprocess.TimeoutExpired):
            _CHILDREN.pop().wait(timeout=30)


def start(layout: SwiftLayout) -> bool:
    """Install and start Swift unless it runs; whether this call started it."""
    ensure_installed(layout)
    with file_lock(layout.home / ".start.lock"):
        if running(layout):
            _register(layout)
            return False
        _stop_processes(layout)
        etc = write_configs(layout)
        _register(layout)
        (layout.state / "run").mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + START_DEADLINE
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OS_", "PYTHON"))}
        procs = {}
        for server in SERVERS:
            log = layout.state / f"{server}.log"
            with log.open("ab") as out:
                procs[server] = subprocess.Popen(
                    [str(layout.bin / f"swift-{server}-server"),
                     str(etc / f"{server}-server.conf")],
                    stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                    env={**env, "PYTHONWARNINGS": "ignore"}, start_new_session=True)
            _CHILDREN.append(procs[server])
            _pidfile(layout, server).write_text(str(procs[server].pid))
        try:
            for server, proc in procs.items():
                wait_until(f"swift {server}", http_ready(
                    f"http://127.0.0.1:{layout.port(server)}/healthcheck"), deadline, Launched(
                        server, proc, layout.state / f"{server}.log"))
        except CloudSetupError:
            _stop_processes(layout)
            raise
    return True


def stop(layout: SwiftLayout) -> None:
    with file_lock(layout.home / ".start.lock"):
        _deregister(layout)
        _stop_processes(layout)


@contextmanager
def running_swift(cloud: CloudLayout) -> Iterator[SwiftLayout]:
    """Swift for the duration of the block. Each user holds a shared lock on
    ``state/users``; the last one out stops a Swift that a test session started (xdist
    workers share one Swift), and leaves one started by hand running."""
    import fcntl

    layout = SwiftLayout(cloud)
    ensure_installed(layout)
    users = layout.home / "users.lock"
    marker = layout.home / ".started-by-tests"
    with users.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_SH)
        if start(layout):
            marker.touch()
        try:
            yield layout
        finally:
            if _last_user(handle) and marker.exists():
                stop(layout)
                marker.unlink(missing_ok=True)


def _last_user(handle: Any) -> bool:
    """Whether no other session holds the users lock (then this one now holds it)."""
    import fcntl

    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
