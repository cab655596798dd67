"""Heat's fault body, built from Kiln's errors.

Heat's clients parse every non-2xx answer as
``{"code", "title", "explanation", "error": {"type", "traceback", "message"}}`` and
match on ``error.type``; the title and explanation are the fixed HTTP texts Heat's
web framework attaches to each status. Kiln never sends a traceback.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import Response

from kiln import errors

#: status -> (title, explanation), as Heat sends them.
_STATUS_TEXT: dict[int, tuple[str, str]] = {
    400: ("Bad Request", "The server could not comply with the request since it is "
          "either malformed or otherwise incorrect."),
    401: ("Unauthorized", "This server could not verify that you are authorized to access "
          "the document you requested. Either you supplied the wrong credentials (e.g., bad "
          "password), or your browser does not understand how to supply the credentials "
          "required."),
    403: ("Forbidden", "Access was denied to this resource."),
    404: ("Not Found", "The resource could not be found."),
    405: ("Method Not Allowed", "The server could not comply with the request since it is "
          "either malformed or otherwise incorrect."),
    406: ("Not Acceptable", "The server could not comply with the request since it is "
          "either malformed or otherwise incorrect."),
    409: ("Conflict", "There was a conflict when trying to complete your request."),
    413: ("Request Entity Too Large", "The body of your request was too large for this "
          "server."),
    415: ("Unsupported Media Type", "The server could not comply with the request since "
          "it is either malformed or otherwise incorrect."),
    429: ("Too Many Requests", "The client has sent too many requests in a given amount "
          "of time."),
    500: ("Internal Server Error", "The server has either erred or is incapable of "
          "performing the requested operation."),
    503: ("Service Unavailable", "The server is currently unavailable. Please try again "
          "at a later time."),
}

GENERIC_BAD_REQUEST = _STATUS_TEXT[400][1]


class HTTPError(errors.KilnError):
    """A wire-level error with an explicit status, for statuses the family lacks (405)."""

    def __init__(self, status: int, message: str = "", *, error_type: str = "",
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message or _STATUS_TEXT.get(status, _STATUS_TEXT[500])[1])
        self.status = status
        self.type_name = error_type or _default_type(status)
        self.headers = headers or {}
        #: Kiln's additions to the fault's ``error`` (``errors``, ``warnings`` of a
        #: ``/validate?all_errors=true``), beside Heat's fields
        self.details: dict[str, Any] = {}


def _default_type(status: int) -> str:
    return {400: "HTTPBadRequest", 401: "HTTPUnauthorized", 403: "HTTPForbidden",
            404: "HTTPNotFound",
            405: "HTTPMethodNotAllowed", 406: "HTTPNotAcceptable", 409: "HTTPConflict",
            413: "HTTPRequestEntityTooLarge", 415: "HTTPUnsupportedMediaType",
            429: "HTTPTooManyRequests",
            503: "HTTPServiceUnavailable"}.get(status, "HTTPInternalServerError")


def bad_request(message: str = GENERIC_BAD_REQUEST, error_type: str = "HTTPBadRequest",
                ) -> HTTPError:
    return HTTPError(400, message, error_type=error_type)


def not_found(message: str) -> HTTPError:
    return HTTPError(404, message)


def too_many_requests(message: str, retry_after: int) -> HTTPError:
    """A per-credential rate limit refused the call (kiln.api.ratelimit): webob's 429,
    with when to come back."""
    return HTTPError(429, message, headers={"Retry-After": str(retry_after)})


def fault_body(status: int, error_type: str, message: str | None,
               hint: str | None = None) -> dict[str, Any]:
    title, explanation = _STATUS_TEXT.get(status, _STATUS_TEXT[500])
    error: dict[str, Any] = {"type": error_type, "traceback": None}
    if message is not None:
        error["message"] = message
    if hint:  # Kiln's suggestion beside Heat's message (kiln.errors)
        error["hint"] = hint
    return {"code": status, "title": title, "explanation": explanation, "error": error}


def fault_response(exc: BaseException) -> Response:
    """Render any exception as Heat's fault; non-Kiln errors become an opaque 500."""
    headers: dict[str, str] = {}
    if isinstance(exc, HTTPError):
        status, etype, message = exc.status, exc.type_name, exc.message
        headers = exc.headers
    elif isinstance(exc, errors.KilnError):
        status, etype, message = exc.http_status, exc.error_type, exc.message
        if isinstance(exc, errors.ServiceUnavailable):
            headers = {"Retry-After": str(exc.retry_after)}
    else:
        status, etype, message = 500, "HTTPInternalServerError", _STATUS_TEXT[500][1]
    if status not in _STATUS_TEXT:
        status = 500
    hint = errors.hint_of(exc) if status < 500 else None
    fault = fault_body(status, etype, message, hint)
    if isinstance(exc, HTTPError):
        fault["error"].update(exc.details)
    body = json.dumps(fault).encode()
    return Response(body, status_code=status, headers=headers,
                    media_type="application/json")
