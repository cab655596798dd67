"""One-time preparation of a test cloud's state: databases, RabbitMQ vhost, schema syncs,
Keystone's keys and bootstrap. Each step leaves a marker in the state directory and is
skipped once its marker exists (the syncs are idempotent anyway, only slow: about 50 s
together on an idle machine, several minutes on a busy one).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.support.cloud.configs import Configs
from tests.support.cloud.install import CloudSetupError, run_logged
from tests.support.cloud.layout import DATABASES, CloudLayout


def create_databases(layout: CloudLayout, host: str, port: int, admin: str,
                     password: str) -> None:
    """The cloud's account and databases on the MariaDB server (as its admin)."""
    import pymysql

    try:
        conn = pymysql.connect(host=host, port=port, user=admin, password=password,
                               connect_timeout=5)
    except pymysql.err.OperationalError as exc:
        raise CloudSetupError(f"MariaDB at {host}:{port} is not available: {exc}") from exc
    try:
        with conn.cursor() as cur:
            for client in ("127.0.0.1", "localhost"):
                cur.execute(f"CREATE USER IF NOT EXISTS '{layout.db_user}'@'{client}' "
                            f"IDENTIFIED BY '{layout.db_password}'")
            for name in DATABASES:
                db = f"{layout.db_prefix}{name}"
                cur.execute(f"CREATE DATABASE IF NOT EXISTS `{db}` CHARACTER SET utf8mb4")
                for client in ("127.0.0.1", "localhost"):
                    cur.execute(f"GRANT ALL PRIVILEGES ON `{db}`.* TO "
                                f"'{layout.db_user}'@'{client}'")
    finally:
        conn.close()


def create_vhost(layout: CloudLayout) -> None:
    """The cloud's RabbitMQ vhost (rabbitmqctl; the broker itself must be running)."""
    ctl = shutil.which("rabbitmqctl")
    if ctl is None:
        raise CloudSetupError("RabbitMQ is not available: no rabbitmqctl on PATH")
    try:
        listed = subprocess.run([ctl, "-q", "list_vhosts"], capture_output=True, text=True,
                                timeout=60, check=False)
    except subprocess.TimeoutExpired as exc:
        raise CloudSetupError("RabbitMQ is not available: rabbitmqctl timed out") from exc
    if listed.returncode != 0:
        raise CloudSetupError(f"RabbitMQ is not available: {listed.stderr.strip()}")
    if layout.rabbit_vhost in listed.stdout.split():
        return
    for args in (["add_vhost", layout.rabbit_vhost],
                 ["set_permissions", "-p", layout.rabbit_vhost, layout.rabbit_user,
                  ".*", ".*", ".*"]):
        subprocess.run([ctl, "-q", *args], capture_output=True, timeout=60, check=True)


def _step(layout: CloudLayout, name: str) -> Path:
    return layout.state / f".done-{name}"


def sync_schemas(layout: CloudLayout, configs: Configs) -> None:
    """Keystone's keys and bootstrap, then every service's schema (marker per step)."""
    b = layout.bin
    st = layout.state
    log = layout.logs / "prepare.log"
    ks = [str(b / "keystone-manage"), "--config-file", str(st / "keystone" / "keystone.conf")]
    nova = [str(b / "nova-manage"), "--config-file", str(st / "nova" / "nova.conf"),
            "--config-file", str(st / "nova" / "nova-db.conf")]
    steps: list[tuple[str, list[list[str]]]] = [
        ("keystone", [
            [*ks, "db_sync"],
            [*ks, "fernet_setup", "--keystone-user", "root", "--keystone-group", "root"],
            [*ks, "credential_setup", "--keystone-user", "root", "--keystone-group", "root"],
            [*ks, "bootstrap", "--bootstrap-username", "admin",
             "--bootstrap-password", layout.admin_password,
             "--bootstrap-project-name", "admin", "--bootstrap-role-name", "admin",
             "--bootstrap-service-name", "keystone",
             "--bootstrap-admin-url", layout.auth_url + "/",
             "--bootstrap-public-url", layout.auth_url + "/",
             "--bootstrap-internal-url", layout.auth_url + "/",
             "--bootstrap-region-id", layout.region],
        ]),
        ("placement", [[str(b / "placement-manage"), "--config-file",
                        str(st / "placement" / "placement.conf"), "db", "sync"]]),
        ("neutron", [[str(b / "neutron-db-manage"), "--config-file",
                      str(st / "neutron" / "neutron.conf"), "upgrade", "heads"]]),
        ("glance", [[str(b / "glance-manage"), "--config-file",
                     str(st / "glance" / "glance-api.conf"), "db_sync"]]),
        ("nova", [
            [*nova, "api_db", "sync"],
            [*nova, "cell_v2", "map_cell0", "--database_connection",
             configs.db("nova_cell0")],
            [*nova, "cell_v2", "create_cell", "--name", "cell1"],
            [*nova, "db", "sync"],
        ]),
        ("cinder", [[str(b / "cinder-manage"), "--config-file",
                     str(st / "cinder" / "cinder.conf"), "db", "sync"]]),
    ]
    for name, commands in steps:
        if _step(layout, name).exists():
            continue
        for command in commands:
            run_logged(command, log, what=f"{name}: {' '.join(command[-2:])}")
        _step(layout, name).write_text("")


def prepare(layout: CloudLayout, configs: Configs, *, db_admin: str,
            db_admin_password: str) -> None:
    if not _step(layout, "infra").exists():
        create_vhost(layout)
        create_databases(layout, configs.db_host, configs.db_port, db_admin,
                         db_admin_password)
        _step(layout, "infra").write_text("")
    sync_schemas(layout, configs)
