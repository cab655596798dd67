"""Serving Kiln's temp URLs (:mod:`kiln.tempurl`): servers GET their metadata from one
(``POLL_TEMP_URL``, os-collect-config's ``request`` collector: a HEAD for
``Last-Modified``, then a GET) and PUT their signals to another (``TEMP_URL_SIGNAL``,
heat-config-notify or curl).

Both the native listener and the CFN one serve them (``heat_metadata_server_url``, which
names the CFN listener, is the base they are handed out on when set). The URL is its
own credential, as a Swift temp URL is: no token, no project check beyond
the one the signature covers. A URL that names nothing answers 404; a bad, expired or
wrong-method signature 401 (Swift's status), both in Heat's fault body. A PUT becomes the
resource's signal (Heat's resource-signal path, so a deployment's outputs, a wait
condition's data); Swift answers a stored object with 201 and so does Kiln.
"""

from __future__ import annotations

import json
import time
from email.utils import formatdate
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from kiln import errors, tempurl
from kiln.api.auth_budget import FailedAuthBudget
from kiln.api.body import json_body_too_large, read_bounded
from kiln.api.faults import HTTPError, bad_request, fault_response, too_many_requests
from kiln.api.identity import make_identity
from kiln.api.openstack_v1.common import dumps
from kiln.auth.cache import need_remote
from kiln.auth.errors import Throttled
from kiln.engine.service.interface import RequestContext


def _unauthorized(reason: str) -> HTTPError:
    return HTTPError(401, f"Temp URL invalid: {reason}", error_type="HTTPUnauthorized")


def _refused(exc: BaseException) -> bool:
    return isinstance(exc, HTTPError) and exc.status in (401, 404)


def _raw_path(request: Request) -> str:
    raw = request.scope.get("raw_path")
    return raw.decode("latin-1") if raw else request.url.path


async def _signal_body(request: Request, limit: int) -> Any:
    """The PUT's JSON object (heat-config-notify's outputs, a wait condition's status);
    an empty body is a signal without details. Any Content-Type is taken, as agents
    send what they send (the signature, not the type, is what keeps other sites out);
    the size bound comes before reading (kiln.api.body)."""
    raw = await read_bounded(request, limit, lambda size: json_body_too_large(size, limit))
    if not raw.strip():
        return None
    try:
        details = json.loads(raw)
    except (ValueError, RecursionError):
        raise bad_request("The signal body is not valid JSON") from None
    if not isinstance(details, dict):
        raise bad_request("The signal body must be a JSON object")
    return details


async def serve(request: Request) -> Response:
    raw_path = _raw_path(request)
    target = tempurl.parse_path(raw_path)
    if target is None:
        raise HTTPError(404, "The resource could not be found.")
    service = request.app.state.service

    async def check() -> Any:
        need_remote()  # a database read: not for an address over its failure budget
        found = await service.temp_url_resource(target.stack_id, target.resource_name)
        if found is None or found.project_id != target.project_id or not found.key:
            raise HTTPError(404, "The resource could not be found.")
        query = request.query_params
        try:
            expires = tempurl.parse_expires(query.get("temp_url_expires"))
            tempurl.check(found.key, method=request.method, raw_path=raw_path,
                          sig=query.get("temp_url_sig"), expires=expires, now=time.time())
        except tempurl.TempUrlError as exc:
            raise _unauthorized(str(exc)) from None
        return found

    # a URL naming nothing or badly signed spends the address's failure budget
    budget = FailedAuthBudget(request.app.state.agent_limits.failed_auth)
    try:
        found = await budget.guard(request.scope, check, _refused)
    except Throttled as exc:
        raise too_many_requests(exc.message, exc.retry_after) from None
    # the signature proved the caller holds this resource's URL: its budget, spent
    # before the body is read (kiln.api.ratelimit)
    kind = "signal" if request.method == "PUT" else "metadata"
    refusal = request.app.state.agent_limits.take(
        kind, f"tempurl:{target.stack_id}/{target.resource_name}")
    if refusal is not None:
        raise too_many_requests(refusal.message(kind), refusal.retry_after)
    if request.method == "PUT":
        details = await _signal_body(request, request.app.state.conf.max_json_body_size)
        ctx = RequestContext(project_id=found.project_id,
                             request_id=getattr(request.state, "request_id", None) or "")
        await service.resource_signal(
            ctx, stack_identity=make_identity(found.project_id, found.stack_name,
                                              target.stack_id),
            resource_name=target.resource_name, details=details)
        return Response(b"", status_code=201)
    body = dumps(found.metadata)
    headers = {"Last-Modified": formatdate(found.last_modified, usegmt=True),
               "Content-Length": str(len(body))}
    if request.method == "HEAD":
        return Response(b"", headers=headers, media_type="application/json")
    return Response(body, headers=headers, media_type="application/json")


async def serve_with_faults(request: Request) -> Response:
    """:func:`serve` on an app whose own error handling is another API's (the CFN
    listener, which answers in AWS's format): a temp URL's errors stay Heat's fault
    bodies, wherever it is served."""
    try:
        return await serve(request)
    except errors.KilnError as exc:
        return fault_response(exc)


async def signed_url_app(scope: Scope, receive: Receive, send: Send) -> None:
    """The temp-URL route alone, as an ASGI app: what the authentication layer hands a
    request carrying a temp URL's signature instead of a token (kiln.auth.middleware),
    so such a request reaches :func:`serve`, which checks the signature, and nothing
    else. Errors propagate to the app's outer layer, which renders Heat's fault body."""
    request = Request(scope, receive)
    if request.method not in ("GET", "HEAD", "PUT"):
        raise HTTPError(405, headers={"Allow": "GET, HEAD, PUT"})
    response = await serve(request)
    await response(scope, receive, send)


def temp_url_routes(*, own_faults: bool = False) -> list[BaseRoute]:
    """The route to mount on every app agents reach: the native API, and the CFN API
    (``own_faults``), where ``heat_metadata_server_url`` hands them out."""
    return [Route("/v1/AUTH_{project}/{container}/{name}",
                  serve_with_faults if own_faults else serve,
                  methods=["GET", "HEAD", "PUT"])]
