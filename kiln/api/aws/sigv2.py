"""EC2 signature version 2: HMAC over ``METHOD\\nhost\\npath\\nsorted-query``.

Clients differ on two points the server cannot know in advance, so each variant is
tried (each is the same secret over the same request; none weakens the check):

- the path: botocore signs the path as sent (percent-encoded), Heat's pre-signed URLs
  and keystoneclient's signer the decoded path;
- the host: with or without the port (Keystone's ec2tokens accepts both too).
"""

from __future__ import annotations

import functools
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


#: Requests whose query is at most this long (and with no form body) have their
#: answer remembered (the last ``CHECKED_CACHE_SIZE``): a server signals its handle's
#: pre-signed URL again and again, the very same request each time, and the check
#: (the canonical query, then two HMACs, as the URL is signed over the decoded path)
#: took 14 us of the request's own work where the remembered answer takes 3. The answer
#: is a function of everything it is keyed on, secret included, so remembering it
#: changes no outcome.
CHECKED_QUERY_CHARS = 2048
CHECKED_CACHE_SIZE = 1024


def matches(request: SignedRequest, claim: Claim, secret: str) -> bool:
    """Whether ``claim.signature`` is the SigV2 signature of ``request`` under ``secret``."""
    query = tuple(request.query)
    if request.form or sum(len(k) + len(v) for k, v in query) > CHECKED_QUERY_CHARS:
        return _matches(secret, claim.method, claim.signature, request.method,
                        request.host, request.raw_path, request.params)
    return _remembered(secret, claim.method, claim.signature, request.method,
                       request.host, request.raw_path, query)


@functools.lru_cache(maxsize=CHECKED_CACHE_SIZE)
def _remembered(secret: str, method: str, given: str, verb: str, host: str,
                raw_path: str, query: tuple[tuple[str, str], ...]) -> bool:
    params: dict[str, str] = {}
    for key, value in query:
        params.setdefault(key, value)  # as SignedRequest.params
    return _matches(secret, method, given, verb, host, raw_path, params)


def _matches(secret: str, method: str, given: str, verb: str, host: str, raw_path: str,
             params: Mapping[str, str]) -> bool:
    query = canonical_query(params)
    given_bytes = given.encode()
    for name in dict.fromkeys(_hosts(host)):
        for path in _paths(raw_path):
            expected = signature(secret, method, verb.upper(), name, path, query)
            if hmac.compare_digest(expected.encode(), given_bytes):
                return True
    return False


def sign_url_params(secret: str, *, verb: str, host: str, path: str,
                    params: Mapping[str, str], method: str = "HmacSHA256") -> str:
    """The ``Signature`` for a pre-signed URL (Kiln's own wait-condition and signal URLs)."""
    return signature(secret, method, verb, host.lower(), path, canonical_query(params))
