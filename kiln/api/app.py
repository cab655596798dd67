"""The ASGI application serving Heat's Orchestration API v1.

``create_app`` is the one seam the CLI uses: it receives the EngineService and the
loaded options and returns a Starlette app that knows nothing else of Kiln. Every
response carries ``x-openstack-request-id``; every error, whatever raised it, leaves
as Heat's fault body, and nothing a client sends can produce a traceback.
"""

from __future__ import annotations

import logging
import uuid
from importlib import resources
from urllib.parse import unquote_to_bytes

from oslo_config import cfg
from starlette.applications import Starlette
from starlette.convertors import Convertor, register_url_convertor
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kiln import dashboard, errors
from kiln.api.auth_budget import FailedAuthBudget
from kiln.api.cross_site import CrossSiteGuard, allowed_origins
from kiln.api.dashboard_session import session_endpoint
from kiln.api.faults import HTTPError, fault_response, too_many_requests
from kiln.api.host_guard import HostGuard, configured_names
from kiln.api.openstack_v1.common import json_response
from kiln.api.openstack_v1.event_stream import StreamRegistry
from kiln.api.openstack_v1.routes import v1_routes
from kiln.api.ratelimit import shared_limits
from kiln.api.response_cache import ResponseCache
from kiln.api.tempurl import signed_url_app, temp_url_routes
from kiln.auth.errors import Throttled
from kiln.auth.setup import authenticator
from kiln.engine.service.interface import EngineServiceAPI

LOG = logging.getLogger("kiln.api")


class _OtherVersion(Convertor[str]):
    """``v2``, ``v1.1``...: any API version but 1.0, which Heat answers with its choices."""

    regex = r"v(?!1(?:\.0)?(?:/|$))\d+(?:\.\d+)?"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("other_version", _OtherVersion())
REQUEST_ID_HEADER = b"x-openstack-request-id"


async def versions(request: Request) -> Response:
    """The version document Heat serves at ``/`` (and for unknown versions), with 300."""
    href = str(request.base_url) + "v1/"
    body = {"versions": [{"id": "v1.0", "status": "CURRENT",
                          "links": [{"rel": "self", "href": href}]}]}
    return json_response(body, 300)


async def openapi(request: Request) -> Response:
    text = resources.files("kiln.api").joinpath("openapi.yaml").read_bytes()
    return Response(text, media_type="application/yaml")


class RequestIdMiddleware:
    """Stamp a ``req-<uuid>`` id on the request state and the response headers (keeping
    one an outer middleware already chose), and turn any exception that escaped the
    routes into a fault body (500 without details)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        request_id = state.get("request_id") or "req-" + str(uuid.uuid4())
        state["request_id"] = request_id
        header = (REQUEST_ID_HEADER, request_id.encode())
        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = message.get("headers", [])
                message["headers"] = [*(h for h in headers if h[0].lower() != header[0]),
                                      header]
            await send(message)

        try:
            if _unreadable_url(scope):
                raise HTTPError(400, "The request URL is not valid UTF-8 or contains NUL.")
            await self.app(scope, receive, send_with_id)
        except Exception as exc:  # every error leaves as Heat's fault body (a bug as a 500)
            if not isinstance(exc, errors.KilnError):
                LOG.exception("unhandled error serving %s %s [%s]", scope.get("method"),
                              scope.get("path"), request_id)
            if started:
                raise
            await fault_response(exc)(scope, receive, send_with_id)


def _unreadable_url(scope: Scope) -> bool:
    """A path or query that is not UTF-8, or holds a NUL: Heat answers 400 before routing."""
    raw_path = scope.get("raw_path") or scope.get("path", "").encode("utf-8", "surrogateescape")
    query = scope.get("query_string", b"")
    try:
        text = unquote_to_bytes(raw_path).decode("utf-8")
        text += unquote_to_bytes(query.replace(b"+", b" ")).decode("utf-8")
    except UnicodeDecodeError:
        return True
    return "\x00" in text


async def _kiln_error(request: Request, exc: Exception) -> Response:
    return fault_response(exc)


async def _http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    headers = dict(exc.headers or {})
    if exc.status_code == 404:
        return fault_response(HTTPError(404, "The resource could not be found."))
    return fault_response(HTTPError(exc.status_code, headers=headers))


def create_app(service: EngineServiceAPI, conf: cfg.ConfigOpts) -> Starlette:
    """Build the API app around ``service`` (an EngineService) and ``conf`` (kiln.conf.CONF).

    With an authenticating ``[paste_deploy] flavor`` the app also checks every ``/v1``
    request's credentials and Heat's policy rules; a configuration problem there is a
    ConfigError raised here, before anything is served."""
    routes = [
        Route("/", dashboard.root(versions, conf), methods=["GET"]),
        Route(dashboard.PREFIX + "session", session_endpoint(conf), methods=["GET", "POST"]),
        Route(dashboard.PREFIX + "{path:path}", dashboard.asset_endpoint(conf),
              methods=["GET"]),
        Route("/versions", versions, methods=["GET"]),
        Route("/openapi.yaml", openapi, methods=["GET"]),
        *v1_routes(),
        *temp_url_routes(),
        Route("/{version:other_version}/{rest:path}", versions,
              methods=["GET", "POST", "PUT", "PATCH", "DELETE"]),
    ]
    app = Starlette(routes=routes,
                    exception_handlers={errors.KilnError: _kiln_error,
                                        HTTPException: _http_exception})
    app.router.redirect_slashes = False
    app.state.service = service
    app.state.conf = conf
    app.state.stack_responses = ResponseCache()
    app.state.event_streams = StreamRegistry()
    app.state.agent_limits = shared_limits(conf)
    app.state.policy = None
    auth = authenticator(conf)
    if auth is not None:
        from kiln.auth.middleware import AuthMiddleware, retry_after
        from kiln.policy.enforcer import Policy

        def unavailable(message: str) -> Response:
            return fault_response(HTTPError(503, message, headers=retry_after()))

        def throttled(exc: Throttled) -> Response:
            return fault_response(too_many_requests(exc.message, exc.retry_after))

        # built before serving, so a policy file that does not parse stops startup
        app.state.policy = Policy(conf)
        app.add_middleware(AuthMiddleware, authenticator=auth, unavailable=unavailable,
                           signed_urls=signed_url_app,
                           budget=FailedAuthBudget(app.state.agent_limits.failed_auth),
                           throttled=throttled)
    # outside authentication: a cross-site request is refused before any token check
    app.add_middleware(CrossSiteGuard, allowed=allowed_origins(conf))
    if auth is None:
        # no credentials to check: a request must at least name this server (DNS rebinding)
        app.add_middleware(HostGuard, names=configured_names(conf))
    app.add_middleware(RequestIdMiddleware)
    return app
