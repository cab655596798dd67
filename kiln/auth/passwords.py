"""Stored passwords: Heat's older deferred authentication (``deferred_auth_method =
password``).

With it a request that creates a stack carries, beside its token, the caller's user name
and password (``X-Auth-User`` / ``X-Auth-Key``: heatclient's ``include_pass``); Kiln
keeps them encrypted with the stack (kiln.db.user_creds) and, for work no request of the
owner's is behind (a signal, scaling, recovery), logs in with them. Heat stores them
unchecked and logs in by user name with no domain, which Keystone v3 refuses; Kiln logs
in by the caller's user id (the token's) scoped to the stack's project, and checks the
password at create so a wrong one is a clear 403 then rather than a failed signal later.

The password never appears in a message or log line; keystoneauth1's request logging is
kept out of these calls. Every call runs in a worker thread, bounded by
``[keystone_authtoken] http_connect_timeout`` (10 s when unset).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import session
from keystoneauth1.identity import v3
from oslo_config import cfg

from kiln.auth.keystone import DEFAULT_TIMEOUT, UNREACHABLE, in_thread
from kiln.clients.settings import identity_url
from kiln.errors import AuthorizationFailure, ServiceUnavailable

LOG = logging.getLogger("kiln.auth.passwords")

T = TypeVar("T")


class StoredPasswords:
    """Logging in with a stack owner's stored password (plain values in and out; the
    engine's Delegation over this is kiln.server.PasswordDelegation)."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        from kiln.conf_loader import ConfigError

        url = identity_url(conf)
        if not url:
            raise ConfigError("deferred_auth_method = password needs Keystone's URL: "
                              "[clients_keystone] auth_uri or [keystone_authtoken] "
                              "www_authenticate_uri")
        self.auth_url = url
        self.timeout = float(conf.keystone_authtoken.http_connect_timeout
                             or DEFAULT_TIMEOUT)
        self.plain = session.Session(timeout=self.timeout)

    async def login(self, *, user_id: str, password: str, project_id: str,
                    purpose: str) -> tuple[str, tuple[str, ...]]:
        """A token of the user in the project, and its roles; AuthorizationFailure when
        Keystone refuses the password, ServiceUnavailable when it cannot be reached."""
        return await self._call(lambda: self._login(user_id, password, project_id, purpose),
                                purpose)

    def client_auth(self, user_id: str, password: str,
                    project_id: str) -> tuple[str, dict[str, str]]:
        """What the stack's OpenStack clients log in with: the owner's password."""
        return "v3password", {"auth_url": self.auth_url, "user_id": user_id,
                              "password": password, "project_id": project_id}

    async def _call(self, work: Callable[[], T], purpose: str) -> T:
        return await in_thread(work, self.timeout, purpose)

    def _login(self, user_id: str, password: str, project_id: str,
               purpose: str) -> tuple[str, tuple[str, ...]]:
        plugin = v3.Password(auth_url=self.auth_url, user_id=user_id, password=password,
                             project_id=project_id)
        try:
            access = plugin.get_access(self.plain)
        except UNREACHABLE:
            LOG.error("cannot reach Keystone %s", purpose)
            raise ServiceUnavailable(f"Keystone cannot be reached {purpose}; try again "
                                     "later.") from None
        except (ks_exc.Unauthorized, ks_exc.NotFound, ks_exc.Forbidden,
                ks_exc.BadRequest) as exc:
            LOG.warning("Keystone refused the password of user %s %s: %s", user_id,
                        purpose, type(exc).__name__)
            raise AuthorizationFailure(
                f"Keystone refused the password of user {user_id} {purpose} (changed, "
                "or the user disabled or no longer in the project).") from None
        return str(access.auth_token), tuple(access.role_names or ())
