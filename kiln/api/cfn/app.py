"""The CFN API's ASGI app: the query API at ``/v1/`` and the signal URLs beside it.

Every request is authenticated by the app's ``Authenticator`` (``app.state``), then
dispatched on ``Action``. Every answer, including the errors of a bug, is in AWS's
format (XML, or JSON when the request says ``ContentType=JSON``): nothing leaves as a
traceback or as the native API's fault body.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from oslo_config import cfg
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kiln import errors as kiln_errors
from kiln.api.auth_budget import aws_guard
from kiln.api.aws import errors
from kiln.api.aws.credentials import Authenticator, Ec2Identity
from kiln.api.aws.errors import error_response
from kiln.api.aws.keypairs import service_signature_checker
from kiln.api.aws.received import received
from kiln.api.cfn import drift, render, signals
from kiln.api.cfn.actions import ACTIONS, CfnCall, authorize, aws_error
from kiln.api.cfn.changesets import ACTIONS as CHANGE_SET_ACTIONS
from kiln.api.cfn.context import request_context
from kiln.api.ratelimit import shared_limits
from kiln.api.tempurl import temp_url_routes

LOG = logging.getLogger("kiln.api.cfn")

#: A query may carry a whole template, URL-encoded (each byte up to three).
QUERY_BODY_FACTOR = 3


async def query_api(request: Request) -> Response:
    """``Action=...`` in the query or a form body, as every AWS query API."""
    state = request.app.state
    as_json = False
    try:
        limit = max(int(state.conf.max_template_size) * QUERY_BODY_FACTOR,
                    int(state.conf.max_json_body_size))
        signed = await received(request, max_body=limit)
        params = signed.params
        as_json = params.get("ContentType", "").upper() == "JSON"
        action = params.get("Action", "")
        caller = await aws_guard(request.scope, state.agent_limits.failed_auth,
                                 lambda: state.authenticator.authenticate(
                                     signed, agent_read=action == "DescribeStackResource"))
        if action == "DescribeStackResource":
            # the metadata poll of os-collect-config's cfn collector and cfn-hup
            signals.limit(state.agent_limits, "metadata", caller)
        # the change set module's first: it adds stacks in review to two of ACTIONS'
        handler = (CHANGE_SET_ACTIONS.get(action) or ACTIONS.get(action)
                   or drift.ACTIONS.get(action))
        if handler is None:
            raise errors.InvalidAction()
        call = CfnCall(action=action, params=params, service=state.service, conf=state.conf,
                       ctx=request_context(request, caller), caller=caller)
        authorize(call)
        if state.policy is not None and caller.stack_id is None:
            _enforce(state.policy, action, caller)
        result = await handler(call)
    except errors.AwsError as exc:
        return error_response(exc, as_json=as_json)
    except kiln_errors.KilnError as exc:
        return error_response(aws_error(exc), as_json=as_json)
    except Exception:  # a bug: AWS's InternalFailure, the traceback in the log only
        LOG.exception("unhandled error serving the CFN API")
        return error_response(errors.InternalFailure(), as_json=as_json)
    return render.response(render.envelope(action, result), as_json=as_json)


def _enforce(policy: Any, action: str, caller: Ec2Identity) -> None:
    """Heat's ``cloudformation:<Action>`` rule for a Keystone user's own EC2 credential
    (keystone mode; a key Kiln issued for a stack is confined by ``authorize``)."""
    from kiln.auth.caller import Caller

    who = Caller(user_id=caller.user_id, username=caller.username,
                 project_id=caller.project_id, roles=caller.roles)
    rule = drift.POLICY_RULES.get(action, f"cloudformation:{action}")
    if not policy.allows(rule, who, {"project_id": caller.project_id}):
        raise errors.AccessDenied(f"Action {action} not allowed for user")


async def versions(request: Request) -> Response:
    """What Heat's CFN API answers at its root: the one version, ``v1``."""
    href = str(request.base_url) + "v1/"
    body = {"versions": [{"id": "v1.0", "status": "CURRENT",
                          "links": [{"rel": "self", "href": href}]}]}
    return Response(json.dumps(body).encode(), 300, media_type="application/json")


async def _http_exception(request: Request, exc: Exception) -> Response:
    """Routing answers (no such path, wrong method) in AWS's format too."""
    assert isinstance(exc, HTTPException)
    if exc.status_code == 405:
        return error_response(errors.MethodNotAllowed())
    return error_response(errors.NotFound())


def default_authenticator(service: Any, conf: cfg.ConfigOpts) -> Authenticator:
    """Keystone's ec2tokens in keystone mode; otherwise the keypairs Kiln issued."""
    return service_signature_checker(conf, service)


def _policy(conf: Any) -> Any:
    """Heat's policy in keystone mode (the callers' roles are Keystone's), else None."""
    from kiln.conf_identity import flavor

    if not isinstance(conf, cfg.ConfigOpts) or flavor(conf) != "keystone":
        return None
    from kiln.policy.enforcer import Policy

    return Policy(conf)


def create_cfn_app(service: Any, conf: cfg.ConfigOpts,
                   authenticator: Authenticator | None = None) -> Starlette:
    routes = [
        Route("/", versions, methods=["GET"]),
        Route("/v1", query_api, methods=["GET", "POST"]),
        Route("/v1/", query_api, methods=["GET", "POST"]),
        Route("/v1/waitcondition/{arn:path}", signals.waitcondition, methods=["PUT"]),
        Route("/v1/signal/{arn:path}", signals.signal, methods=["POST"]),
        # temp URLs handed out on heat_metadata_server_url (this listener)
        *temp_url_routes(own_faults=True),
    ]
    app = Starlette(routes=routes, exception_handlers={HTTPException: _http_exception})
    app.router.redirect_slashes = False
    app.state.service = service
    app.state.conf = conf
    app.state.authenticator = authenticator or default_authenticator(service, conf)
    app.state.policy = _policy(conf)
    app.state.agent_limits = shared_limits(conf)
    return app
