"""A real OpenStack cloud on 127.0.0.1 for the cloud resource tests.

Keystone, Placement, Neutron (ML2 without agents), Glance (file store), Nova (fake virt
driver) and Cinder (fake volume driver), the upstream 2026.2 releases from PyPI, run as
local processes on MariaDB and RabbitMQ. Used as::

    with running_cloud() as cloud:     # installs/prepares on first use, then starts
        cloud.auth                     # admin credentials for openstacksdk / Kiln

Costs (2 cores): the first install about 4 minutes (cached afterwards under
``~/.cache/kiln-test/cloud-<key>``), preparation about a minute once per key, each
start 25-80 s, about 2.3 GB of memory while running. ``python -m tests.support.cloud
start|stop|status`` runs it by hand (``scripts/test.sh`` starts it once for the suite).

A cloud already running for this key (started by ``scripts/test.sh`` or by hand) is
reused and left running; one started here is stopped on exit.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.cloud import catalog
from tests.support.cloud.configs import Configs
from tests.support.cloud.install import CloudSetupError, ensure_installed, file_lock
from tests.support.cloud.launch import http_ready, running, start_processes, stop_processes
from tests.support.cloud.layout import CloudLayout
from tests.support.cloud.prepare import prepare

__all__ = ["Cloud", "CloudLayout", "CloudSetupError", "is_up", "running_cloud", "start", "stop"]


@dataclass(frozen=True)
class Cloud:
    """A running test cloud: where it is and how to log in as its admin."""

    layout: CloudLayout

    @property
    def auth(self) -> dict[str, Any]:
        return catalog.admin_auth(self.layout)

    @property
    def auth_url(self) -> str:
        return self.layout.auth_url

    @property
    def region(self) -> str:
        return self.layout.region

    def connect(self) -> Any:
        """An openstacksdk connection as the admin (for tests' own checks)."""
        return catalog.connect(self.layout)

    def clouds_yaml(self, path: Path, name: str = "kiln-test") -> Path:
        """A clouds.yaml naming this cloud *name* (JSON is valid YAML)."""
        body = {"clouds": {name: {"auth": self.auth, "region_name": self.region,
                                  "interface": "public", "identity_api_version": "3"}}}
        path.write_text(json.dumps(body, indent=2))
        return path


def _db_server() -> tuple[str, int, str, str]:
    from tests.support.databases import mysql_server_url

    url = mysql_server_url()
    return (url.host or "127.0.0.1", url.port or 3306, url.username or "root",
            url.password or "")


def is_up(layout: CloudLayout) -> bool:
    return (running(layout) and (layout.state / ".ready").exists()
            and http_ready(layout.auth_url)())


def start(layout: CloudLayout | None = None) -> tuple[Cloud, bool]:
    """Install, prepare and start the cloud unless it already runs; returns it and
    whether this call started it. Raises CloudSetupError naming what is missing."""
    layout = layout or CloudLayout()
    t0 = time.monotonic()
    ensure_installed(layout)
    with file_lock(layout.start_lock):
        if is_up(layout):
            return Cloud(layout), False
        stop_processes(layout)
        (layout.state / ".ready").unlink(missing_ok=True)
        host, port, admin, password = _db_server()
        configs = Configs(layout, host, port)
        configs.write_all()
        prepare(layout, configs, db_admin=admin, db_admin_password=password)
        registered = layout.state / ".done-register"
        want = repr(sorted(layout.catalog_urls().items()))
        fresh = not registered.exists() or registered.read_text() != want
        start_processes(layout, configs,
                        register=(lambda: catalog.register(layout)) if fresh else None)
        registered.write_text(want)
        catalog.seed(layout)
        (layout.state / ".ready").write_text(f"{time.monotonic() - t0:.1f}\n")
    return Cloud(layout), True


def stop(layout: CloudLayout | None = None) -> None:
    layout = layout or CloudLayout()
    with file_lock(layout.start_lock):
        (layout.state / ".ready").unlink(missing_ok=True)
        stop_processes(layout)


@contextmanager
def running_cloud(layout: CloudLayout | None = None) -> Iterator[Cloud]:
    cloud, started = start(layout)
    try:
        yield cloud
    finally:
        if started:
            stop(cloud.layout)
