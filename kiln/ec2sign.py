"""EC2 signature version 2, the one pure function both sides need.

The CFN API checks SigV2 signatures (:mod:`kiln.api.aws.sigv2`); the engine signs the
pre-signed wait-condition and signal URLs it hands to servers. Both use this module, so
the URL a server is given is exactly what the API will accept. Imports nothing from Kiln.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
from collections.abc import Mapping
from urllib.parse import quote, unquote, urlencode, urlsplit

DIGESTS = {"HmacSHA256": hashlib.sha256, "HmacSHA1": hashlib.sha1}


def canonical_query(params: Mapping[str, str]) -> str:
    """Every parameter but ``Signature``, sorted by name, each side percent-encoded."""
    return "&".join(f"{quote(k, safe='-_~')}={quote(v, safe='-_~')}"
                    for k, v in sorted(params.items()) if k != "Signature")


def signature(secret: str, method: str, verb: str, host: str, path: str, query: str) -> str:
    text = f"{verb}\n{host}\n{path}\n{query}"
    mac = hmac.new(secret.encode(), text.encode(), DIGESTS[method])
    return base64.b64encode(mac.digest()).decode()


def presign(url: str, *, verb: str, access_key: str, secret: str,
            when: dt.datetime | None = None) -> str:
    """``url`` with a SigV2 signature in its query, as Heat pre-signs signal URLs: the
    signed path is the decoded path, the host the URL's (lower-cased), and a
    ``Timestamp`` records when it was issued."""
    parts = urlsplit(url)
    stamp = (when or dt.datetime.now(dt.UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    params = {"SignatureMethod": "HmacSHA256", "SignatureVersion": "2",
              "AWSAccessKeyId": access_key, "Timestamp": stamp}
    params["Signature"] = signature(secret, "HmacSHA256", verb, parts.netloc.lower(),
                                    unquote(parts.path), canonical_query(params))
    return f"{parts.scheme}://{parts.netloc}{parts.path}?{urlencode(params)}"
