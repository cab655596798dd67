"""What every v1 handler needs: the engine, the caller's context, parsed inputs, JSON out.

Handlers are ``async def h(call: Call) -> Any``; ``endpoint`` wraps them into Starlette
endpoints, rendering a returned value as JSON (200) and passing a Response through.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson
from oslo_config import cfg
from starlette.requests import Request
from starlette.responses import Response

from kiln.api import identity as ident
from kiln.api.body import read_json, require_json
from kiln.api.faults import HTTPError, too_many_requests
from kiln.api.ratelimit import AgentLimits
from kiln.api.response_cache import ResponseCache, cached_json
from kiln.auth.caller import Caller
from kiln.engine.service.interface import EngineServiceAPI, RequestContext

if TYPE_CHECKING:
    from kiln.policy.enforcer import Policy


def _default(obj: Any) -> Any:
    if isinstance(obj, datetime.datetime):
        if obj.tzinfo is not None:
            obj = obj.astimezone(datetime.UTC).replace(tzinfo=None)
        return obj.isoformat(timespec="seconds") + "Z"
    if isinstance(obj, set | frozenset | tuple):
        return list(obj)
    return str(obj)


_ORJSON_OPTS = (orjson.OPT_NON_STR_KEYS | orjson.OPT_NAIVE_UTC | orjson.OPT_UTC_Z
                | orjson.OPT_OMIT_MICROSECONDS)


def dumps(data: Any) -> bytes:
    """JSON bytes; orjson for speed (a 500-stack list), the stdlib for what it refuses."""
    try:
        return orjson.dumps(data, default=_default, option=_ORJSON_OPTS)
    except orjson.JSONEncodeError:
        return json.dumps(data, default=_default).encode()


def json_response(data: Any, status: int = 200,
                  headers: dict[str, str] | None = None) -> Response:
    return Response(dumps(data), status_code=status, headers=headers,
                    media_type="application/json")


def empty(status: int) -> Response:
    return Response(b"", status_code=status)


@dataclass
class Call:
    request: Request
    service: EngineServiceAPI
    conf: cfg.ConfigOpts
    ctx: RequestContext
    tenant: str

    @property
    def api_root(self) -> str:
        """``http://host:port/v1/``: the prefix of every link."""
        return str(self.request.base_url) + "v1/"

    @property
    def query(self) -> Any:
        return self.request.query_params

    def path(self, name: str) -> str:
        return str(self.request.path_params[name])

    def identity(self) -> ident.Identity:
        """The stack named by ``/stacks/{stack_name}/{stack_id}`` in the caller's project."""
        return ident.make_identity(self.ctx.project_id, self.path("stack_name"),
                                   self.path("stack_id"))

    async def body(self) -> dict[str, Any]:
        return await require_json(self.request, self.conf.max_json_body_size)

    async def optional_body(self) -> dict[str, Any] | None:
        return await read_json(self.request, self.conf.max_json_body_size)

    def limit(self, kind: str, target: str) -> None:
        """Spend one of this caller's ``kind`` tokens (kiln.api.ratelimit), or refuse the
        call with a 429 before it does anything. The key is the authenticated user (a
        stack user's token, in keystone mode); without authentication there is no
        credential, so the key is what the call names, ``target`` in the URL's project
        (a signal token Kiln issued names that same resource)."""
        caller: Caller | None = getattr(self.request.state, "caller", None)
        key = f"user:{caller.user_id}" if caller is not None else \
            f"target:{self.tenant}/{target}"
        limits: AgentLimits = self.request.app.state.agent_limits
        refusal = limits.take(kind, key)
        if refusal is not None:
            raise too_many_requests(refusal.message(kind), refusal.retry_after)

    def enforce(self, rule: str) -> None:
        """Check one of Heat's policy rules for this caller (authenticated modes only)."""
        enforce_rule(self.request, rule, self.tenant)


Handler = Callable[[Call], Awaitable[Any]]


async def stack_read(call: Call, build: Callable[[], Awaitable[Any]]) -> Response:
    """A GET whose body depends only on stack rows (list, show): reused while no stack
    has changed (``kiln.api.response_cache``). The key is everything else the body
    depends on: the URL with its query, the link prefix, and who is asking."""
    cache: ResponseCache = call.request.app.state.stack_responses
    generation = await call.service.stacks_generation()
    ctx = call.ctx
    key = (call.request.url.path, call.request.url.query, call.api_root, ctx.project_id,
           ctx.is_admin, ctx.lists_all_projects, ctx.roles)
    return await cached_json(cache, generation, key, build, dumps)


def request_context(request: Request, tenant: str) -> RequestContext:
    """The engine's view of the caller.

    No authentication: the project is the one in the URL, and the caller is confined to
    it (its stacks, configs and deployments; the others answer 404 as absent). The one
    wider view is the all-projects stack listing (``global_tenant``).

    Authenticated: the project, user and roles come from the token; ``is_admin`` is
    Heat's ``context_is_admin`` rule, and the all-projects listing is its
    ``stacks:global_index`` rule."""
    request_id = getattr(request.state, "request_id", None)
    ids = {"request_id": request_id} if request_id else {}
    caller: Caller | None = getattr(request.state, "caller", None)
    if caller is None:
        if getattr(request.app.state, "policy", None) is not None:
            # an authenticating mode without an authenticated caller: never the
            # no-auth view (a request that got past the auth layer some other way)
            raise HTTPError(401, "The request you have made requires authentication.")
        return RequestContext(project_id=tenant, lists_all_projects=True, **ids)
    policy: Policy = request.app.state.policy
    return RequestContext(
        project_id=caller.project_id or "", user_id=caller.user_id,
        username=caller.username, roles=caller.roles, is_admin=policy.is_admin(caller),
        lists_all_projects=policy.allows("stacks:global_index", caller,
                                         {"project_id": caller.project_id}),
        auth_token=caller.auth_token, service_types=caller.service_types,
        auth_user=request.headers.get("x-auth-user"),
        auth_key=request.headers.get("x-auth-key"), **ids)


def enforce_rule(request: Request, rule: str, tenant: str) -> None:
    """403 in Heat's words unless the policy allows ``rule`` on ``tenant``'s objects."""
    caller: Caller | None = getattr(request.state, "caller", None)
    if caller is None:
        return
    policy: Policy = request.app.state.policy
    if not policy.allows(rule, caller, {"project_id": tenant}):
        raise forbidden_policy(rule)


def endpoint(handler: Handler, rule: str | None = None,
             ) -> Callable[[Request], Awaitable[Response]]:
    """Wrap ``handler``: the caller's context, Heat's project check, then ``rule``."""

    async def run(request: Request) -> Response:
        tenant = str(request.path_params["tenant_id"])
        ctx = request_context(request, tenant)
        if ctx.is_admin and ctx.project_id:
            # as Heat: an admin's request is read in its own project, whatever the URL
            # names, and reaches other projects' stacks by id
            tenant = ctx.project_id
        if ctx.project_id != tenant:
            raise HTTPError(403)
        if rule is not None:
            enforce_rule(request, rule, tenant)
        call = Call(request, request.app.state.service, request.app.state.conf, ctx, tenant)
        result = await handler(call)
        if isinstance(result, Response):
            return result
        return json_response(result)

    run.__name__ = handler.__name__
    run.__doc__ = handler.__doc__
    return run


def forbidden_policy(rule: str) -> HTTPError:
    return HTTPError(403, f"You are not authorized to use {rule}.", error_type="Forbidden")
