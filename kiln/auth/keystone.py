"""Token validation against a real Keystone, as keystonemiddleware's auth_token does it.

Kiln's own service user (the ``[keystone_authtoken]`` auth plugin) asks Keystone about
each new token (``GET /v3/auth/tokens`` with ``X-Subject-Token``) through keystoneauth1;
the answer is cached (kiln.auth.cache) for ``token_cache_time``, never past the token's
expiry, failures included, so a flood of one garbage token costs one validation.
keystoneauth1 is synchronous; each validation runs in a worker thread and the caller
waits at most ``http_connect_timeout`` for it, so a Keystone that hangs costs a 503,
never a hung request.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from keystoneauth1 import access, adapter, session
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

from kiln.auth.cache import TokenCache, token_key
from kiln.auth.caller import Caller, from_access
from kiln.auth.errors import IdentityUnavailable, InvalidToken

LOG = logging.getLogger("kiln.auth")

#: keystonemiddleware leaves the timeout unbounded when unset; Kiln does not.
DEFAULT_TIMEOUT = 10.0
T = TypeVar("T")
#: keystoneauth1's failures meaning "Keystone cannot be reached (in time)"
UNREACHABLE = (ks_exc.ConnectFailure, ks_exc.ConnectTimeout, ks_exc.DiscoveryFailure,
               ks_exc.EndpointNotFound, ks_exc.RetriableConnectionFailure)


async def in_thread(work: Callable[[], T], limit: float, purpose: str) -> T:
    """``work()`` (blocking keystoneauth1 calls) in a worker thread, bounded: a Keystone
    that does not answer within ``limit`` seconds (plus one) is a clear 503 naming
    ``purpose``, never a hang."""
    from kiln.errors import ServiceUnavailable

    try:
        return await asyncio.wait_for(asyncio.to_thread(work), limit + 1)
    except TimeoutError:
        raise ServiceUnavailable(f"Keystone did not answer within {limit:g} s "
                                 f"{purpose}.") from None


def quiet_logger(name: str) -> logging.Logger:
    """A logger for keystoneauth1's ``logger=`` that drops everything: it logs request
    and response bodies at DEBUG, and secrets (trust ids, passwords) are in them."""
    quiet = logging.getLogger(name)
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    return quiet


class _Refused:
    """Cached answer: Keystone said this token is not valid."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


Answer = Caller | _Refused


def keystone_session(conf: cfg.ConfigOpts, group: str, *, timeout: float) -> session.Session:
    """A keystoneauth1 session with the auth plugin and TLS settings of ``group``."""
    from kiln.conf_loader import ConfigError

    try:
        auth = ks_loading.load_auth_from_conf_options(conf, group)
    except ks_exc.MissingRequiredOptions as exc:
        names = ", ".join(o.dest for o in exc.options)
        raise ConfigError(f"[{group}] is missing auth options: {names}") from None
    except ks_exc.NoMatchingPlugin as exc:
        raise ConfigError(f"[{group}] auth_type: {exc}") from None
    if auth is None:
        raise ConfigError(f"[{group}] auth_type is not set: Kiln needs its service user's "
                          "credentials to validate tokens (e.g. auth_type = password)")
    section = getattr(conf, group)
    verify: bool | str = not section.insecure
    if section.cafile and not section.insecure:
        verify = section.cafile
    cert = (section.certfile, section.keyfile) if section.certfile else None
    return session.Session(auth=auth, verify=verify, cert=cert, timeout=timeout)


