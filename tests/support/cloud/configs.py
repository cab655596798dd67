"""The services' configuration files, as data (section -> option -> value).

Choices that are not the upstream defaults, and why:

- Every service: ``[oslo_policy] enforce_scope/enforce_new_defaults = false``, so a
  project-scoped admin token is the cloud admin the tests act as.
- Neutron: ML2 with flat, vlan (physnet1) and vxlan (tenant) networks, the agentless
  mechanism driver (``kiln_agentless``, see ml2_agentless/), the router, qos, trunk and
  segments service plugins and port security (segments reports routed networks to
  Placement, hence Neutron's ``[placement]`` credentials). No agents, no RPC workers:
  routers and floating IPs are database objects. The trunk plugin will not start
  without a trunk driver, so the openvswitch mechanism driver is loaded after ours (it
  binds nothing: ours binds first).
- Nova: the fake virt driver that keeps a stable node id across restarts
  (``FakeDriverWithoutFakeNodes``; plain ``FakeDriver`` refuses its second start);
  VIF plugging is not awaited; power-state sync is off (the fake driver forgets its
  servers on restart and the sync would mark them SHUTOFF); nova-compute gets no database
  options (only API, conductor, scheduler and nova-manage read ``nova-db.conf``).
- Glance: web-download imports may fetch from 127.0.0.1 on any port (the Glance image
  tests serve their image there; Glance refuses loopback addresses by default).
- Cinder: cinder's own fake driver (volumes live in its database only); the built-in
  ``__DEFAULT__`` volume type.
- Keystone: on MariaDB (SQLite's lock errors under the burst of service logins at start
  killed services), with the cheapest bcrypt cost and an in-process cache.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tests.support.cloud.layout import CloudLayout

Sections = dict[str, dict[str, str]]


def render(sections: Mapping[str, Mapping[str, str]]) -> str:
    lines: list[str] = []
    for name, options in sections.items():
        lines.append(f"[{name}]")
        lines += [f"{key} = {value}" for key, value in options.items()]
        lines.append("")
    return "\n".join(lines)


def _login(layout: CloudLayout, user: str) -> dict[str, str]:
    """Password credentials of a service user (project ``service``)."""
    return {"auth_url": layout.auth_url, "auth_type": "password",
            "project_domain_name": "Default", "user_domain_name": "Default",
            "project_name": "service", "username": user,
            "password": layout.service_password, "region_name": layout.region}


def _authtoken(layout: CloudLayout, user: str) -> dict[str, str]:
    return {"www_authenticate_uri": layout.auth_url, **_login(layout, user),
            "service_token_roles_required": "true"}


_POLICY = {"enforce_scope": "false", "enforce_new_defaults": "false"}


class Configs:
    """The config files of one layout, given where the database server is."""

    def __init__(self, layout: CloudLayout, db_host: str, db_port: int) -> None:
        self.layout = layout
        self.db_host = db_host
        self.db_port = db_port

    def db(self, name: str) -> str:
        return self.layout.db_url(name, self.db_host, self.db_port)

    def _common(self, service: str) -> dict[str, str]:
        return {"debug": "false", "log_file": str(self.layout.logs / f"{service}.log")}

    def keystone(self) -> Sections:
        s = self.layout.state / "keystone"
        return {
            "DEFAULT": self._common("keystone"),
            "database": {"connection": self.db("keystone")},
            "identity": {"password_hash_rounds": "4"},
            "token": {"provider": "fernet", "expiration": "7200"},
            "fernet_tokens": {"key_repository": str(s / "fernet-keys")},
            "fernet_receipts": {"key_repository": str(s / "fernet-keys")},
            "credential": {"key_repository": str(s / "credential-keys")},
            "cache": {"enabled": "true", "backend": "dogpile.cache.memory"},
            "oslo_policy": _POLICY,
        }

    def placement(self) -> Sections:
        return {
            "DEFAULT": self._common("placement-api"),
            "api": {"auth_strategy": "keystone"},
            "placement_database": {"connection": self.db("placement")},
            "oslo_policy": _POLICY,
            "keystone_authtoken": _authtoken(self.layout, "placement"),
        }

    def neutron(self) -> Sections:
        s = self.layout.state / "neutron"
        return {
            "DEFAULT": {
                **self._common("neutron-api"), "core_plugin": "ml2",
                # metering: OS::Neutron::MeteringLabel/Rule (tests/cloud/test_neutron_extensions.py)
                "service_plugins": "router,qos,trunk,segments,metering",
                "auth_strategy": "keystone",
                "allow_overlapping_ips": "true",
                "transport_url": self.layout.transport_url,
                "notify_nova_on_port_status_changes": "true",
                "notify_nova_on_port_data_changes": "true", "api_workers": "1",
                "rpc_workers": "0", "rpc_state_report_workers": "0", "state_path": str(s),
                "api_paste_config": str(s / "api-paste.ini"),
            },
            "database": {"connection": self.db("neutron")},
            "oslo_concurrency": {"lock_path": str(self.layout.state / "lock")},
            "oslo_policy": _POLICY,
            "keystone_authtoken": _authtoken(self.layout, "neutron"),
            "nova": _login(self.layout, "neutron"),
            "placement": _login(self.layout, "neutron"),
            "ml2": {"type_drivers": "flat,vlan,vxlan", "tenant_network_types": "vxlan",
                    # openvswitch binds nothing here (kiln_agentless binds first): it is
                    # loaded because the trunk plugin refuses to start without a driver
                    "mechanism_drivers": "kiln_agentless,openvswitch",
                    "extension_drivers": "port_security,qos"},
            "ml2_type_flat": {"flat_networks": "*"},
            "ml2_type_vlan": {"network_vlan_ranges": "physnet1:100:199,physnet2"},
            "ml2_type_vxlan": {"vni_ranges": "1:10000"},
            "securitygroup": {"enable_security_group": "true"},
        }

    def glance(self) -> Sections:
        s = self.layout.state / "glance"
        return {
            "DEFAULT": {**self._common("glance-api"), "enabled_backends": "file:file",
                        "worker_self_reference_url": self.layout.url("glance"),
                        "transport_url": self.layout.transport_url},
            "glance_store": {"default_backend": "file"},
            "file": {"filesystem_store_datadir": str(s / "images")},
            "os_glance_staging_store": {"filesystem_store_datadir": str(s / "staging")},
            "os_glance_tasks_store": {"filesystem_store_datadir": str(s / "tasks")},
            "database": {"connection": self.db("glance")},
            "paste_deploy": {"flavor": "keystone",
                             "config_file": str(s / "glance-api-paste.ini")},
            "oslo_concurrency": {"lock_path": str(self.layout.state / "lock")},
            "oslo_policy": _POLICY,
            "keystone_authtoken": _authtoken(self.layout, "glance"),
            # web-download imports from the tests' own HTTP servers (loopback, any port)
            "import_filtering_opts": {"allowed_hosts": "[127.0.0.1]", "allowed_ports": "[]"},
        }

    def nova(self) -> Sections:
        s = self.layout.state / "nova"
        return {
            "DEFAULT": {
                "debug": "false", "transport_url": self.layout.transport_url,
                "compute_driver": "fake.FakeDriverWithoutFakeNodes",
                "host": self.layout.compute_host, "my_ip": "127.0.0.1",
                "state_path": str(s), "instances_path": str(s / "instances"),
                "vif_plugging_is_fatal": "false", "vif_plugging_timeout": "0",
                "sync_power_state_interval": "-1", "graceful_shutdown_timeout": "5",
                "enabled_apis": "osapi_compute",
                # resize on one host: the fake driver has only one
                "allow_resize_to_same_host": "true",
            },
            "api": {"auth_strategy": "keystone"},
            "wsgi": {"api_paste_config": str(s / "api-paste.ini")},
            "conductor": {"workers": "1"},
            "scheduler": {"workers": "1", "discover_hosts_in_cells_interval": "-1"},
            "oslo_concurrency": {"lock_path": str(self.layout.state / "lock")},
            "oslo_policy": _POLICY,
            "vnc": {"enabled": "false"},
            "spice": {"enabled": "false"},
            "keystone_authtoken": _authtoken(self.layout, "nova"),
            "placement": _login(self.layout, "nova"),
            "neutron": _login(self.layout, "nova"),
            "service_user": {**_login(self.layout, "nova"),
                             "send_service_user_token": "true"},
            "glance": {"region_name": self.layout.region},
            "cinder": {**{k: v for k, v in _login(self.layout, "nova").items()
                          if k != "region_name"},
                       "os_region_name": self.layout.region,
                       "catalog_info": "volumev3::publicURL"},
        }

    def nova_db(self) -> Sections:
        return {"api_database": {"connection": self.db("nova_api")},
                "database": {"connection": self.db("nova")}}

    def cinder(self) -> Sections:
        s = self.layout.state / "cinder"
        return {
            "DEFAULT": {
                "debug": "false", "transport_url": self.layout.transport_url,
                "auth_strategy": "keystone", "state_path": str(s), "my_ip": "127.0.0.1",
                "host": "kiln-cinder", "api_paste_config": str(s / "api-paste.ini"),
                "enabled_backends": "fake", "osapi_volume_workers": "1",
                "graceful_shutdown_timeout": "5",
            },
            "fake": {"volume_driver": "cinder.tests.fake_driver.FakeLoggingVolumeDriver",
                     "volume_backend_name": "fake"},
            "database": {"connection": self.db("cinder")},
            "oslo_concurrency": {"lock_path": str(self.layout.state / "lock")},
            "oslo_policy": _POLICY,
            "keystone_authtoken": _authtoken(self.layout, "cinder"),
            "nova": _login(self.layout, "cinder"),
            "service_user": {**_login(self.layout, "cinder"),
                             "send_service_user_token": "true"},
        }

    def write_all(self) -> None:
        """Write every file (cheap; done before each start so a layout change applies)."""
        st = self.layout.state
        etc = self.layout.venv / "etc"
        files: dict[Path, Sections] = {
            st / "keystone" / "keystone.conf": self.keystone(),
            st / "placement" / "placement.conf": self.placement(),
            st / "neutron" / "neutron.conf": self.neutron(),
            st / "glance" / "glance-api.conf": self.glance(),
            st / "nova" / "nova.conf": self.nova(),
            st / "nova" / "nova-db.conf": self.nova_db(),
            st / "cinder" / "cinder.conf": self.cinder(),
        }
        for d in ("log", "lock", "glance/images", "glance/staging", "glance/tasks",
                  "nova/instances", "run"):
            (st / d).mkdir(parents=True, exist_ok=True)
        for path, sections in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render(sections))
        for src, dst in ((etc / "neutron" / "api-paste.ini", st / "neutron" / "api-paste.ini"),
                         (etc / "glance" / "glance-api-paste.ini",
                          st / "glance" / "glance-api-paste.ini"),
                         (etc / "nova" / "api-paste.ini", st / "nova" / "api-paste.ini"),
                         (etc / "cinder" / "api-paste.ini", st / "cinder" / "api-paste.ini")):
            dst.write_bytes(src.read_bytes())
