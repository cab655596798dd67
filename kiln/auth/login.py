"""Logging a browser in to Keystone on the dashboard's behalf.

The dashboard's page may talk only to the server that served it (its
Content-Security-Policy says so, and Keystone sends no CORS headers by default), so in
keystone mode it sends the user's name and password, or a token to re-scope, here; Kiln
asks Keystone (``[keystone_authtoken] www_authenticate_uri``, the address clients are
told to get tokens from) for a project-scoped token and hands it back. From then on the
page sends that token as ``X-Auth-Token`` like any client: the login gives it no other
power, and the token is checked on every request as usual. Nothing is stored here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypedDict

from oslo_config import cfg

from kiln.auth.errors import IdentityUnavailable, InvalidToken
from kiln.conf_identity import flavor

if TYPE_CHECKING:
    # keystoneauth1 (and requests under it) is imported by the first login only: every
    # `kiln serve` loads this module for its dashboard route, and a noauth server never
    # logs anyone in (tests/unit/test_startup_imports.py)
    from keystoneauth1.identity import generic

TIMEOUT = 10.0


class ProjectRef(TypedDict):
    id: str
    name: str


class LoginReply(TypedDict):
    token: str
    expires_at: str | None
    user: str
    user_id: str
    project: ProjectRef
    roles: list[str]
    #: the projects the user may switch to (Keystone's /v3/auth/projects)
    projects: list[ProjectRef]


class LoginRefused(ValueError):
    """A login body that names no credentials, or no project to scope to."""


def login_kind(conf: cfg.ConfigOpts) -> str:
    """What the dashboard's login looks like: ``keystone`` (a form) or ``none``."""
    return "keystone" if flavor(conf) == "keystone" else "none"


def identity_url(conf: cfg.ConfigOpts) -> str:
    group = conf.keystone_authtoken
    return str(group.www_authenticate_uri or group.auth_url or "")


def _text(body: Mapping[str, Any], key: str) -> str | None:
    value = body.get(key)
    return value.strip() or None if isinstance(value, str) else None


def _plugin(url: str, body: Mapping[str, Any]) -> generic.Password | generic.Token:
    from keystoneauth1.identity import generic

    project_id, project_name = _text(body, "project_id"), _text(body, "project_name")
    scope: dict[str, Any] = {"project_id": project_id}
    if project_name and not project_id:
        scope.update(project_name=project_name,
                     project_domain_name=_text(body, "project_domain_name") or "Default")
    token = _text(body, "token")
    if token:
        if not (token.isascii() and token.isprintable()):
            # it goes in a header: other text cannot be sent (and is no Keystone token)
            raise LoginRefused("The token is not a Keystone token.")
        if not project_id:
            raise LoginRefused("A token is re-scoped to a project_id.")
        return generic.Token(auth_url=url, token=token, **scope)
    username, password = _text(body, "username"), body.get("password")
    if not username or not isinstance(password, str) or not password:
        raise LoginRefused("Give a username and a password.")
    if not (project_id or project_name):
        raise LoginRefused("Give the project to log in to.")
    return generic.Password(auth_url=url, username=username, password=password,
                            user_domain_name=_text(body, "user_domain_name") or "Default",
                            **scope)


def _login(conf: cfg.ConfigOpts, body: Mapping[str, Any]) -> LoginReply:
    from keystoneauth1 import exceptions as ks_exc
    from keystoneauth1 import session

    url = identity_url(conf)
    group = conf.keystone_authtoken
    verify: bool | str = group.cafile if group.cafile and not group.insecure else (
        not group.insecure)
    plugin = _plugin(url, body)
    sess = session.Session(auth=plugin, verify=verify, timeout=TIMEOUT)
    try:
        access = plugin.get_access(sess)
        if not access.project_id:
            raise InvalidToken("the token is not scoped to a project")
        listed = sess.get(url.rstrip("/") + "/auth/projects",
                          authenticated=True, raise_exc=True).json().get("projects", [])
    except (ks_exc.Unauthorized, ks_exc.Forbidden, ks_exc.NotFound,
            ks_exc.BadRequest) as exc:
        raise InvalidToken(f"Keystone refused the login: {exc}") from exc
    except (ks_exc.ConnectionError, ks_exc.ConnectFailure, ks_exc.RequestTimeout,
            ks_exc.DiscoveryFailure, ks_exc.HttpError) as exc:
        raise IdentityUnavailable(f"Keystone could not be reached at {url}") from exc
    expires = access.expires.isoformat() if access.expires else None
    projects = sorted((ProjectRef(id=str(p["id"]), name=str(p.get("name") or p["id"]))
                       for p in listed if p.get("enabled", True)),
                      key=lambda p: (p["name"], p["id"]))
    return {"token": str(access.auth_token), "expires_at": expires,
            "user": str(access.username), "user_id": str(access.user_id),
            "project": {"id": str(access.project_id),
                        "name": str(access.project_name or access.project_id)},
            "roles": sorted(access.role_names or []), "projects": projects}


async def login(conf: cfg.ConfigOpts, body: Mapping[str, Any]) -> LoginReply:
    """A project-scoped token for the dashboard (keystoneauth blocks: run in a thread)."""
    return await asyncio.to_thread(_login, conf, body)