class TokenValidator:
    """Validates user and service tokens for the keystone flavor."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        group = conf.keystone_authtoken
        self.timeout = float(group.http_connect_timeout or DEFAULT_TIMEOUT)
        self.session = keystone_session(conf, "keystone_authtoken", timeout=self.timeout)
        self._identity = adapter.Adapter(
            self.session, service_type="identity", interface=group.interface,
            region_name=group.region_name, version="3.0",
            connect_retries=group.http_request_max_retries,
            connect_retry_delay=0.2)
        self._catalog = bool(group.include_service_catalog)
        self._service_roles = frozenset(group.service_token_roles)
        self._service_roles_required = bool(group.service_token_roles_required)
        self.cache: TokenCache[Answer] = TokenCache(float(group.token_cache_time),
                                                     int(group.token_cache_size))
        self.www_authenticate_uri = group.www_authenticate_uri or _auth_url(conf)
        #: validations sent to Keystone (a figure the bench reports)
        self.remote_validations = 0

    async def authenticate(self, user_token: str | None,
                           service_token: str | None) -> Caller:
        """The caller a request's tokens identify, or InvalidToken/IdentityUnavailable."""
        service: Caller | None = None
        allow_expired = False
        if service_token:
            try:
                service = await self.validate(service_token)
            except InvalidToken:
                raise InvalidToken("invalid service token") from None
            passed = bool(self._service_roles.intersection(service.roles))
            if self._service_roles_required and not passed:
                raise InvalidToken("service token without a service role")
            allow_expired = passed
        if not user_token:
            raise InvalidToken("no X-Auth-Token")
        user = await self.validate(user_token, allow_expired=allow_expired)
        return user.with_service(service)

    async def validate(self, token: str, *, allow_expired: bool = False) -> Caller:
        key = token_key(token.strip()) + ("/expired-ok" if allow_expired else "")
        answer = self.cache.get(key)
        if answer is None:
            answer = await self.cache.single(
                key, lambda: self._remote(token.strip(), allow_expired, key))
        if isinstance(answer, _Refused):
            raise InvalidToken(answer.reason)
        if not allow_expired and _expired(answer):
            raise InvalidToken("token expired")
        return answer

    async def _remote(self, token: str, allow_expired: bool, key: str) -> Answer:
        self.remote_validations += 1
        try:
            answer = await asyncio.wait_for(
                asyncio.to_thread(self._fetch, token, allow_expired), self.timeout)
        except TimeoutError:
            raise IdentityUnavailable(
                f"Keystone did not answer within {self.timeout:g} s") from None
        if isinstance(answer, Caller):
            self.cache.put(key, answer, None if allow_expired else answer.expires_at)
        else:
            self.cache.put(key, answer, None)
        return answer

    def _fetch(self, token: str, allow_expired: bool) -> Answer:
        params: dict[str, Any] = {}
        if allow_expired:
            params["allow_expired"] = 1
        if not self._catalog:
            params["nocatalog"] = 1
        try:
            reply = self._identity.get("/auth/tokens", params=params, raise_exc=False,
                                       headers={"X-Subject-Token": token})
        except (ks_exc.ConnectFailure, ks_exc.ConnectTimeout, ks_exc.DiscoveryFailure,
                ks_exc.EndpointNotFound) as exc:
            LOG.error("cannot reach Keystone to validate a token: %s", exc)
            raise IdentityUnavailable("Keystone cannot be reached") from None
        except ks_exc.Unauthorized:
            LOG.error("Keystone refused Kiln's own [keystone_authtoken] credentials")
            raise IdentityUnavailable("Keystone refused Kiln's service credentials") from None
        except ks_exc.ClientException as exc:
            LOG.error("token validation failed: %s", exc)
            raise IdentityUnavailable("token validation failed") from None
        if reply.status_code == 404:
            return _Refused("token not found, expired or revoked")
        if reply.status_code != 200:
            LOG.error("Keystone answered %s to a token validation: %s", reply.status_code,
                      reply.text[:200])
            raise IdentityUnavailable(f"Keystone answered {reply.status_code}")
        return read_token(reply.json, token, allow_expired)


def read_token(body: Callable[[], Any], token: str, allow_expired: bool) -> Answer:
    """The caller of a validation's 200 answer (``body`` reads its JSON), refused when
    the answer is not a token or the token has expired."""
    try:
        info = access.create(body=body(), auth_token=token)
        expired = not allow_expired and info.will_expire_soon(stale_duration=0)
        caller = from_access(info, token)
    except (ValueError, TypeError, KeyError):
        # not JSON (ValueError), or not a token document: keystoneauth indexes the body
        # as its properties are read (KeyError, TypeError, ValueError for a bad time;
        # ValueError too when it is neither a v2 nor a v3 token)
        LOG.warning("Keystone's token validation answer is not a token")
        return _Refused("invalid token contents")
    if expired:
        return _Refused("token expired")
    return caller


def _expired(caller: Caller) -> bool:
    return (caller.expires_at is not None
            and caller.expires_at <= datetime.datetime.now(datetime.UTC))


def _auth_url(conf: cfg.ConfigOpts) -> str:
    try:
        return str(conf.keystone_authtoken.auth_url or "")
    except cfg.NoSuchOptError:
        return ""


class KeystoneAuthenticator:
    """The keystone flavor: X-Auth-Token (and X-Service-Token) validated by Keystone."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self.validator = TokenValidator(conf)
        self.www_authenticate = f'Keystone uri="{self.validator.www_authenticate_uri}"'

    async def authenticate(self, path: str, headers: Mapping[str, str]) -> Caller:
        return await self.validator.authenticate(headers.get("x-auth-token"),
                                                 headers.get("x-service-token"))
