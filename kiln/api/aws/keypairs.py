"""The no-auth backend of the credential lookup: keypairs Kiln issued itself.

Kiln stores every keypair it issues (to a template's AWS::IAM::AccessKey, to a server's
agent, behind a pre-signed signal URL, or with ``kiln ec2-credentials create``) with its
secret encrypted; the engine service finds one by access key. Answers are cached for a
few seconds (an agent polls every 30 s and the signature check is on every request), so
a keypair deleted with its stack stops working within ``ttl`` seconds in every process.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from kiln.api.aws.credentials import Credential, Ec2Identity

Finder = Callable[[str], Awaitable[Mapping[str, Any] | None]]


class IssuedKeypairs:
    """``CredentialLookup`` over ``find(access_key)`` (EngineService.find_ec2_keypair),
    which returns ``{"secret", "project_id", "user_id", "stack_id", "resource_name"}``."""

    def __init__(self, find: Finder, *, ttl: float = 5.0, size: int = 10000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._find = find
        self._ttl = ttl
        self._size = size
        self._clock = clock
        self._cache: OrderedDict[str, tuple[float, Credential | None]] = OrderedDict()

    async def lookup(self, access_key: str) -> Credential | None:
        now = self._clock()
        hit = self._cache.get(access_key)
        if hit is not None and hit[0] > now:
            self._cache.move_to_end(access_key)
            return hit[1]
        found = await self._find(access_key)
        credential = None if found is None else Credential(
            secret=str(found["secret"]),
            identity=Ec2Identity(access_key=access_key, project_id=str(found["project_id"]),
                                 user_id=str(found.get("user_id") or ""),
                                 username=str(found.get("user_id") or ""),
                                 stack_id=found.get("stack_id"),
                                 resource_name=found.get("resource_name")))
        self._cache[access_key] = (now + self._ttl, credential)
        self._cache.move_to_end(access_key)
        while len(self._cache) > self._size:
            self._cache.popitem(last=False)
        return credential

    def forget(self, access_key: str) -> None:
        """Drop a cached answer (this process deleted the keypair)."""
        self._cache.pop(access_key, None)
