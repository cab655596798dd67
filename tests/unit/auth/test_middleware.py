"""The authentication layer: what it lets through without asking the authenticator."""

from __future__ import annotations

from collections.abc import Mapping

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from kiln.auth.caller import Caller
from kiln.auth.errors import InvalidToken
from kiln.auth.middleware import AuthMiddleware


class Refuses:
    www_authenticate = 'Keystone uri="http://127.0.0.1:5000/v3"'

    async def authenticate(self, path: str, headers: Mapping[str, str]) -> Caller:
        raise InvalidToken("refused")


async def ok(request: Request) -> PlainTextResponse:
    return PlainTextResponse("reached")


async def signed(scope: Scope, receive: Receive, send: Send) -> None:
    await PlainTextResponse("temp-url app")(scope, receive, send)


def client() -> httpx.AsyncClient:
    app = Starlette(routes=[Route("/{rest:path}", ok, methods=["GET", "PUT", "POST"])])
    app.add_middleware(AuthMiddleware, authenticator=Refuses(),
                       unavailable=lambda message: PlainTextResponse(message, 503),
                       signed_urls=signed)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                             base_url="http://kiln")


STACK = "0f6e2b3c-8c2e-4a43-9d58-0b8c3c1d2e4f"


async def test_the_version_document_passes_and_signed_temp_urls_reach_their_app_alone(
        ) -> None:
    async with client() as http:
        assert (await http.get("/")).text == "reached"
        signed_url = f"/v1/AUTH_p1/{STACK}/server?temp_url_sig=abc&temp_url_expires=1"
        assert (await http.put(signed_url)).text == "temp-url app"
        assert (await http.head(signed_url)).status_code == 200
        unsigned = await http.put(f"/v1/AUTH_p1/{STACK}/server")
        assert unsigned.status_code == 401
        assert unsigned.headers["WWW-Authenticate"] == Refuses.www_authenticate


async def test_a_signature_parameter_opens_no_other_route() -> None:
    """Issue 22: any ``/v1/AUTH_*`` path with ``temp_url_sig`` used to skip
    authentication and reach the router (every project's stacks listed)."""
    async with client() as http:
        for path in ("/v1/AUTH_x/stacks?global_tenant=True&temp_url_sig=1",
                     "/v1/AUTH_x/services?temp_url_sig=1",
                     "/v1/p1/stacks?temp_url_sig=x",
                     f"/v1/AUTH_x/stacks/{STACK}/server?temp_url_sig=1",
                     f"/v1/AUTH_x/stacks%2F{STACK}/server?temp_url_sig=1",
                     f"/v1/AUTH_x/{STACK}/a/b?temp_url_sig=1",
                     f"/v1/AUTH_x/{STACK}/server?temp_url_sigx=1"):
            reply = await http.get(path)
            assert reply.text != "reached", path
        # an encoded slash: the raw path has the temp-URL shape, the decoded one is a
        # stack's (``/v1/AUTH_x/stacks/<id>/server``): the temp-URL app, never the router
        encoded = await http.get(f"/v1/AUTH_x%2Fstacks/{STACK}/server?temp_url_sig=1")
        assert encoded.text == "temp-url app"
