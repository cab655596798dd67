"""The RequestContext of an AWS-signed caller: the project and user its keypair proves."""

from __future__ import annotations

from starlette.requests import Request

from kiln.api.aws.credentials import Ec2Identity
from kiln.engine.service.interface import RequestContext


def request_context(request: Request, caller: Ec2Identity) -> RequestContext:
    request_id = getattr(request.state, "request_id", None)
    extra = {"request_id": request_id} if request_id else {}
    return RequestContext(project_id=caller.project_id, user_id=caller.user_id or "",
                          username=caller.username or caller.user_id or "",
                          roles=caller.roles or ("member",),
                          auth_token=caller.auth_token, **extra)
