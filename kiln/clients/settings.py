"""How Kiln reaches an OpenStack cloud: credentials plus per-service connection settings,
read from the configuration the way Heat reads its ``[clients]`` sections.

- Credentials (a single-user Kiln): ``[kiln_clients] cloud`` names a cloud in a
  clouds.yaml (``clouds_file`` or openstacksdk's search path), or ``auth_url``,
  ``username``, ``password``, ``project_name`` give them directly; ``[clients_keystone]
  auth_uri`` is the Keystone URL when ``auth_url`` is unset. With none of these, no cloud
  is configured: the cloud resource types are unavailable, as Heat's are when the
  catalog lacks their service.
- Per service: ``[clients_<name>] endpoint_type`` / ``ca_file`` / ``cert_file`` /
  ``key_file`` / ``insecure``, each falling back to ``[clients]``; the region is
  ``region_name_for_services`` except for ``shared_services_types``, which use
  ``region_name_for_shared_services`` when it is set; ``[kiln_clients] endpoint_override``
  replaces a service type's catalog URL.

The result is one frozen :class:`CloudSettings`, turned into openstacksdk's connection
arguments by :meth:`CloudSettings.connection_kwargs`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

#: Heat's client plugin name -> the catalog service types it serves (first = sdk's name)
CLIENT_SERVICE_TYPES: Mapping[str, tuple[str, ...]] = {
    "nova": ("compute",),
    "neutron": ("network",),
    "glance": ("image",),
    "cinder": ("block-storage", "volumev3"),
    "keystone": ("identity",),
    "swift": ("object-store",),
    "heat": ("orchestration",),
    "octavia": ("load-balancer",),
    "designate": ("dns",),
    "manila": ("shared-file-system", "sharev2"),
    "trove": ("database",),
    "magnum": ("container-infra",),
    "zaqar": ("messaging",),
    "mistral": ("workflowv2",),
    "aodh": ("alarming",),
    "barbican": ("key-manager",),
    "zun": ("container",),
    "senlin": ("clustering",),
    "blazar": ("reservation",),
    "sahara": ("data-processing",),
    "monasca": ("monitoring",),
    "ironic": ("baremetal",),
    "vitrage": ("rca",),
}

_INTERFACES = {"publicURL": "public", "internalURL": "internal", "adminURL": "admin"}


def _opt(conf: Any, group: str, name: str) -> Any:
    section = getattr(conf, group, None)
    return getattr(section, name, None) if section is not None else None


@dataclass(frozen=True)
class ServiceSettings:
    """Connection settings of one client (Heat's ``[clients_<name>]`` after fallback)."""

    interface: str = "public"
    region: str | None = None
    endpoint_override: str | None = None
    verify: bool | str = True
    cert: str | tuple[str, str] | None = None


@dataclass(frozen=True)
class CloudSettings:
    """Credentials and per-service settings; ``configured`` is False without a cloud."""

    auth: Mapping[str, str] = field(default_factory=dict)
    #: the keystoneauth plugin ``auth`` is for (a trust or a user's token: see
    #: :meth:`acting_as`)
    auth_type: str = "password"
    cloud: str | None = None
    clouds_file: str | None = None
    region: str | None = None
    services: Mapping[str, ServiceSettings] = field(default_factory=dict)
    retry_limit: int = 2
    retry_initial_delay: float = 0.5
    max_workers: int = 64
    catalog_cache_seconds: int = 300

    @property
    def configured(self) -> bool:
        return bool(self.cloud) or bool(self.auth.get("auth_url"))

    def key(self) -> tuple[Any, ...]:
        """What makes two settings share one connection (the secrets included)."""
        return (self.auth_type, tuple(sorted(self.auth.items())), self.cloud,
                self.clouds_file, self.region, tuple(sorted(self.services.items())))

    def overridden_types(self) -> frozenset[str]:
        """The service types ``endpoint_override`` gives an endpoint, catalog or not."""
        return frozenset(t for c, s in self.services.items() if s.endpoint_override
                         for t in CLIENT_SERVICE_TYPES.get(c, ()))

    def acting_as(self, auth_type: str, auth: Mapping[str, str]) -> CloudSettings:
        """These settings with another identity (no clouds.yaml cloud): the stack owner's
        token, or Kiln's trustee user through the owner's trust."""
        return replace(self, auth=dict(auth), auth_type=auth_type, cloud=None,
                       clouds_file=None)

    def connection_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``openstack.connect`` (or ``config.get_one``)."""
        kwargs: dict[str, Any] = {}
        if self.cloud:
            kwargs["cloud"] = self.cloud
        if self.auth:
            kwargs["auth"] = dict(self.auth)
            kwargs["auth_type"] = self.auth_type
        if self.region:
            kwargs["region_name"] = self.region
        for client, settings in self.services.items():
            for service_type in CLIENT_SERVICE_TYPES.get(client, ()):
                prefix = service_type.replace("-", "_")
                kwargs[f"{prefix}_interface"] = settings.interface
                if settings.region:
                    kwargs[f"{prefix}_region_name"] = settings.region
                if settings.endpoint_override:
                    kwargs[f"{prefix}_endpoint_override"] = settings.endpoint_override
        default = self.services.get("_default")
        if default is not None:
            kwargs["interface"] = default.interface
            kwargs["verify"] = default.verify
            if default.cert:
                kwargs["cert"] = default.cert
        return kwargs

    @classmethod
    def from_conf(cls, conf: Any) -> CloudSettings:
        auth: dict[str, str] = {}
        auth_url = _opt(conf, "kiln_clients", "auth_url") or _opt(conf, "clients_keystone",
                                                                  "auth_uri")
        if auth_url and _opt(conf, "kiln_clients", "username"):
            url = str(auth_url).rstrip("/")
            auth = {"auth_url": url if url.endswith("/v3") else url + "/v3",
                    "username": str(_opt(conf, "kiln_clients", "username")),
                    "password": str(_opt(conf, "kiln_clients", "password") or ""),
                    "project_name": str(_opt(conf, "kiln_clients", "project_name") or ""),
                    "user_domain_name": str(_opt(conf, "kiln_clients", "user_domain_name")
                                            or "Default"),
                    "project_domain_name": str(_opt(conf, "kiln_clients",
                                                    "project_domain_name") or "Default")}
        region = getattr(conf, "region_name_for_services", None)
        shared_region = getattr(conf, "region_name_for_shared_services", None)
        shared_types = set(getattr(conf, "shared_services_types", None) or ())
        overrides: Mapping[str, str] = _opt(conf, "kiln_clients", "endpoint_override") or {}
        services: dict[str, ServiceSettings] = {"_default": _service(conf, "clients", None)}
        for client, types in CLIENT_SERVICE_TYPES.items():
            svc_region = shared_region if shared_region and shared_types & set(types) else None
            override = next((overrides[t] for t in types if t in overrides), None)
            services[client] = _service(conf, f"clients_{client}", "clients",
                                        region=svc_region, override=override)
        return cls(
            auth=auth,
            cloud=_opt(conf, "kiln_clients", "cloud"),
            clouds_file=_opt(conf, "kiln_clients", "clouds_file"),
            region=region,
            services=services,
            retry_limit=int(getattr(conf, "client_retry_limit", 2) or 0),
            retry_initial_delay=float(_opt(conf, "kiln_clients", "retry_initial_delay")
                                      or 0.5),
            max_workers=int(_opt(conf, "kiln_clients", "max_workers") or 64),
            catalog_cache_seconds=int(_opt(conf, "kiln_clients", "catalog_cache_seconds")
                                      or 0),
        )


def identity_url(conf: Any) -> str | None:
    """The Keystone v3 URL users' tokens come from: ``[clients_keystone] auth_uri``, else
    ``[keystone_authtoken]``'s (www_authenticate_uri, auth_url)."""
    url = (_opt(conf, "clients_keystone", "auth_uri")
           or _opt(conf, "keystone_authtoken", "www_authenticate_uri")
           or _opt(conf, "keystone_authtoken", "auth_url"))
    if not url:
        return None
    url = str(url).rstrip("/")
    return url if url.endswith("/v3") else url + "/v3"


def _service(conf: Any, group: str, fallback: str | None, *, region: str | None = None,
             override: str | None = None) -> ServiceSettings:
    def get(name: str) -> Any:
        value = _opt(conf, group, name)
        if value is None and fallback is not None:
            value = _opt(conf, fallback, name)
        return value

    interface = str(get("endpoint_type") or "public")
    verify: bool | str = True
    if get("insecure"):
        verify = False
    elif get("ca_file"):
        verify = str(get("ca_file"))
    cert_file, key_file = get("cert_file"), get("key_file")
    cert: str | tuple[str, str] | None = None
    if cert_file:
        cert = (str(cert_file), str(key_file)) if key_file else str(cert_file)
    return ServiceSettings(interface=_INTERFACES.get(interface, interface), region=region,
                           endpoint_override=override, verify=verify, cert=cert)
