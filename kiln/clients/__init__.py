"""Kiln's client layer for OpenStack services, built on openstacksdk.

- :mod:`kiln.clients.settings`: credentials and Heat's ``[clients*]`` options;
- :mod:`kiln.clients.manager`: :class:`CloudClients`, every call off the event loop,
  retried when transient, catalog lookups;
- :mod:`kiln.clients.rest`: one REST call through a service's sdk proxy;
- :mod:`kiln.clients.errors`: transient / not found / Heat's error names.

Plugins reach it only as :func:`clients_for` ``(self.runtime)``: the runtime's own
``clients`` when the engine provides one (the request's identity: a token or a trust,
see the identity layer), else the single-user credentials of ``[kiln_clients]``.
"""

from __future__ import annotations

from typing import Any

from kiln.clients.manager import CloudClients, CloudNotConfigured, clients_from_conf
from kiln.clients.settings import CLIENT_SERVICE_TYPES, CloudSettings

__all__ = ["CLIENT_SERVICE_TYPES", "CloudClients", "CloudNotConfigured", "CloudSettings",
           "clients_for", "clients_for_owner", "clients_from_conf", "service_catalog"]


def clients_for_owner(conf: Any, owner: Any | None = None) -> CloudClients:
    """The clients a stack's plugins act with. *owner* is the request context the stack
    belongs to; the seam for the identity layer (acting with the request's token or a
    trust). Without an identity service these are ``[kiln_clients]``'s credentials."""
    return clients_from_conf(conf)


async def service_catalog(conf: Any, owner: Any | None = None) -> frozenset[str]:
    """The service types in the catalog the stack's owner sees (empty without a cloud)."""
    return await clients_for_owner(conf, owner).service_types()


def clients_for(runtime: Any) -> CloudClients:
    """The clients a plugin running under *runtime* acts with."""
    own = getattr(runtime, "clients", None)
    if isinstance(own, CloudClients):
        return own
    return clients_from_conf(runtime.conf)
