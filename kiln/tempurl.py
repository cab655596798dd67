"""Kiln's own temp URLs: signed, expiring URLs standing in for Swift's.

Heat hands servers Swift temp URLs for two transports: ``TEMP_URL_SIGNAL`` (the server
PUTs its signal to the URL) and ``POLL_TEMP_URL`` (the server GETs its metadata from it).
Kiln needs no object store: it serves those URLs itself, in Swift's shape, so the agents
(os-collect-config's ``request`` collector, heat-config-notify, curl) use them unchanged::

    {base}/v1/AUTH_{project}/{stack_id}/{resource_name}?temp_url_sig=..&temp_url_expires=..

The "container" is the stack's id and the "object" the resource's name, so the server
finds the resource with one indexed lookup. The signature is Swift's: HMAC-SHA256 (hex)
over ``METHOD\\nEXPIRES\\nPATH`` with a random key that belongs to the resource (kept in
its encrypted data, so replacing the resource revokes every URL it gave out). As in
Swift, a URL signed for GET also answers HEAD, and one signed for PUT answers only PUT
(and HEAD).

This module is pure: it builds and checks URLs; the API serves them.
"""

from __future__ import annotations

import hmac
import re
import secrets
from dataclasses import dataclass
from hashlib import sha256
from typing import Any
from urllib.parse import quote, unquote

from kiln import endpoints

PREFIX = "/v1/AUTH_"
#: Heat gives its temp URLs a lifetime that ends just before year 10000 (effectively none)
FOREVER = 253402300799 - 60
METHODS = ("GET", "PUT")
_PATH = re.compile(r"^/v1/AUTH_(?P<project>[^/]+)/(?P<stack>[0-9a-fA-F-]{36})/(?P<name>[^/]+)$")


class TempUrlError(Exception):
    """Why a temp URL was refused (the message is the reason given to the client)."""


def new_key() -> str:
    """A fresh per-resource signing key."""
    return secrets.token_hex(32)


def path_for(project_id: str, stack_id: str, resource_name: str) -> str:
    return f"{PREFIX}{quote(project_id, safe='')}/{stack_id}/{quote(resource_name, safe='')}"


def signature(key: str, method: str, expires: int, path: str) -> str:
    body = f"{method}\n{expires}\n{path}".encode()
    return hmac.new(key.encode(), body, sha256).hexdigest()


def make_url(base: str, key: str, *, method: str, project_id: str, stack_id: str,
             resource_name: str, expires: int = FOREVER) -> str:
    """The absolute URL ``method`` may be sent to until ``expires`` (epoch seconds)."""
    if method not in METHODS:
        raise ValueError(f"temp URLs are signed for GET or PUT, not {method}")
    path = path_for(project_id, stack_id, resource_name)
    sig = signature(key, method, expires, path)
    return f"{base.rstrip('/')}{path}?temp_url_sig={sig}&temp_url_expires={expires}"


@dataclass(frozen=True)
class Target:
    """What a temp-URL path names."""

    project_id: str
    stack_id: str
    resource_name: str


def parse_path(raw_path: str) -> Target | None:
    """The resource a request path names (``raw_path`` still percent-encoded), or None."""
    match = _PATH.match(raw_path)
    if match is None:
        return None
    return Target(unquote(match["project"]), match["stack"].lower(), unquote(match["name"]))


def parse_expires(value: str | None) -> int:
    """``temp_url_expires``: epoch seconds (Swift also takes the ISO 8601 form; agents are
    only ever given the number)."""
    if not value or not value.isdigit():
        raise TempUrlError("temp_url_expires must be given as a number of seconds "
                           "since the epoch")
    return int(value)


def check(key: str, *, method: str, raw_path: str, sig: str | None, expires: int,
          now: float) -> None:
    """Raise :class:`TempUrlError` unless ``sig`` signs this request and it has not expired.

    HEAD is accepted with a signature for GET or PUT (Swift's rule); GET only with one for
    GET, PUT only with one for PUT.
    """
    if not sig:
        raise TempUrlError("temp_url_sig is missing")
    if expires <= now:
        raise TempUrlError("The temp URL has expired")
    allowed = ("GET", "PUT") if method == "HEAD" else (method,)
    # bytes: compare_digest refuses a str with non-ASCII characters (a TypeError, a 500)
    given = sig.lower().encode("utf-8", "surrogateescape")
    for signed in allowed:
        if signed in METHODS and hmac.compare_digest(
                signature(key, signed, expires, raw_path).encode(), given):
            return
    raise TempUrlError("The temp URL signature does not match")


@dataclass(frozen=True)
class Published:
    """What the engine knows of a temp URL's resource: whose it is, its key, and what a
    GET returns (the resource's metadata, last changed at ``last_modified``)."""

    project_id: str
    stack_name: str
    key: str | None
    metadata: Any
    last_modified: float


def base_url(conf: Any) -> str:
    """Where servers reach Kiln's temp URLs: ``heat_metadata_server_url`` when set (the
    CFN listener, which serves them too; its ``/v1`` left out, the temp URL's path has
    its own), else the native API's configured address (:mod:`kiln.endpoints`' rules;
    never a request's)."""
    configured = getattr(conf, "heat_metadata_server_url", None)
    if configured:
        return str(configured).rstrip("/").removesuffix("/v1")
    return endpoints.api_root(conf, "heat_api")
