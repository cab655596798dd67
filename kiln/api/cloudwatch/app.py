"""The CloudWatch API's ASGI app: every request is authenticated by its EC2 signature
(SigV2 or SigV4, :mod:`kiln.api.aws`), decoded from its protocol, dispatched to its
action, and answered (or refused in AWS's error format) in the same protocol.

The caller's project is the one its keypair acts in. A keypair issued to a stack's
server may only push metrics (``PutMetricData``), as Heat's policy allowed stack users.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kiln.alarms.rules import InvalidParameter
from kiln.alarms.service import AlarmService, NotFound
from kiln.api.aws import errors as aws_errors
from kiln.api.aws.credentials import Authenticator
from kiln.api.aws.received import received
from kiln.api.cloudwatch import protocols
from kiln.api.cloudwatch.operations import ACTIONS, AGENT_ACTIONS

LOG = logging.getLogger(__name__)
MAX_BODY = 1 << 20


def _protocol(request: Request) -> str:
    if request.headers.get("smithy-protocol") == "rpc-v2-cbor" or \
            request.url.path.startswith(f"/service/{protocols.TARGET_PREFIX}/"):
        return "cbor"
    if request.headers.get("x-amz-target", "").startswith(protocols.TARGET_PREFIX + "."):
        return "json"
    return "query"


def create_cloudwatch_app(alarms: AlarmService, authenticator: Authenticator, *,
                          max_body: int = MAX_BODY) -> Starlette:
    async def endpoint(request: Request) -> Response:
        request_id = f"req-{uuid.uuid4()}"
        protocol = _protocol(request)
        try:
            signed = await received(request, max_body=max_body)
            try:
                decoded = protocols.decode(request.url.path, request.headers, signed.body,
                                           signed.params)
            except protocols.BadRequest as exc:
                raise aws_errors.InvalidParameterValue(str(exc)) from None
            identity = await authenticator.authenticate(signed)
            if not decoded.action:
                raise aws_errors.MissingAction()
            handler = ACTIONS.get(decoded.action)
            if handler is None:
                raise aws_errors.InvalidAction(f"Unknown action {decoded.action}")
            if identity.stack_id is not None and decoded.action not in AGENT_ACTIONS:
                raise aws_errors.AccessDenied(f"a stack's keypair may not call "
                                              f"{decoded.action}")
            result = await handler(alarms, identity.project_id, decoded.params)
            return protocols.answer(decoded, result, request_id)
        except aws_errors.AwsError as exc:
            return protocols.error(protocol, exc.status, exc.code, exc.message, request_id,
                                   exc.error_type)
        except InvalidParameter as exc:
            return protocols.error(protocol, 400, exc.code, str(exc), request_id)
        except NotFound as exc:
            return protocols.error(protocol, 404, "ResourceNotFound", str(exc), request_id)
        except Exception:
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
    return Starlette(routes=routes)
