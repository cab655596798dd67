"""The authentication layer: what it lets through without asking the authenticator."""

from __future__ import annotations

from collections.abc import Mapping

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from kiln.auth.caller import Caller
from kiln.auth.errors import InvalidToken
from kiln.auth.middleware import AuthMiddleware


class Refuses:
    www_authenticate = 'Keystone uri="http://127.0.0.1:5000/v3"'

    async def authenticate(self, path: str, headers: Mapping[str, str]) -> Caller:
        raise InvalidToken("refused")


async def ok(request: Request) -> PlainTextResponse:
    return PlainTextResponse("reached")


def client() -> httpx.AsyncClient:
    app = Starlette(routes=[Route("/{rest:path}", ok, methods=["GET", "PUT", "POST"])])
    app.add_middleware(AuthMiddleware, authenticator=Refuses(),
                       unavailable=lambda message: PlainTextResponse(message, 503))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                             base_url="http://kiln")


async def test_signed_temp_urls_and_the_version_document_pass_everything_else_is_asked(
        ) -> None:
    async with client() as http:
        assert (await http.get("/")).text == "reached"
        signed = "/v1/AUTH_p1/c/o?temp_url_sig=abc&temp_url_expires=1"
        assert (await http.put(signed)).text == "reached"
        unsigned = await http.put("/v1/AUTH_p1/c/o")
        assert unsigned.status_code == 401
        assert unsigned.headers["WWW-Authenticate"] == Refuses.www_authenticate
        assert (await http.get("/v1/p1/stacks?temp_url_sig=x")).status_code == 401
