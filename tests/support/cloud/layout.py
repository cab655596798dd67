"""Where the test cloud lives: its cached venv, its state, its ports, databases and vhost.

Everything is derived from one key, a hash of what gets installed (the pins, the package
list, the ML2 driver's source and the Python version), so a change to any of them builds
a new venv beside the old one instead of patching it in place. The names are distinct
from the peer-cloud tool's (``peer_`` databases, vhost ``peer-cloud``, ports 5000/87xx/
9xxx), so both can run on one machine.
"""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: What the cloud's venv holds (exact versions come from pins.txt).
PACKAGES = (
    "keystone==30.0.0", "neutron==29.0.0", "nova==34.0.0", "glance==33.0.0",
    "openstack-placement==16.0.0", "cinder==29.0.0", "gunicorn", "PyMySQL",
)

#: The services, in start order; each listens on ``port_base + offset`` (HTTP ones).
HTTP_SERVICES = {"keystone": 0, "placement": 1, "neutron": 2, "glance": 3, "nova": 4,
                 "cinder": 5}

DATABASES = ("keystone", "placement", "neutron", "nova_api", "nova_cell0", "nova", "glance",
             "cinder")


def install_key() -> str:
    """12 hex digits naming the venv: changes whenever what is installed changes."""
    digest = hashlib.sha256()
    digest.update(f"{sys.version_info[:2]}".encode())
    digest.update("\n".join(PACKAGES).encode())
    for path in sorted([HERE / "pins.txt", *(HERE / "ml2_agentless").rglob("*.py"),
                        HERE / "ml2_agentless" / "pyproject.toml"]):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def _env(name: str, default: str) -> str:
    return os.environ.get(name, default)


def _instance() -> str:
    return _env("KILN_TEST_CLOUD_INSTANCE", "")


@dataclass(frozen=True)
class CloudLayout:
    """Paths, ports and names of one test cloud (environment overrides in brackets):
    ``KILN_TEST_CLOUD_HOME`` (``~/.cache/kiln-test``), ``KILN_TEST_CLOUD_PORT_BASE``
    (19500), ``KILN_TEST_MYSQL_URL``'s server for the databases (root, no password).

    ``KILN_TEST_CLOUD_INSTANCE`` (none) names a second cloud beside the shared one: the
    same installed venv, but its own state directory (``state-<instance>``), databases
    (``kiln_cloud_<instance>_*``) and RabbitMQ vhost, so that with its own port base it
    can be started, changed and stopped without touching the shared cloud."""

    key: str = field(default_factory=install_key)
    cache: Path = field(default_factory=lambda: Path(
        _env("KILN_TEST_CLOUD_HOME", str(Path.home() / ".cache" / "kiln-test"))))
    port_base: int = field(default_factory=lambda: int(_env("KILN_TEST_CLOUD_PORT_BASE",
                                                            "19500")))
    instance: str = field(default_factory=_instance)
    db_user: str = "kilncloud"
    db_password: str = "kilncloud-secret"
    rabbit_user: str = "guest"
    rabbit_password: str = "guest"
    region: str = "RegionOne"
    admin_password: str = "admin-secret"
    service_password: str = "service-secret"
    compute_host: str = "kiln-compute1"

    @property
    def home(self) -> Path:
        return self.cache / f"cloud-{self.key}"

    @property
    def venv(self) -> Path:
        return self.home / "venv"

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    @property
    def state(self) -> Path:
        return self.home / (f"state-{self.instance}" if self.instance else "state")

    @property
    def start_lock(self) -> Path:
        """Held while this cloud starts or stops (an instance's own: its start does not
        wait for the shared cloud's, nor the shared cloud's for it)."""
        return (self.state if self.instance else self.home) / ".start.lock"

    @property
    def db_prefix(self) -> str:
        return f"kiln_cloud_{self.instance}_" if self.instance else "kiln_cloud_"

    @property
    def rabbit_vhost(self) -> str:
        return f"kiln-cloud-{self.instance}" if self.instance else "kiln-cloud"

    @property
    def logs(self) -> Path:
        return self.state / "log"

    def port(self, service: str) -> int:
        return self.port_base + HTTP_SERVICES[service]

    def url(self, service: str) -> str:
        return f"http://127.0.0.1:{self.port(service)}"

    @property
    def auth_url(self) -> str:
        return f"{self.url('keystone')}/v3"

    @property
    def transport_url(self) -> str:
        return (f"rabbit://{self.rabbit_user}:{self.rabbit_password}@127.0.0.1:5672/"
                f"{self.rabbit_vhost}")

    def db_url(self, name: str, host: str = "127.0.0.1", port: int = 3306) -> str:
        return (f"mysql+pymysql://{self.db_user}:{self.db_password}@{host}:{port}/"
                f"{self.db_prefix}{name}?charset=utf8mb4")

    def catalog_urls(self) -> dict[str, tuple[str, str, str]]:
        """service type -> (user, service name, endpoint URL) registered in Keystone."""
        cinder = f"{self.url('cinder')}/v3/%(project_id)s"
        return {
            "placement": ("placement", "placement", self.url("placement")),
            "network": ("neutron", "neutron", self.url("neutron")),
            "image": ("glance", "glance", self.url("glance")),
            "compute": ("nova", "nova", f"{self.url('nova')}/v2.1"),
            "block-storage": ("cinder", "cinder", cinder),
            "volumev3": ("cinder", "cinderv3", cinder),
        }
