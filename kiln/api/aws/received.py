"""The ``SignedRequest`` of a Starlette request, taken from the ASGI scope unchanged."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from urllib.parse import parse_qsl

from starlette.requests import Request

from kiln.api.aws import errors
from kiln.api.aws.request import SignedRequest

FORM_TYPE = "application/x-www-form-urlencoded"
#: Query strings up to this long are parsed once each (the last ``QUERY_CACHE_SIZE``):
#: a pre-signed signal URL's query is the same on every signal its server sends, and
#: parsing it (ten percent-decodings) was most of this function's 12 us (now 4). Longer
#: queries (a template in a GET) are parsed every time and never kept.
CACHED_QUERY_CHARS = 2048
QUERY_CACHE_SIZE = 1024
#: Bounds on a request's parameters, query and form together counted apart: no AWS
#: action Kiln serves has a parameter name near this long, nor needs more parameters.
MAX_KEY_CHARS = 512
MAX_PARAMS = 10000


def _pairs(text: str, what: str) -> list[tuple[str, str]]:
    try:
        pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=False,
                          errors="strict", max_num_fields=MAX_PARAMS)
    except (UnicodeDecodeError, ValueError) as exc:
        raise errors.InvalidParameterValue(f"the {what} cannot be read: {exc}") from None
    for key, _ in pairs:
        if len(key) > MAX_KEY_CHARS:
            raise errors.InvalidParameterValue(
                f"the {what} has a parameter name longer than {MAX_KEY_CHARS} characters: "
                f"{key[:64]!r}...")
    return pairs


@functools.lru_cache(maxsize=QUERY_CACHE_SIZE)
def _parsed_query(text: str) -> tuple[tuple[str, str], ...]:
    # a query that cannot be read raises, and lru_cache keeps no exception
    return tuple(_pairs(text, "query string"))


def _query(text: str) -> Sequence[tuple[str, str]]:
    if len(text) <= CACHED_QUERY_CHARS:
        return _parsed_query(text)
    return _pairs(text, "query string")


async def received(request: Request, *, max_body: int,
                   body_params: bool = True) -> SignedRequest:
    """The request as it arrived: raw path, raw query, headers, body (up to ``max_body``
    bytes; larger is AWS's ``RequestLimitExceeded``). A form body's parameters join the
    query's (the query APIs), unless ``body_params`` is false: a pre-signed URL signs its
    query only, and its body is data whatever type the client labels it with (curl's
    ``--data-binary`` says ``application/x-www-form-urlencoded``)."""
    scope = request.scope
    # one pass over the raw headers: a repeated one joined with commas (what the
    # signature checks), the first value of each for the request's own use
    headers: dict[str, str] = {}
    first: dict[str, str] = {}
    for raw_name, raw_value in scope["headers"]:
        name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
        if name in headers:
            headers[name] = f"{headers[name]},{value}"
        else:
            headers[name] = first[name] = value
    declared = first.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_body:
        raise errors.RequestLimitExceeded(f"the body is larger than {max_body} bytes")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > max_body:
            raise errors.RequestLimitExceeded(f"the body is larger than {max_body} bytes")
    raw_path = scope.get("raw_path") or scope["path"].encode()
    query = _query(scope.get("query_string", b"").decode("latin-1"))
    form: list[tuple[str, str]] = []
    content_type = first.get("content-type", "")
    if body_params and content_type.split(";")[0].strip().lower() == FORM_TYPE and body:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise errors.InvalidParameterValue("the form body is not UTF-8") from None
        form = _pairs(text, "form body")
    return SignedRequest(method=request.method, host=first.get("host", ""),
                         raw_path=raw_path.decode("latin-1"), query=query,
                         headers=headers, body=body, form=form)
