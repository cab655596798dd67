"""Who is asking: the request context every EngineService call receives."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field

#: how OpenStack clients authenticate for a caller: (keystoneauth plugin name, its
#: options), e.g. a trust: ("password", {"auth_url": ..., "trust_id": ..., ...})
ClientAuth = tuple[str, Mapping[str, str]]


@dataclass(frozen=True)
class RequestContext:
    """A caller of one project. ``is_admin`` (every project's stacks by id, no quotas) is
    never the default: a caller is confined to ``project_id`` unless granted more.
    ``lists_all_projects`` grants only the ``global_tenant`` stack listing; the no-auth
    API gives it, as an operator's policy file gives Heat's ``stacks:global_index``."""

    project_id: str
    user_id: str = "admin"
    username: str = "admin"
    roles: tuple[str, ...] = ("member",)
    is_admin: bool = False
    lists_all_projects: bool = False
    request_id: str = field(default_factory=lambda: "req-" + str(uuid.uuid4()))
    auth_token: str | None = field(default=None, repr=False)
    #: set by the identity layer (kiln.engine.model.delegation): the credentials the
    #: stack's plugins call OpenStack with for this caller (the caller's token, or the
    #: stack's trust); None: Kiln's own ``[kiln_clients]`` credentials
    client_auth: ClientAuth | None = field(default=None, repr=False, compare=False)
    #: the request's X-Auth-User and X-Auth-Key as sent (heatclient's include_pass):
    #: what ``deferred_auth_method = password`` stores to act for the owner later
    auth_user: str | None = field(default=None, repr=False, compare=False)
    auth_key: str | None = field(default=None, repr=False, compare=False)
    #: set for work no request is behind on a stack with nothing delegated (no trust, no
    #: stored password): why this identity may call no OpenStack service at all. Kiln's
    #: own ``[kiln_clients]`` credentials are never a stand-in for a user's stack (they
    #: may be an admin's), nor is the token of whoever last acted on it
    no_credentials: str | None = field(default=None, repr=False, compare=False)
    #: the service types of the caller's token's catalog, when authentication read it
    #: (the catalog the caller's clients would see, without asking Keystone again)
    service_types: frozenset[str] | None = None
