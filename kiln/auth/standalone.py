"""The standalone flavor: Kiln logs the caller in itself.

Each request names its user and password (``X-Auth-User`` / ``X-Auth-Key``, as
heatclient sends them when given a username and password without a token) and the
project in its URL; Kiln exchanges them for a token scoped to that project at
``[clients_keystone] auth_uri``, as Heat's auth_password middleware does. No service user
or admin token is configured. The resulting identity is cached (bounded, never past the
token's expiry) under a digest of everything that produced it, password included, so a
wrong password never matches a cached entry and the cache holds no password.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import session
from keystoneauth1.identity import v3
from oslo_config import cfg

from kiln.auth.cache import TokenCache
from kiln.auth.caller import Caller, from_access
from kiln.auth.errors import IdentityUnavailable, InvalidToken

TIMEOUT = 10.0
CACHE_SECONDS = 300.0
CACHE_SIZE = 10000


def _tls(conf: cfg.ConfigOpts) -> tuple[bool | str, tuple[str, str] | None]:
    own, common = conf.clients_keystone, conf.clients
    insecure = own.insecure if own.insecure is not None else common.insecure
    ca_file = own.ca_file or common.ca_file
    verify: bool | str = ca_file if ca_file and not insecure else not insecure
    cert_file, key_file = own.cert_file or common.cert_file, own.key_file or common.key_file
    return verify, ((cert_file, key_file) if cert_file else None)


class StandaloneAuthenticator:
    def __init__(self, conf: cfg.ConfigOpts) -> None:
        from kiln.conf_loader import ConfigError

        self.auth_uri = conf.clients_keystone.auth_uri
        if not self.auth_uri:
            raise ConfigError("[clients_keystone] auth_uri is required when "
                              "[paste_deploy] flavor = standalone")
        # Heat's standalone middleware quotes the URI with single quotes
        self.www_authenticate = f"Keystone uri='{self.auth_uri}'"
        verify, cert = _tls(conf)
        self.session = session.Session(verify=verify, cert=cert, timeout=TIMEOUT)
        self.cache: TokenCache[Caller] = TokenCache(CACHE_SECONDS, CACHE_SIZE)

    async def authenticate(self, path: str, headers: Mapping[str, str]) -> Caller:
        username, password = headers.get("x-auth-user"), headers.get("x-auth-key")
        parts = path.split("/")
        project_id = parts[2] if len(parts) > 2 else ""
        domain_id = headers.get("x-user-domain-id") or "default"
        if not (username and password and project_id):
            raise InvalidToken("no X-Auth-User/X-Auth-Key, or no project in the URL")
        key = hashlib.sha256("\0".join(
            (self.auth_uri, username, password, project_id, domain_id)).encode(
                "utf-8", "surrogateescape")).hexdigest()
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        return await self.cache.single(
            key, lambda: self._login(key, username, password, project_id, domain_id))

    async def _login(self, key: str, username: str, password: str, project_id: str,
                     domain_id: str) -> Caller:
        auth = v3.Password(auth_url=self.auth_uri, username=username, password=password,
                           user_domain_id=domain_id, project_id=project_id)
        try:
            info = await asyncio.wait_for(asyncio.to_thread(auth.get_access, self.session),
                                          TIMEOUT)
        except TimeoutError:
            raise IdentityUnavailable(f"Keystone did not answer within {TIMEOUT:g} s") from None
        except (ks_exc.Unauthorized, ks_exc.Forbidden, ks_exc.NotFound,
                ks_exc.AuthorizationFailure, ks_exc.BadRequest):
            raise InvalidToken("Keystone refused the user's credentials") from None
        except (ks_exc.ConnectFailure, ks_exc.ConnectTimeout, ks_exc.DiscoveryFailure):
            raise IdentityUnavailable("Keystone cannot be reached") from None
        except ks_exc.ClientException as exc:
            raise IdentityUnavailable(f"login failed: {type(exc).__name__}") from None
        caller = from_access(info, info.auth_token or "")
        self.cache.put(key, caller, caller.expires_at)
        return caller
