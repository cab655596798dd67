"""Requests from other web sites: refused when they would change something, shared
(CORS) only with the origins the operator names.

Without authentication (Kiln's default) nothing but the browser's same-origin policy
stands between a web page on any site and the API, and that policy does not stop a
page from *sending* a form or a ``no-cors`` fetch: it only hides the answer. So a
state-changing request (POST, PUT, PATCH, DELETE) whose ``Origin`` is not the server's
own is refused with a 403 before it reaches a route or authentication. Browsers send
``Origin`` on every such request; programs (heatclient, the openstack CLI, agents, curl)
send none and are not affected. A browser that gives only ``Sec-Fetch-Site`` is judged
by it.

The server's own origin is the one the browser addressed: the ``Host`` it sent, with the
``Origin``'s scheme (a TLS proxy in front changes the scheme, never the host). Other
origins are allowed by Heat's option for the same purpose, ``[cors] allowed_origin``
(oslo.middleware's CORS filter in Heat's pipeline), so one heat.conf lets the same web
application use either server: an allowed origin's requests pass, and its browser gets
the CORS answers Heat's filter gives it (preflights, ``Access-Control-Allow-Origin``).
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from oslo_config import cfg
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kiln.api.faults import HTTPError, fault_response

STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
#: what Heat's CORS defaults (heat.common.config) let a browser send and read
ALLOW_METHODS = "GET, PUT, POST, DELETE, PATCH"
ALLOW_HEADERS = frozenset({
    "x-auth-token", "x-identity-status", "x-roles", "x-service-catalog", "x-user-id",
    "x-tenant-id", "x-openstack-request-id",
    # oslo.middleware's "simple headers", always allowed
    "accept", "accept-language", "content-type", "cache-control", "content-language",
    "expires", "last-modified", "pragma"})
EXPOSE_HEADERS = "X-Auth-Token, X-Subject-Token, X-Service-Token, X-OpenStack-Request-ID"
PREFLIGHT_MAX_AGE = "3600"


def allowed_origins(conf: cfg.ConfigOpts) -> frozenset[str]:
    """``[cors] allowed_origin``, normalised (a conf without the group allows none)."""
    try:
        values = conf.cors.allowed_origin or []
    except (cfg.NoSuchOptError, cfg.NoSuchGroupError, AttributeError):
        values = []
    return frozenset(_normal(v) for v in values if v.strip())


def _normal(origin: str) -> str:
    origin = origin.strip().rstrip("/").lower()
    return origin


def _authority(host: str, scheme: str) -> tuple[str, int] | None:
    """``(hostname, port)`` of a Host header or URL authority; None when unreadable."""
    try:
        parts = urlsplit(f"{scheme}://{host}")
        name, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not name:
        return None
    return name, port if port is not None else _DEFAULT_PORTS.get(scheme, 0)


def same_origin(origin: str, host: str) -> bool:
    """Whether ``origin`` names the server the browser sent ``Host: host`` to."""
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    if parts.scheme not in _DEFAULT_PORTS or parts.path or parts.query:
        return False
    mine = _authority(host, parts.scheme)
    theirs = _authority(parts.netloc, parts.scheme)
    return mine is not None and mine == theirs


class CrossSiteGuard:
    """The ASGI middleware of the module docstring, for the native API's listener."""

    def __init__(self, app: ASGIApp, allowed: Iterable[str] = ()) -> None:
        self.app = app
        self.allowed = frozenset(_normal(o) for o in allowed)
        self.any_origin = "*" in self.allowed

    def _is_allowed(self, origin: str) -> bool:
        return self.any_origin or _normal(origin) in self.allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        method = scope.get("method", "")
        if origin is None:
            site = headers.get("sec-fetch-site", "").lower()
            if method in STATE_CHANGING and site in ("cross-site", "same-site"):
                await _refuse(scope, receive, send, f"a {site} request")
                return
            await self.app(scope, receive, send)
            return
        own = same_origin(origin, headers.get("host", ""))
        shared = not own and self._is_allowed(origin)
        if method == "OPTIONS" and shared and "access-control-request-method" in headers:
            await _preflight(scope, receive, send, origin, headers)
            return
        if method in STATE_CHANGING and not own and not shared:
            shown = origin if len(origin) <= 200 else origin[:200] + "..."
            await _refuse(scope, receive, send, f"Origin '{shown}'")
            return
        if not shared:
            await self.app(scope, receive, send)
            return

        async def send_shared(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []),
                                      *_cors_headers(origin, vary=True)]
            await send(message)

        await self.app(scope, receive, send_shared)


def _cors_headers(origin: str, *, vary: bool) -> list[tuple[bytes, bytes]]:
    out = [(b"access-control-allow-origin", origin.encode("latin-1")),
           (b"access-control-expose-headers", EXPOSE_HEADERS.encode())]
    if vary:
        out.append((b"vary", b"Origin"))
    return out


async def _preflight(scope: Scope, receive: Receive, send: Send, origin: str,
                     headers: Headers) -> None:
    """Heat's CORS filter's answer to an allowed origin's preflight."""
    method = headers.get("access-control-request-method", "").upper()
    asked = [h.strip().lower() for h in
             headers.get("access-control-request-headers", "").split(",") if h.strip()]
    if method not in ALLOW_METHODS.split(", ") or any(h not in ALLOW_HEADERS for h in asked):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    out = [*_cors_headers(origin, vary=True),
           (b"access-control-allow-methods", method.encode()),
           (b"access-control-max-age", PREFLIGHT_MAX_AGE.encode()),
           (b"content-length", b"0")]
    if asked:
        out.append((b"access-control-allow-headers", ", ".join(asked).encode()))
    await send({"type": "http.response.start", "status": 200, "headers": out})
    await send({"type": "http.response.body", "body": b""})


async def _refuse(scope: Scope, receive: Receive, send: Send, what: str) -> None:
    error = HTTPError(403, f"Cross-site request refused: {what} is not this server's own "
                      "origin, and [cors] allowed_origin does not allow it.",
                      error_type="HTTPForbidden", headers={"Connection": "close"})
    await fault_response(error)(scope, receive, send)
