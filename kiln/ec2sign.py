"""EC2 signature version 2, the one pure function both sides need.

The CFN API checks SigV2 signatures (:mod:`kiln.api.aws.sigv2`); the engine signs the
pre-signed wait-condition and signal URLs it hands to servers. Both use this module, so
the URL a server is given is exactly what the API will accept. Imports nothing from Kiln.
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
import hashlib
import hmac
import re
from collections.abc import Mapping
from urllib.parse import quote, unquote, urlencode, urlsplit

DIGESTS = {"HmacSHA256": hashlib.sha256, "HmacSHA1": hashlib.sha1}


def canonical_query(params: Mapping[str, str]) -> str:
    """Every parameter but ``Signature``, sorted by name, each side percent-encoded."""
    return "&".join(f"{_encode(k)}={_encode(v)}"
                    for k, v in sorted(params.items()) if k != "Signature")


#: what percent-encoding leaves as it is (RFC 3986's unreserved characters)
_UNRESERVED = re.compile(r"[A-Za-z0-9_.~-]*")


def _encode(text: str) -> str:
    """``quote(text, safe='-_~')``, cheaper for what every signed request repeats: the
    parameter names and most values need no encoding, and the others (a timestamp, an
    ARN) recur from request to request (each agent polls with the same few)."""
    if _UNRESERVED.fullmatch(text):
        return text
    if len(text) > 200:
        return quote(text, safe="-_~")
    return _quoted(text)


@functools.lru_cache(maxsize=1024)
def _quoted(text: str) -> str:
    return quote(text, safe="-_~")


def signature(secret: str, method: str, verb: str, host: str, path: str, query: str) -> str:
    text = f"{verb}\n{host}\n{path}\n{query}"
    # hmac.digest: OpenSSL's one-shot HMAC (every signed request is checked with it)
    return base64.b64encode(hmac.digest(secret.encode(), text.encode(),
                                        DIGESTS[method])).decode()


def presign(url: str, *, verb: str, access_key: str, secret: str,
            when: dt.datetime | None = None, timestamp: bool = True) -> str:
    """``url`` with a SigV2 signature in its query, as Heat pre-signs signal URLs: the
    signed path is the decoded path, the host the URL's (lower-cased), and a
    ``Timestamp`` records when it was issued (left out with ``timestamp=False``, Heat's
    ``never_expire``)."""
    parts = urlsplit(url)
    params = {"SignatureMethod": "HmacSHA256", "SignatureVersion": "2",
              "AWSAccessKeyId": access_key}
    if timestamp:
        params["Timestamp"] = (when or dt.datetime.now(dt.UTC)).strftime(
            "%Y-%m-%dT%H:%M:%SZ")
    params["Signature"] = signature(secret, "HmacSHA256", verb, parts.netloc.lower(),
                                    unquote(parts.path), canonical_query(params))
    return f"{parts.scheme}://{parts.netloc}{parts.path}?{urlencode(params)}"
