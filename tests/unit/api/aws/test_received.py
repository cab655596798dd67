"""What the AWS APIs take from an ASGI request: the raw path and query, the headers (a
repeated one joined as the signature reads it), the body within its limit."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.requests import Request

from kiln.api.aws import errors
from kiln.api.aws.received import received


def _request(query: bytes, headers: list[tuple[bytes, bytes]], body: bytes = b"") -> Request:
    scope: dict[str, Any] = {"type": "http", "method": "PUT", "path": "/v1/x:y",
                             "raw_path": b"/v1/x%3Ay", "query_string": query,
                             "headers": headers}
    sent = [False]

    async def receive() -> dict[str, Any]:
        if sent[0]:
            return {"type": "http.disconnect"}
        sent[0] = True
        return {"type": "http.request", "body": body, "more_body": False}

    return Request(scope, receive)


async def test_the_request_as_it_arrived() -> None:
    headers = [(b"host", b"kiln:8000"), (b"x-thing", b"a"), (b"x-thing", b"b"),
               (b"content-length", b"2")]
    for _ in range(2):   # the second time from the parsed queries remembered
        got = await received(_request(b"A=1&B=%2F&A=2&C=", headers, b"{}"), max_body=10)
        assert got.query == (("A", "1"), ("B", "/"), ("A", "2"), ("C", ""))
        assert got.params == {"A": "1", "B": "/", "C": ""}
        assert got.host == "kiln:8000" and got.raw_path == "/v1/x%3Ay"
        assert got.headers["x-thing"] == "a,b" and got.body == b"{}"
        assert got.form == []


async def test_a_query_that_cannot_be_read_is_refused_every_time() -> None:
    for _ in range(2):
        with pytest.raises(errors.InvalidParameterValue, match="query string"):
            await received(_request(b"A=%ff", []), max_body=10)


async def test_a_body_over_the_limit_is_refused_before_it_is_read() -> None:
    with pytest.raises(errors.RequestLimitExceeded):
        await received(_request(b"", [(b"content-length", b"11")], b"x" * 11), max_body=10)
    with pytest.raises(errors.RequestLimitExceeded):
        await received(_request(b"", [], b"x" * 11), max_body=10)


async def test_a_form_body_adds_its_parameters() -> None:
    form = [(b"content-type", b"application/x-www-form-urlencoded; charset=utf-8")]
    got = await received(_request(b"Action=A", form, b"Action=B&X=1"), max_body=100)
    assert got.form == [("Action", "B"), ("X", "1")]
    assert got.params == {"Action": "A", "X": "1"}
