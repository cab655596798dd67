"""The ASGI layer that authenticates every ``/v1`` request before routing.

The version document (``/``) stays open, as Heat's version negotiation answers before
its auth_token filter. A request the authenticator refuses gets keystonemiddleware's 401
(its JSON body and ``WWW-Authenticate: Keystone uri="..."``); one it cannot decide because
Keystone is unreachable gets Heat's 503 fault with ``Retry-After``. An accepted request
carries its Caller in ``scope["state"]["caller"]``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from typing import Protocol

from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from kiln.auth.caller import Caller
from kiln.auth.errors import IdentityUnavailable, InvalidToken

LOG = logging.getLogger("kiln.auth")

RETRY_AFTER_SECONDS = 5
UNAVAILABLE_MESSAGE = "The Keystone service is temporarily unavailable."
UNAUTHORIZED_BODY = json.dumps({"error": {
    "code": 401, "title": "Unauthorized",
    "message": "The request you have made requires authentication."}}).encode()


class Authenticator(Protocol):
    """One authentication mode: who a request identifies itself as.

    ``authenticate`` gets the URL path (``/v1/<project>/...``) and the headers; it returns
    the Caller, or raises InvalidToken (401) or IdentityUnavailable (503). Plugins for
    ``flavor = custombackend`` implement this protocol (see kiln/auth/tokens_file.py)."""

    #: the value of the WWW-Authenticate header of a 401 ("Keystone uri=...")
    www_authenticate: str

    async def authenticate(self, path: str, headers: Mapping[str, str]) -> Caller: ...


class AuthMiddleware:
    """``unavailable`` renders the 503 (Heat's fault body is the API layer's to make:
    kiln.api.app passes it in, so this layer imports nothing of the API)."""

    def __init__(self, app: ASGIApp, authenticator: Authenticator,
                 unavailable: Callable[[str], Response]) -> None:
        self.app = app
        self.authenticator = authenticator
        self.unavailable = unavailable

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] != "http" or not str(scope.get("path", "")).startswith("/v1/")
                or _signed_temp_url(scope)):
            await self.app(scope, receive, send)
            return
        try:
            caller = await self.authenticator.authenticate(str(scope["path"]),
                                                           Headers(scope=scope))
        except InvalidToken as exc:
            LOG.info("request refused: %s", exc)
            response = self.unauthorized()
        except IdentityUnavailable as exc:
            LOG.warning("cannot authenticate a request: %s", exc)
            response = self.unavailable(UNAVAILABLE_MESSAGE)
        else:
            scope.setdefault("state", {})["caller"] = caller
            await self.app(scope, receive, send)
            return
        await response(scope, receive, send)

    def unauthorized(self) -> Response:
        headers = {"WWW-Authenticate": self.authenticator.www_authenticate}
        return Response(UNAUTHORIZED_BODY, status_code=401, headers=headers,
                        media_type="application/json")


def _signed_temp_url(scope: Scope) -> bool:
    """A Swift-style temp URL (``/v1/AUTH_<project>/...?temp_url_sig=...``): its signature
    is its credential, checked by its own route (kiln.api.tempurl), as Swift's tempurl
    middleware lets such requests past token authentication."""
    return (str(scope["path"]).startswith("/v1/AUTH_")
            and b"temp_url_sig=" in scope.get("query_string", b""))


def retry_after() -> dict[str, str]:
    """The headers of the 503: when to try again."""
    return {"Retry-After": str(RETRY_AFTER_SECONDS)}
