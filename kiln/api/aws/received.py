"""The ``SignedRequest`` of a Starlette request, taken from the ASGI scope unchanged."""

from __future__ import annotations

from urllib.parse import parse_qsl

from starlette.requests import Request

from kiln.api.aws import errors
from kiln.api.aws.request import SignedRequest

FORM_TYPE = "application/x-www-form-urlencoded"


def _pairs(text: str, what: str) -> list[tuple[str, str]]:
    try:
        return parse_qsl(text, keep_blank_values=True, strict_parsing=False,
                         errors="strict", max_num_fields=10000)
    except (UnicodeDecodeError, ValueError) as exc:
        raise errors.InvalidParameterValue(f"the {what} cannot be read: {exc}") from None


async def received(request: Request, *, max_body: int) -> SignedRequest:
    """The request as it arrived: raw path, raw query, headers, body (up to ``max_body``
    bytes; larger is AWS's ``RequestLimitExceeded``)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_body:
        raise errors.RequestLimitExceeded(f"the body is larger than {max_body} bytes")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > max_body:
            raise errors.RequestLimitExceeded(f"the body is larger than {max_body} bytes")
    scope = request.scope
    raw_path = scope.get("raw_path") or scope["path"].encode()
    query = _pairs(scope.get("query_string", b"").decode("latin-1"), "query string")
    form: list[tuple[str, str]] = []
    content_type = request.headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() == FORM_TYPE and body:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise errors.InvalidParameterValue("the form body is not UTF-8") from None
        form = _pairs(text, "form body")
    headers: dict[str, str] = {}
    for name, value in request.headers.items():
        headers[name] = f"{headers[name]},{value}" if name in headers else value
    return SignedRequest(method=request.method, host=request.headers.get("host", ""),
                         raw_path=raw_path.decode("latin-1"), query=query,
                         headers=headers, body=body, form=form)
