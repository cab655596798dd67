"""The ASGI layer that authenticates every ``/v1`` request before routing.

The version document (``/``) stays open, as Heat's version negotiation answers before
its auth_token filter. The one other way past authentication is a Swift-style temp URL
(kiln.tempurl): a request whose raw path has exactly that shape and which carries a
``temp_url_sig`` is handed to the temp-URL app alone (``signed_urls``), never to the
router, so the signature that app checks is the only credential it needs and no other
route can be reached that way, whatever the query or an encoded path says.

A request the authenticator refuses gets keystonemiddleware's 401 (its JSON body and
``WWW-Authenticate: Keystone uri="..."``); one it cannot decide because Keystone is
unreachable gets Heat's 503 fault with ``Retry-After``. An accepted request carries its
Caller in ``scope["state"]["caller"]``. With a ``budget`` (kiln.api.auth_budget), each
refusal spends the client address's budget of failures, and an address over it gets the
API's 429 (``throttled``) without its token being sent to Keystone.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Protocol, TypeVar

from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from kiln import tempurl
from kiln.auth.caller import Caller
from kiln.auth.errors import IdentityUnavailable, InvalidToken, Throttled

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


T = TypeVar("T")


class FailureBudget(Protocol):
    """What the middleware needs of kiln.api.auth_budget.FailedAuthBudget."""

    async def guard(self, scope: Scope, check: Callable[[], Awaitable[T]],
                    is_failure: Callable[[BaseException], bool]) -> T: ...


def _invalid(exc: BaseException) -> bool:
    return isinstance(exc, InvalidToken)


class AuthMiddleware:
    """``unavailable`` renders the 503 and ``signed_urls`` serves temp URLs, checking
    their signatures (both are the API layer's: kiln.api.app passes them in, so this
    layer imports nothing of the API). Without ``signed_urls`` every ``/v1`` request
    needs a token."""

    def __init__(self, app: ASGIApp, authenticator: Authenticator,
                 unavailable: Callable[[str], Response],
                 signed_urls: ASGIApp | None = None, budget: FailureBudget | None = None,
                 throttled: Callable[[Throttled], Response] | None = None) -> None:
        self.app = app
        self.authenticator = authenticator
        self.unavailable = unavailable
        self.signed_urls = signed_urls
        self.budget = budget
        self.throttled = throttled

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not str(scope.get("path", "")).startswith("/v1/"):
            await self.app(scope, receive, send)
            return
        if self.signed_urls is not None and signed_temp_url(scope):
            await self.signed_urls(scope, receive, send)
            return
        def check() -> Awaitable[Caller]:
            return self.authenticator.authenticate(str(scope["path"]), Headers(scope=scope))

        try:
            if self.budget is None:
                caller = await check()
            else:
                caller = await self.budget.guard(scope, check, _invalid)
        except Throttled as exc:
            if self.throttled is None:
                raise
            response = self.throttled(exc)
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


def signed_temp_url(scope: Scope) -> bool:
    """A request for a Kiln temp URL (``/v1/AUTH_<project>/<stack id>/<resource>`` as
    sent, with a ``temp_url_sig`` parameter): its signature is its credential, as Swift's
    tempurl middleware lets such requests past token authentication. Read from the raw
    path, as the temp-URL app reads it."""
    raw = scope.get("raw_path") or str(scope.get("path", "")).encode("utf-8",
                                                                      "surrogateescape")
    if tempurl.parse_path(raw.decode("latin-1")) is None:
        return False
    query = scope.get("query_string", b"")
    return any(part.split(b"=", 1)[0] == b"temp_url_sig" for part in query.split(b"&"))


def retry_after() -> dict[str, str]:
    """The headers of the 503: when to try again."""
    return {"Retry-After": str(RETRY_AFTER_SECONDS)}
