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

import contextlib
from typing import Any

from kiln.clients.manager import (
    CloudClients,
    CloudNotConfigured,
    acting_clients,
    clients_from_conf,
)
from kiln.clients.settings import CLIENT_SERVICE_TYPES, CloudSettings, identity_url

__all__ = ["CLIENT_SERVICE_TYPES", "CloudClients", "CloudNotConfigured", "CloudSettings",
           "clients_for", "clients_for_owner", "clients_from_conf", "service_catalog"]


#: the authentication modes whose tokens are Keystone's, usable to call OpenStack
_KEYSTONE_TOKENS = ("keystone", "standalone")


def clients_for_owner(conf: Any, owner: Any | None = None) -> CloudClients:
    """The clients a stack's plugins act with. *owner* is the request context the work
    acts for: with ``client_auth`` (a stack's trust, kiln.engine.model.delegation) they
    act through it; with a Keystone token of the caller's (keystone and standalone
    modes) they act with that token, as Heat's clients do; otherwise (noauth) with
    ``[kiln_clients]``'s credentials. An owner with ``no_credentials`` (deferred work on
    a stack nothing was delegated for) gets none: AuthorizationFailure with its reason."""
    refused = getattr(owner, "no_credentials", None)
    if refused:
        from kiln.errors import AuthorizationFailure

        raise AuthorizationFailure(str(refused))
    auth = getattr(owner, "client_auth", None)
    token = getattr(owner, "auth_token", None)
    if auth is None and token and _keystone_tokens(conf):
        url = identity_url(conf)
        if url:
            auth = ("v3token", {"auth_url": url, "token": token,
                                "project_id": str(owner.project_id)})  # type: ignore[union-attr]
    if auth is None:
        return clients_from_conf(conf)
    auth_type, options = auth
    return acting_clients(CloudSettings.from_conf(conf).acting_as(auth_type, options))


def _keystone_tokens(conf: Any) -> bool:
    from kiln.conf_identity import flavor

    try:
        return flavor(conf) in _KEYSTONE_TOKENS
    except AttributeError:  # oslo's NoSuchOptError: a configuration without them
        return False


async def service_catalog(conf: Any, owner: Any | None = None) -> frozenset[str]:
    """The service types in the catalog the stack's owner sees (empty without a cloud):
    the catalog of the caller's token when authentication read it, with Neutron's
    extensions asked with that token (the types needing one, ExtraRouteSet, Trunk,
    QoS..., are available only with it, as in Heat), else the one the owner's clients
    get from Keystone."""
    known = getattr(owner, "service_types", None)
    if known is not None and getattr(owner, "client_auth", None) is None:
        types = frozenset(known) | CloudSettings.from_conf(conf).overridden_types()
        if "network" in types:
            with contextlib.suppress(CloudNotConfigured):  # no Keystone URL: none
                types |= await clients_for_owner(conf, owner).network_extensions()
        return types
    return await clients_for_owner(conf, owner).service_types()


def clients_for(runtime: Any) -> CloudClients:
    """The clients a plugin running under *runtime* acts with."""
    own = getattr(runtime, "clients", None)
    if isinstance(own, CloudClients):
        return own
    return clients_from_conf(runtime.conf)
