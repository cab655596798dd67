"""The no-auth backend of the credential lookup: keypairs Kiln issued itself.

Kiln stores every keypair it issues (to a template's AWS::IAM::AccessKey, to a server's
agent, behind a pre-signed signal URL, or with ``kiln ec2-credentials create``) with its
secret encrypted; the engine service finds one by access key. Answers are cached for a
few seconds (an agent polls every 30 s and the signature check is on every request).
A keypair deleted by this process (its resource or stack deleted, ``kiln ec2-credentials
delete`` through the API) stops working at once: the cache is emptied whenever
``revocations()`` moves; one deleted by another process stops within ``ttl`` seconds.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from kiln.api.aws.credentials import (
    Authenticator,
    Credential,
    Ec2Identity,
    SecretAuthenticator,
)
from kiln.auth.cache import need_remote

Finder = Callable[[str], Awaitable[Mapping[str, Any] | None]]


class IssuedKeypairs:
    """``CredentialLookup`` over ``find(access_key)`` (EngineService.find_ec2_keypair),
    which returns ``{"secret", "project_id", "user_id", "stack_id", "resource_name"}``."""

    def __init__(self, find: Finder, *, ttl: float = 5.0, size: int = 10000,
                 clock: Callable[[], float] = time.monotonic,
                 revocations: Callable[[], int] = lambda: 0) -> None:
        self._find = find
        self._revocations = revocations
        self._seen = revocations()
        self._ttl = ttl
        self._size = size
        self._clock = clock
        self._cache: OrderedDict[str, tuple[float, Credential | None]] = OrderedDict()

    async def lookup(self, access_key: str) -> Credential | None:
        now = self._clock()
        revoked = self._revocations()
        if revoked != self._seen:
            self._cache.clear()
            self._seen = revoked
        hit = self._cache.get(access_key)
        if hit is not None and hit[0] > now:
            self._cache.move_to_end(access_key)
            return hit[1]
        need_remote()  # a database read: not for an address over its failure budget
        found = await self._find(access_key)
        if self._revocations() != revoked:
            return self._answer(found, access_key)  # deleted meanwhile? not kept
        credential = self._answer(found, access_key)
        self._cache[access_key] = (now + self._ttl, credential)
        self._cache.move_to_end(access_key)
        while len(self._cache) > self._size:
            self._cache.popitem(last=False)
        return credential

    @staticmethod
    def _answer(found: Mapping[str, Any] | None, access_key: str) -> Credential | None:
        return None if found is None else Credential(
            secret=str(found["secret"]),
            identity=Ec2Identity(access_key=access_key, project_id=str(found["project_id"]),
                                 user_id=str(found.get("user_id") or ""),
                                 username=str(found.get("user_id") or ""),
                                 stack_id=found.get("stack_id"),
                                 resource_name=found.get("resource_name")))

    def forget(self, access_key: str) -> None:
        """Drop a cached answer (this process deleted the keypair)."""
        self._cache.pop(access_key, None)


def signature_checker(conf: Any, find: Finder, *,
                      revocations: Callable[[], int] = lambda: 0) -> Authenticator:
    """How the AWS APIs check signatures: through Keystone's ec2tokens in keystone mode
    (kiln.api.aws.keystone), else locally against the keypairs Kiln issued."""
    from kiln.conf_identity import flavor

    issued = IssuedKeypairs(find, revocations=revocations)
    if conf is not None and flavor(conf) == "keystone":
        from kiln.api.aws.keystone import KeystoneEc2Authenticator

        return KeystoneEc2Authenticator(conf, issued)
    return SecretAuthenticator(issued)


def service_signature_checker(conf: Any, service: Any) -> Authenticator:
    """:func:`signature_checker` over an engine service's keypair store: its
    ``find_ec2_keypair`` answers, forgotten whenever its ``ec2_keypair_revocations``
    moves. Every AWS API (CloudFormation, CloudWatch) is wired through this one helper, so
    none can miss the revocations and keep honouring a keypair this process deleted for
    the cache's ``ttl``."""
    return signature_checker(conf, lambda access: service.find_ec2_keypair(access),
                             revocations=service.ec2_keypair_revocations)
