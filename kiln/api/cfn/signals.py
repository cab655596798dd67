"""The pre-signed URLs servers call: ``PUT /v1/waitcondition/{arn}`` (cfn-signal, curl)
and ``POST /v1/signal/{arn}`` (heat-config-notify, alarms).

The URL is signed with the keypair Kiln issued for the resource (SigV2 in the query);
a keypair issued to a resource signals that resource only, in its own stack (AWS's
``AccessDenied`` otherwise); a project's own keypair, its project's stacks. The body is
the signal's JSON whatever its Content-Type (cfn-signal sends none, curl a form's): only
the query is signed, so the body is never read as form parameters; an empty body is a
signal without details. Answers are Heat's: the wait-condition route answers
``<resource>NAME</resource>``, the signal route an empty 200.
"""

from __future__ import annotations

import json
import logging
from typing import Any
from xml.sax.saxutils import escape

from starlette.requests import Request
from starlette.responses import Response

from kiln import errors as kiln_errors
from kiln.api import identity as ident
from kiln.api.auth_budget import aws_guard
from kiln.api.aws import errors
from kiln.api.aws.credentials import Ec2Identity
from kiln.api.aws.errors import error_response
from kiln.api.aws.received import received
from kiln.api.cfn.actions import aws_error
from kiln.api.cfn.context import request_context
from kiln.api.ratelimit import AgentLimits

LOG = logging.getLogger("kiln.api.cfn")


def limit(limits: AgentLimits, kind: str, caller: Ec2Identity) -> None:
    """Spend one of the ``kind`` tokens of the access key that signed the call
    (kiln.api.ratelimit), or refuse it with AWS's ``Throttling`` (429)."""
    refusal = limits.take(kind, f"ec2:{caller.access_key}")
    if refusal is not None:
        raise errors.Throttling(refusal.message(kind), retry_after=refusal.retry_after)


def _target(arn: str, caller: Ec2Identity) -> tuple[dict[str, str], str]:
    found = ident.from_arn(arn)
    path = (found or {}).get("path", "")
    if found is None or not path.startswith("/resources/") or len(path) <= 11:
        raise errors.InvalidParameterValue(f"{arn} is not the ARN of a resource")
    resource = path[len("/resources/"):]
    stack = {**found, "path": ""}
    if caller.stack_id is not None and caller.stack_id != stack["stack_id"]:
        raise errors.AccessDenied("this keypair may only signal its own stack")
    if caller.resource_name is not None and caller.resource_name != resource:
        # a keypair Kiln issued to a resource (a server's metadata credential, a handle's
        # or a deployment's pre-signed URL) signals that resource only: every URL Kiln
        # pre-signs is signed by its own resource's keypair (issue 22)
        raise errors.AccessDenied("this keypair may only signal the resource it was "
                                  "issued to")
    if caller.stack_id is None and caller.project_id != stack["tenant"]:
        raise errors.AccessDenied("this keypair may only signal its own project's stacks")
    return stack, resource


def _details(body: bytes) -> Any:
    if not body.strip():
        return None
    try:
        return json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise errors.InvalidParameterValue(f"The signal body is not JSON: {exc}") from None


async def _signal(request: Request, *, sync: bool) -> Response:
    app = request.app
    try:
        signed = await received(request, max_body=int(app.state.conf.max_json_body_size),
                                body_params=False)
        caller = await aws_guard(request.scope, app.state.agent_limits.failed_auth,
                                 lambda: app.state.authenticator.authenticate(
                                     signed, presigned=True))
        # the keypair's signal budget, spent before the body is parsed or anything kept
        limit(app.state.agent_limits, "signal", caller)
        stack, resource = _target(str(request.path_params["arn"]), caller)
        details = _details(signed.body)
        ctx = request_context(request, caller)
        try:
            result = await app.state.service.resource_signal(ctx, stack, resource, details,
                                                             sync_call=sync)
        except kiln_errors.KilnError as exc:
            reason = getattr(exc, "status_reason", None)
            if exc.http_status >= 500 and callable(reason):
                # the plugin refused the signal (Heat answers 500; it is the body's fault)
                raise errors.InvalidParameterValue(str(reason(resource))) from None
            raise aws_error(exc) from None
    except errors.AwsError as exc:
        return error_response(exc)
    except kiln_errors.KilnError as exc:
        return error_response(aws_error(exc))
    if not sync:
        return Response(b"", 200)
    del result  # Heat's answer names the resource only
    return Response(f"<resource>{escape(resource)}</resource>".encode(), 200,
                    media_type="application/xml")


async def waitcondition(request: Request) -> Response:
    return await _signal(request, sync=True)


async def signal(request: Request) -> Response:
    return await _signal(request, sync=False)
