"""AWS's error family, as Heat's AWS-compatible APIs answer it.

Every error leaves as ``<ErrorResponse><Error><Type/><Code/><Message/></Error>
</ErrorResponse>`` (JSON with the same keys when the request asked for
``ContentType=JSON``). ``Code`` is AWS's error name, not the HTTP status; the message is
the fixed explanation of the code, followed by ``:<detail>`` when there is one (Heat's
wording, which boto and heat-cfntools show to users).
"""

from __future__ import annotations

import json
from typing import ClassVar
from xml.sax.saxutils import escape

from starlette.responses import Response


class AwsError(Exception):
    """Base: an answer in AWS's error format. Subclasses fix status, code and text."""

    status: ClassVar[int] = 400
    code: ClassVar[str] = "HeatAPIException"
    explanation: ClassVar[str] = "Generic HeatAPIException, please use specific subclasses!"
    error_type: ClassVar[str] = "Sender"

    def __init__(self, detail: str | None = None) -> None:
        self.detail = detail
        #: extra response headers (Throttling's Retry-After)
        self.headers: dict[str, str] = {}
        super().__init__(self.message)

    @property
    def message(self) -> str:
        return f"{self.explanation}:{self.detail}" if self.detail else self.explanation

    def body(self) -> dict[str, dict[str, dict[str, str]]]:
        return {"ErrorResponse": {"Error": {"Type": self.error_type, "Code": self.code,
                                            "Message": self.message}}}


class IncompleteSignature(AwsError):
    code = "IncompleteSignature"
    explanation = "The request signature does not conform to AWS standards"


class InternalFailure(AwsError):
    status = 500
    code = "InternalFailure"
    explanation = "The request processing has failed due to an internal error"
    error_type = "Server"


class InvalidAction(AwsError):
    code = "InvalidAction"
    explanation = "The action or operation requested is invalid"


class InvalidClientTokenId(AwsError):
    status = 403
    code = "InvalidClientTokenId"
    explanation = "The certificate or AWS Key ID provided does not exist"


class InvalidParameterCombination(AwsError):
    code = "InvalidParameterCombination"
    explanation = "Incompatible parameters were used together"


class InvalidParameterValue(AwsError):
    code = "InvalidParameterValue"
    explanation = "A bad or out-of-range value was supplied"


class MissingAction(AwsError):
    code = "MissingAction"
    explanation = "The request is missing an action or operation parameter"


class MissingAuthenticationToken(AwsError):
    status = 403
    code = "MissingAuthenticationToken"
    explanation = "Does not contain a valid AWS Access Key or certificate"


class MissingParameter(AwsError):
    code = "MissingParameter"
    explanation = "A mandatory input parameter is missing"


class RequestExpired(AwsError):
    code = "RequestExpired"
    explanation = "Request expired or more than 15mins in the future"


class ValidationError(AwsError):
    """Not one of Heat's: AWS's answer for a stack that does not exist (Heat answers
    ``InvalidParameterValue``), which boto3's ``stack_delete_complete`` waiter takes as
    "deleted". Its message is AWS's alone, without an explanation before it."""

    code = "ValidationError"
    explanation = "The input fails to satisfy the constraints specified by the service"

    @property
    def message(self) -> str:
        return self.detail or self.explanation


class AlreadyExists(AwsError):
    code = "AlreadyExists"
    explanation = "Resource with the name requested already exists"


class AccessDenied(AwsError):
    status = 403
    code = "AccessDenied"
    explanation = "User is not authorized to perform action"


class ServiceUnavailable(AwsError):
    """Keystone (which checks signatures in keystone mode) cannot be reached."""

    status = 503
    code = "ServiceUnavailable"
    explanation = "Service temporarily unavailable"
    error_type = "Server"


class SignatureDoesNotMatch(AwsError):
    status = 403
    code = "SignatureDoesNotMatch"
    explanation = ("The request signature we calculated does not match the signature "
                   "you provided")


class ActionInProgress(AwsError):
    code = "InvalidAction"
    explanation = "Cannot perform action on stack while other actions are in progress"


class RequestLimitExceeded(AwsError):
    code = "RequestLimitExceeded"
    explanation = "Payload exceeds maximum allowed size"


class Throttling(AwsError):
    """A per-credential rate limit refused the call (kiln.api.ratelimit). AWS's code and
    message for it; AWS's query APIs answer it with 400, Kiln with 429 and
    ``Retry-After`` so that any HTTP client sees when to come back (botocore retries
    either: it knows the code)."""

    status = 429
    code = "Throttling"
    explanation = "Rate exceeded"

    def __init__(self, detail: str | None = None, *, retry_after: int = 1) -> None:
        super().__init__(detail)
        self.headers = {"Retry-After": str(retry_after)}


class NotFound(AwsError):
    """Not one of Heat's: a path no AWS API serves (Heat's router answers 404 too)."""

    status = 404
    code = "NotFound"
    explanation = "The resource could not be found"


class MethodNotAllowed(AwsError):
    """Not one of Heat's: the path is served, but not with this method."""

    status = 405
    code = "MethodNotAllowed"
    explanation = "The request method is not allowed on this path"


def error_response(error: AwsError, *, as_json: bool = False) -> Response:
    """``error`` as AWS's XML body (or JSON when the client asked for JSON)."""
    if as_json:
        return Response(json.dumps(error.body()), error.status, headers=error.headers,
                        media_type="application/json")
    fields = "".join(f"<{k}>{escape(v)}</{k}>" for k, v in
                     (("Type", error.error_type), ("Code", error.code),
                      ("Message", error.message)))
    return Response(f"<ErrorResponse><Error>{fields}</Error></ErrorResponse>".encode(),
                    error.status, headers=error.headers, media_type="application/xml")
