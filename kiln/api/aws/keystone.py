"""EC2 signatures checked by Keystone (``POST /v3/ec2tokens``), as Heat's ec2token does.

In keystone mode Kiln never sees an EC2 secret: it sends Keystone what the client signed
(access key, signature, host, verb, path, parameters, headers, body hash) with its own
service token (``identity:ec2tokens_validate`` wants the admin or service role), and
Keystone answers with a token of the credential's user, or 401. The request's time fields
are checked here first (AWS's 15-minute window, as :func:`check_time`), so a stale
request costs Keystone nothing.

Two things Kiln does beyond Heat's middleware:

- the path is tried as sent and decoded (botocore signs the first, keystoneclient's
  signer and pre-signed URLs the second), and a query-signed SigV4 request has its
  ``X-Amz-Signature`` left out of the parameters Keystone rebuilds the query from and is
  tried with an unsigned payload too (a pre-signed URL signs none); only a refusal
  (401) leads to the next variant, so a genuine request costs one call;
- an access key Kiln issued for a stack's resource (recorded by the engine beside the
  Keystone credential) is confined to that stack and acts in the stack's project, as in
  the no-auth setup; any other Keystone EC2 credential acts as its user, in its project.

Identical signed requests (the same pre-signed URL polled again) reuse Keystone's
acceptance for at most ``MAX_CACHE_SECONDS``, never past the token's expiry; a refusal is
asked again each time.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote, unquote

from keystoneauth1 import adapter
from keystoneauth1 import exceptions as ks_exc
from oslo_config import cfg

from kiln.api.aws import errors
from kiln.api.aws.credentials import (
    DEFAULT_WINDOW,
    CredentialLookup,
    Ec2Identity,
    check_dated,
    check_time,
)
from kiln.api.aws.request import Claim, SignedRequest, parse_claim
from kiln.auth.cache import TokenCache
from kiln.auth.keystone import DEFAULT_TIMEOUT, keystone_session

LOG = logging.getLogger("kiln.api.aws")

MAX_CACHE_SECONDS = 30.0
UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD"


class _Answer:
    """Keystone's verdict on one signed request: a token's identity, or a refusal."""

    def __init__(self, *, identity: Ec2Identity | None = None,
                 refusal: errors.AwsError | None = None) -> None:
        self.identity = identity
        self.refusal = refusal


def _title(name: str) -> str:
    """``x-amz-date`` -> ``X-Amz-Date``: the header names as webob hands them to Heat
    (Keystone's signer looks up ``Authorization`` and ``X-Amz-Date`` by exact name)."""
    return "-".join(part.capitalize() for part in name.split("-"))


def _variants(request: SignedRequest, claim: Claim,
              presigned: bool) -> Iterator[tuple[str, str]]:
    """(path, body hash) pairs the client may have signed, likeliest first."""
    path = request.raw_path or "/"
    decoded = unquote(path)
    if claim.version == 2:
        paths = (decoded, path) if presigned else (path, decoded)
    else:
        paths = (path, quote(decoded, safe="/~"))
    body_hash = hashlib.sha256(request.body).hexdigest()
    declared = request.headers.get("x-amz-content-sha256")
    if declared in (body_hash, UNSIGNED_PAYLOAD):
        hashes: tuple[str, ...] = (declared,)
    elif claim.version == 4 and claim.location == "query":
        hashes = (UNSIGNED_PAYLOAD, body_hash)   # a pre-signed URL signs no payload
    else:
        hashes = (body_hash,)
    for one in dict.fromkeys(paths):
        for digest in hashes:
            yield one, digest


def ec2_credentials(request: SignedRequest, claim: Claim, path: str,
                    body_hash: str) -> dict[str, Any]:
    """The body of ``POST /v3/ec2tokens`` for ``request`` signed over ``path``."""
    params = dict(request.params)
    params.pop("Signature", None)
    if claim.version == 4 and claim.location == "query":
        params.pop("X-Amz-Signature", None)
    headers = {_title(k): v for k, v in request.headers.items()}
    return {"ec2Credentials": {
        "access": claim.access_key, "signature": claim.signature, "host": request.host,
        "verb": request.method.upper(), "path": path, "params": params,
        "headers": headers, "body_hash": body_hash}}


class KeystoneEc2Authenticator:
    """:class:`kiln.api.aws.credentials.Authenticator` over Keystone's ec2tokens.

    ``issued`` finds the keypairs Kiln recorded for stacks' resources (the engine's
    ``find_ec2_keypair``), to confine those keys to their stack."""

    def __init__(self, conf: cfg.ConfigOpts, issued: CredentialLookup | None = None, *,
                 window: float = DEFAULT_WINDOW,
                 clock: Callable[[], float] = time.time) -> None:
        group = conf.keystone_authtoken
        self.timeout = float(group.http_connect_timeout or DEFAULT_TIMEOUT)
        session = keystone_session(conf, "keystone_authtoken", timeout=self.timeout)
        self._identity = adapter.Adapter(
            session, service_type="identity", interface=group.interface,
            region_name=group.region_name, version="3.0",
            connect_retries=group.http_request_max_retries, connect_retry_delay=0.2)
        ttl = min(float(group.token_cache_time), MAX_CACHE_SECONDS)
        self.cache: TokenCache[_Answer] = TokenCache(ttl, int(group.token_cache_size))
        self.issued = issued
        self.window = window
        self.clock = clock
        #: calls made to ec2tokens (a figure tests and the bench read)
        self.remote_checks = 0

    async def authenticate(self, request: SignedRequest, *, presigned: bool = False,
                           agent_read: bool = False) -> Ec2Identity:
        claim = parse_claim(request)
        if not (presigned and claim.version == 2):
            check_time(claim, self.clock(), self.window, presigned=presigned)
        answer: _Answer | None = None
        for path, body_hash in _variants(request, claim, presigned):
            body = ec2_credentials(request, claim, path, body_hash)
            answer = await self._check(body)
            if answer.identity is not None or not isinstance(answer.refusal,
                                                             errors.AccessDenied):
                break
        assert answer is not None
        if answer.identity is None:
            assert answer.refusal is not None
            raise answer.refusal
        identity = await self._scoped(answer.identity)
        check_dated(claim, identity, presigned=presigned, agent_read=agent_read)
        return identity

    async def _scoped(self, identity: Ec2Identity) -> Ec2Identity:
        """A key Kiln issued for a stack's resource acts on that stack, in its project."""
        if self.issued is None:
            return identity
        record = await self.issued.lookup(identity.access_key)
        if record is None or record.identity.stack_id is None:
            return identity
        mine = record.identity
        return Ec2Identity(access_key=identity.access_key, project_id=mine.project_id,
                           user_id=identity.user_id, username=identity.username,
                           roles=identity.roles, stack_id=mine.stack_id,
                           resource_name=mine.resource_name, auth_token=identity.auth_token)

    async def _check(self, body: dict[str, Any]) -> _Answer:
        text = json.dumps(body, sort_keys=True)
        key = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        return await self.cache.single(key, lambda: self._remote(key, body))

    async def _remote(self, key: str, body: dict[str, Any]) -> _Answer:
        self.remote_checks += 1
        try:
            answer, expires = await asyncio.wait_for(asyncio.to_thread(self._post, body),
                                                     self.timeout)
        except TimeoutError:
            raise errors.ServiceUnavailable(
                f"Keystone did not answer within {self.timeout:g} s") from None
        if answer.identity is not None:
            # a refusal is never kept: the same signed URL may be good again a moment
            # later (its stack user re-enabled by a resume), and Heat asks every time
            self.cache.put(key, answer, expires)
        return answer

    def _post(self, body: dict[str, Any]) -> tuple[_Answer, dt.datetime | None]:
        access = body["ec2Credentials"]["access"]
        try:
            reply = self._identity.post("/ec2tokens", json=body, raise_exc=False)
        except (ks_exc.ConnectFailure, ks_exc.ConnectTimeout, ks_exc.DiscoveryFailure,
                ks_exc.EndpointNotFound) as exc:
            LOG.error("cannot reach Keystone to check an EC2 signature: %s", exc)
            raise errors.ServiceUnavailable("Keystone cannot be reached") from None
        except ks_exc.Unauthorized:
            LOG.error("Keystone refused Kiln's own service credentials ([keystone_authtoken])")
            raise errors.InternalFailure("Service misconfigured") from None
        except ks_exc.ClientException as exc:
            LOG.error("EC2 signature check failed: %s", type(exc).__name__)
            raise errors.ServiceUnavailable("Keystone cannot be reached") from None
        status = reply.status_code
        if status == 200:
            return self._accepted(access, reply.json(), reply.headers.get("X-Subject-Token"))
        if status == 404:
            return _Answer(refusal=errors.InvalidClientTokenId()), None
        if status == 401:
            LOG.info("Keystone refused the EC2 signature of access key %s", access)
            return _Answer(refusal=errors.AccessDenied()), None
        if status in (400, 413):
            return _Answer(refusal=errors.IncompleteSignature()), None
        if status == 403:
            LOG.error("Kiln's service user may not call /v3/ec2tokens: it needs the admin "
                      "or service role ([keystone_authtoken])")
            raise errors.InternalFailure("Service misconfigured")
        LOG.error("Keystone answered %s to an EC2 signature check", status)
        raise errors.ServiceUnavailable(f"Keystone answered {status}")

    @staticmethod
    def _accepted(access: str, body: Any, token: str | None
                  ) -> tuple[_Answer, dt.datetime | None]:
        try:
            info = body["token"]
            project = info["project"]
            user = info["user"]
            expires = dt.datetime.fromisoformat(str(info["expires_at"]).replace("Z", "+00:00"))
        except (KeyError, TypeError, ValueError):
            LOG.warning("Keystone's ec2tokens answer is not a project-scoped token")
            return _Answer(refusal=errors.AccessDenied()), None
        identity = Ec2Identity(
            access_key=access, project_id=str(project["id"]), user_id=str(user["id"]),
            username=str(user.get("name") or user["id"]),
            roles=tuple(str(r["name"]) for r in info.get("roles") or ()),
            auth_token=token)
        return _Answer(identity=identity), expires
