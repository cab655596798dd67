"""The CloudWatch API's ASGI app: every request is authenticated by its EC2 signature
(SigV2 or SigV4, :mod:`kiln.api.aws`), then decoded from its protocol (within the
bounds of :mod:`.protocols`), dispatched to its action, and answered (or refused in
AWS's error format) in the same protocol.

The caller's project is the one its keypair acts in. A keypair issued to a stack's
server may only push metrics (``PutMetricData``), as Heat's policy allowed stack users.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from kiln.api.auth_budget import aws_guard
from kiln.api.aws import errors as aws_errors
from kiln.api.aws.credentials import Authenticator
from kiln.api.aws.keypairs import service_signature_checker
from kiln.api.aws.received import received
from kiln.api.cloudwatch import protocols
from kiln.api.cloudwatch.reach import check_metric_reach
from kiln.api.ratelimit import AgentLimits, TokenBucketLimiter
from kiln.engine.service.interface import CloudWatchAPI
from kiln.errors import AlarmNotFound, InvalidAlarmParameter
from kiln.logging import new_request_id

LOG = logging.getLogger(__name__)
MAX_BODY = 1 << 20


def _protocol(request: Request) -> str:
    # the scope's path, not request.url: building the URL object was 5 % of a
    # PutMetricData request's CPU
    if request.headers.get("smithy-protocol") == "rpc-v2-cbor" or \
            request.scope["path"].startswith(f"/service/{protocols.TARGET_PREFIX}/"):
        return "cbor"
    if request.headers.get("x-amz-target", "").startswith(protocols.TARGET_PREFIX + "."):
        return "json"
    return "query"


def cloudwatch_app(cloudwatch: CloudWatchAPI, service: Any, conf: Any) -> Starlette:
    """The CloudWatch API of a process: over the CloudWatch service its engine service
    built (:class:`kiln.engine.service.alarm_process.AlarmProcess`), checking signatures
    through Keystone in keystone mode, else against the keypairs Kiln issued."""
    from kiln.api.ratelimit import shared_limits

    return create_cloudwatch_app(cloudwatch, service_signature_checker(conf, service),
                                 limits=shared_limits(conf))


def create_cloudwatch_app(cloudwatch: CloudWatchAPI, authenticator: Authenticator, *,
                          max_body: int = MAX_BODY,
                          limits: AgentLimits | None = None) -> Starlette:
    """``limits``: the per-credential budgets (kiln.api.ratelimit) PutMetricData spends
    from, and the failure budget of client addresses; None: unlimited."""
    failed_auth = limits.failed_auth if limits is not None else TokenBucketLimiter(0, 1)

    async def endpoint(request: Request) -> Response:
        # the id kiln serve's RequestIdMiddleware gave the request (its access line then
        # names the same id as x-amzn-requestid), else a fresh one in the same form
        request_id = request.scope.get("state", {}).get("request_id") or new_request_id()
        protocol = _protocol(request)
        try:
            signed = await received(request, max_body=max_body)
            # the signature first: the body is decoded (the costlier, riskier part) only
            # for a caller who proved who they are
            identity = await aws_guard(request.scope, failed_auth,
                                       lambda: authenticator.authenticate(signed))
            if limits is not None and protocols.action_of(
                    request.scope["path"], request.headers, signed.params) == "PutMetricData":
                # the access key's budget, before the body is decoded or a point kept
                refusal = limits.take("metric", f"ec2:{identity.access_key}")
                if refusal is not None:
                    raise aws_errors.Throttling(refusal.message("metric"),
                                                retry_after=refusal.retry_after)
            try:
                decoded = protocols.decode(request.scope["path"], request.headers, signed.body,
                                           signed.params)
            except protocols.BadRequest as exc:
                raise aws_errors.InvalidParameterValue(str(exc)) from None
            if not decoded.action:
                raise aws_errors.MissingAction()
            if decoded.action not in cloudwatch.actions:
                raise aws_errors.InvalidAction(f"Unknown action {decoded.action}")
            if identity.stack_id is not None and \
                    decoded.action not in cloudwatch.agent_actions:
                raise aws_errors.AccessDenied(f"a stack's keypair may not call "
                                              f"{decoded.action}")
            if decoded.action == "PutMetricData":
                await check_metric_reach(cloudwatch, identity, decoded.params)
            result = await cloudwatch.call(identity.project_id, decoded.action,
                                           decoded.params)
            return protocols.answer(decoded, result, request_id)
        except aws_errors.AwsError as exc:
            return protocols.error(protocol, exc.status, exc.code, exc.message, request_id,
                                   exc.error_type, exc.headers)
        except InvalidAlarmParameter as exc:
            return protocols.error(protocol, 400, exc.code, str(exc), request_id)
        except AlarmNotFound as exc:
            return protocols.error(protocol, 404, "ResourceNotFound", str(exc), request_id)
        except Exception:  # a bug: AWS's InternalFailure, the traceback in the log only
            LOG.exception("CloudWatch request failed")
            return protocols.error(protocol, 500, "InternalFailure",
                                   "The request processing has failed due to an internal "
                                   "error", request_id, "Server")

    methods = ["GET", "POST"]
    routes: list[Any] = [Route("/", endpoint, methods=methods),
                         Route("/v1", endpoint, methods=methods),
                         Route("/v1/", endpoint, methods=methods),
                         Route("/service/{service}/operation/{operation}", endpoint,
                               methods=["POST"])]
    return _CloudWatchApp(endpoint, routes=routes)


#: the paths a POST is answered on (the routes above): those requests skip routing
_POST_PATHS = frozenset({"/", "/v1", "/v1/"})
_OPERATION_PATH = re.compile(r"/service/[^/]+/operation/[^/]+")


class _CloudWatchApp(Starlette):
    """Starlette with a short way in for the POSTs every client sends (PutMetricData from
    each agent, all day): its error middlewares and router cost a tenth of such a
    request's CPU, and the endpoint answers every error itself. Anything else (other
    methods, other paths, lifespan) goes through Starlette unchanged."""

    def __init__(self, endpoint: Callable[[Request], Awaitable[Response]], *,
                 routes: list[Any]) -> None:
        super().__init__(routes=routes)
        self._endpoint = endpoint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and (
                scope["path"] in _POST_PATHS or _OPERATION_PATH.fullmatch(scope["path"])):
            scope["app"] = self
            response = await self._endpoint(Request(scope, receive))
            await response(scope, receive, send)
            return
        await super().__call__(scope, receive, send)
