"""What authentication established about a request's caller.

Built from a validated Keystone token (or by a custom backend); the API derives the
engine's RequestContext and oslo.policy's credentials from it. It never holds a
password; ``auth_token`` is the caller's own token, kept for work done on its behalf.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from keystoneauth1 import access


@dataclass(frozen=True)
class Caller:
    user_id: str
    username: str = ""
    project_id: str | None = None
    project_name: str | None = None
    project_domain_id: str | None = None
    user_domain_id: str | None = None
    domain_id: str | None = None
    system_scope: str | None = None
    roles: tuple[str, ...] = ()
    is_admin_project: bool = True
    auth_token: str | None = field(default=None, repr=False)
    expires_at: datetime.datetime | None = None
    service_user_id: str | None = None
    service_project_id: str | None = None
    service_roles: tuple[str, ...] = ()
    #: the service types of the token's catalog (None: the token came without one)
    service_types: frozenset[str] | None = None

    def policy_credentials(self) -> dict[str, Any]:
        """oslo.policy's credentials, with the keys oslo.context gives them."""
        return {
            "user_id": self.user_id, "user_domain_id": self.user_domain_id,
            "project_id": self.project_id, "project_domain_id": self.project_domain_id,
            "domain_id": self.domain_id, "system": self.system_scope,
            "system_scope": self.system_scope, "roles": list(self.roles),
            "is_admin_project": self.is_admin_project,
            "service_user_id": self.service_user_id,
            "service_project_id": self.service_project_id,
            "service_roles": list(self.service_roles),
        }

    def with_service(self, service: Caller | None) -> Caller:
        if service is None:
            return self
        return Caller(**{**self.__dict__, "service_user_id": service.user_id,
                         "service_project_id": service.project_id,
                         "service_roles": service.roles})


def from_access(info: access.AccessInfo, token: str) -> Caller:
    """A Caller from keystoneauth1's view of a validated token."""
    system = "all" if getattr(info, "system_scoped", False) else None
    return Caller(
        user_id=str(info.user_id), username=str(info.username or ""),
        project_id=info.project_id, project_name=info.project_name,
        project_domain_id=info.project_domain_id, user_domain_id=info.user_domain_id,
        domain_id=info.domain_id if info.domain_scoped else None,
        system_scope=system,
        roles=tuple(info.role_names or ()),
        is_admin_project=bool(getattr(info, "is_admin_project", True)),
        auth_token=token, expires_at=info.expires, service_types=_service_types(info))


def _service_types(info: access.AccessInfo) -> frozenset[str] | None:
    if not info.has_service_catalog():
        return None
    return frozenset(str(entry.get("type", "")) for entry in
                     (info.service_catalog.catalog or []))
