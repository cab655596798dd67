"""AWS signature version 4 (``AWS4-HMAC-SHA256``), in the Authorization header or the query.

The canonical request is rebuilt from the request as received. The path is tried as
sent and re-encoded the way botocore and boto 2 encode it (they differ on ``~`` and on
normalising ``.``/``..``), since a server behind no proxy receives exactly what the
client signed but cannot know which encoder produced it.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import posixpath
from collections.abc import Iterator, Mapping, Sequence
from urllib.parse import quote, unquote

from kiln.api.aws.request import SIGV4_ALGORITHM, Claim, SignedRequest

UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD"


def _q(text: str) -> str:
    return quote(text, safe="-_.~")


def canonical_query(query: Sequence[tuple[str, str]], *, drop: str = "") -> str:
    pairs = sorted((_q(k), _q(v)) for k, v in query if k != drop)
    return "&".join(f"{k}={v}" for k, v in pairs)


def canonical_headers(headers: Mapping[str, str], names: Sequence[str]) -> str:
    return "".join(f"{name}:{' '.join(headers.get(name, '').split())}\n" for name in names)


def _uris(raw_path: str) -> Iterator[str]:
    path = raw_path or "/"
    yield path
    decoded = unquote(path)
    yield quote(decoded, safe="/~")
    normal = posixpath.normpath(decoded) if decoded != "/" else "/"
    if decoded.endswith("/") and normal != "/":
        normal += "/"
    yield quote(normal, safe="/~")
    yield quote(normal, safe="/")


@functools.lru_cache(maxsize=1024)
def _signing_key(secret: str, scope: str) -> bytes:
    """The key of one day, region and service: four HMACs, the same for every request a
    client signs that day, so remembered (as AWS's SDKs remember it)."""
    key = ("AWS4" + secret).encode()
    for part in scope.split("/"):
        key = hmac.digest(key, part.encode(), "sha256")
    return key


def _payload_hashes(request: SignedRequest, claim: Claim) -> Iterator[str]:
    declared = request.headers.get("x-amz-content-sha256")
    body_hash = hashlib.sha256(request.body).hexdigest()
    if declared is not None:
        # only a declared hash that is the body's, or says it is unsigned, is honoured
        if declared in (body_hash, UNSIGNED_PAYLOAD):
            yield declared
        return
    if claim.location == "query":
        yield UNSIGNED_PAYLOAD
    yield body_hash


def matches(request: SignedRequest, claim: Claim, secret: str) -> bool:
    """Whether ``claim.signature`` is the SigV4 signature of ``request`` under ``secret``."""
    drop = "X-Amz-Signature" if claim.location == "query" else ""
    query = canonical_query(request.query, drop=drop)
    headers = canonical_headers(request.headers, claim.signed_headers)
    signed = ";".join(claim.signed_headers)
    key = _signing_key(secret, claim.scope)
    given = claim.signature.lower().encode()
    method = request.method.upper()
    for payload in _payload_hashes(request, claim):
        tried: set[str] = set()
        # the path's other encodings are made only if the path as sent did not match:
        # unquoting and normalising it cost more than the whole HMAC on the common path
        for uri in _uris(request.raw_path):
            if uri in tried:
                continue
            tried.add(uri)
            canonical = "\n".join((method, uri, query, headers, signed, payload))
            to_sign = "\n".join((SIGV4_ALGORITHM, claim.amz_date, claim.scope,
                                 hashlib.sha256(canonical.encode()).hexdigest()))
            # hmac.digest: OpenSSL's one-shot HMAC, no Python HMAC object per request
            expected = hmac.digest(key, to_sign.encode(), "sha256").hex()
            if hmac.compare_digest(expected.encode(), given):
                return True
    return False
