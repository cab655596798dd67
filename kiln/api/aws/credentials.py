"""Who may sign a request: the pluggable seam between the AWS APIs and an identity store.

``Authenticator`` is what the APIs call: it takes the request as received and returns
the caller's ``Ec2Identity`` or raises AWS's error. Two backends implement it:

- ``SecretAuthenticator`` (here): checks the signature locally, given the secret that a
  ``CredentialLookup`` finds for the access key. Kiln's own keypair store is that lookup
  in the no-auth setup, so servers can sign without any identity service.
- a Keystone backend (``POST /v3/ec2tokens``), which never sees secrets.

Time rules (``window``, 15 minutes as AWS and Keystone): a client-signed request must be
dated within the window of now (SigV4's ``X-Amz-Date``, SigV2's ``Timestamp``), and an
``Expires``/``X-Amz-Expires`` must not have passed; a client-signed SigV2 request must
carry ``Timestamp`` or ``Expires`` (AWS's rule; :func:`check_dated` has the exceptions).
A captured request therefore cannot be replayed once its window is over. Kiln's
pre-signed signal URLs (``presigned=True``) are meant to be used for as long as their
resource exists, as Heat's are: their ``Timestamp`` is not windowed, but they stop
working when the resource's keypair is deleted with it.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from kiln.api.aws import errors, sigv2, sigv4
from kiln.api.aws.request import Claim, SignedRequest, parse_claim

DEFAULT_WINDOW = 900.0


@dataclass(frozen=True)
class Ec2Identity:
    """The caller a valid signature proves. A keypair issued to a stack's resource (a
    server's agent) carries ``stack_id`` and ``resource_name``: it may act on that stack
    only."""

    access_key: str
    project_id: str
    user_id: str = ""
    username: str = ""
    roles: tuple[str, ...] = ()
    stack_id: str | None = None
    resource_name: str | None = None
    auth_token: str | None = None


@dataclass(frozen=True)
class Credential:
    secret: str
    identity: Ec2Identity


class CredentialLookup(Protocol):
    """Access key -> secret and identity; None when the key is unknown."""

    async def lookup(self, access_key: str) -> Credential | None: ...


class Authenticator(Protocol):
    async def authenticate(self, request: SignedRequest, *, presigned: bool = False,
                           agent_read: bool = False) -> Ec2Identity: ...


class SecretAuthenticator:
    """Checks signatures locally against the secret a ``CredentialLookup`` returns."""

    def __init__(self, lookup: CredentialLookup, *, window: float = DEFAULT_WINDOW,
                 clock: Callable[[], float] = time.time) -> None:
        self.lookup = lookup
        self.window = window
        self.clock = clock

    async def authenticate(self, request: SignedRequest, *, presigned: bool = False,
                           agent_read: bool = False) -> Ec2Identity:
        claim = parse_claim(request)
        credential = await self.lookup.lookup(claim.access_key)
        if credential is None:
            raise errors.InvalidClientTokenId()
        if not signature_matches(request, claim, credential.secret):
            raise errors.SignatureDoesNotMatch()
        check_time(claim, self.clock(), self.window, presigned=presigned)
        check_dated(claim, credential.identity, presigned=presigned, agent_read=agent_read)
        return credential.identity


def signature_matches(request: SignedRequest, claim: Claim, secret: str) -> bool:
    if claim.version == 2:
        return sigv2.matches(request, claim, secret)
    return sigv4.matches(request, claim, secret)


def check_dated(claim: Claim, identity: Ec2Identity, *, presigned: bool,
                agent_read: bool) -> None:
    """AWS's rule: a SigV2 request carries ``Timestamp`` or ``Expires``; without either a
    captured request could be replayed for as long as its key lives. Two exceptions keep
    Heat's agents working: a pre-signed signal URL (Heat's carry neither), and a read
    (``agent_read``: DescribeStackResource) with a keypair Kiln issued to a stack's
    resource, which os-collect-config's cfn collector signs with keystoneclient's
    Ec2Signer, adding no time; such a replay only reads that stack's metadata."""
    if claim.version != 2 or claim.timestamp is not None or claim.expires is not None:
        return
    if presigned or (agent_read and identity.stack_id is not None):
        return
    raise errors.MissingParameter("The request must contain either the parameter "
                                  "Timestamp or the parameter Expires")


def check_time(claim: Claim, now: float, window: float, *, presigned: bool = False) -> None:
    """Raise ``RequestExpired`` if the claim's time fields put it outside its validity."""
    current = dt.datetime.fromtimestamp(now, dt.UTC)
    slack = dt.timedelta(seconds=window)
    if claim.expires is not None and current > claim.expires:
        raise errors.RequestExpired(f"the request expired at {claim.expires:%Y-%m-%dT%H:%M:%SZ}")
    stamp = claim.timestamp
    if stamp is None:
        return
    if stamp - current > slack:
        raise errors.RequestExpired("the request is dated in the future")
    if presigned or (claim.location == "query" and claim.version == 4
                     and claim.expires is not None):
        return
    if current - stamp > slack:
        raise errors.RequestExpired(f"the request was signed at {stamp:%Y-%m-%dT%H:%M:%SZ}")
