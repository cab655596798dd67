"""EC2 signature version 2: HMAC over ``METHOD\\nhost\\npath\\nsorted-query``.

Clients differ on two points the server cannot know in advance, so each variant is
tried (each is the same secret over the same request; none weakens the check):

- the path: botocore signs the path as sent (percent-encoded), Heat's pre-signed URLs
  and keystoneclient's signer the decoded path;
- the host: with or without the port (Keystone's ec2tokens accepts both too).
"""

from __future__ import annotations

import hmac
from collections.abc import Iterator, Mapping
from urllib.parse import unquote

from kiln import ec2sign
from kiln.api.aws.request import Claim, SignedRequest

canonical_query = ec2sign.canonical_query
signature = ec2sign.signature


def _hosts(host: str) -> Iterator[str]:
    host = host.lower()
    yield host
    name, sep, port = host.rpartition(":")
    if sep and port.isdigit() and (":" not in name or name.endswith("]")):
        yield name


def _paths(raw_path: str) -> Iterator[str]:
    path = raw_path or "/"
    yield path
    decoded = unquote(path)
    if decoded != path:
        yield decoded


def matches(request: SignedRequest, claim: Claim, secret: str) -> bool:
    """Whether ``claim.signature`` is the SigV2 signature of ``request`` under ``secret``."""
    query = canonical_query(request.params)
    given = claim.signature.encode()
    for host in dict.fromkeys(_hosts(request.host)):
        for path in _paths(request.raw_path):
            expected = signature(secret, claim.method, request.method.upper(), host,
                                 path, query)
            if hmac.compare_digest(expected.encode(), given):
                return True
    return False


def sign_url_params(secret: str, *, verb: str, host: str, path: str,
                    params: Mapping[str, str], method: str = "HmacSHA256") -> str:
    """The ``Signature`` for a pre-signed URL (Kiln's own wait-condition and signal URLs)."""
    return signature(secret, method, verb, host.lower(), path, canonical_query(params))
