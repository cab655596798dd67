"""What Keystone's 200 answer to a token validation becomes: a caller, or a refusal when
the answer is not a token (never an exception escaping as a 500)."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest

from kiln.auth.caller import Caller
from kiln.auth.keystone import read_token


def _when(hours: float) -> str:
    moment = datetime.datetime.now(datetime.UTC) + datetime.timedelta(hours=hours)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000000Z")


def _token(expires_at: Any) -> dict[str, Any]:
    return {"token": {
        "expires_at": expires_at, "issued_at": _when(-1), "methods": ["password"],
        "user": {"id": "u1", "name": "alice", "domain": {"id": "default"}},
        "project": {"id": "p1", "name": "demo", "domain": {"id": "default"}},
        "roles": [{"id": "r1", "name": "member"}]}}


def test_a_token_gives_its_caller() -> None:
    caller = read_token(lambda: _token(_when(1)), "tok", allow_expired=False)
    assert isinstance(caller, Caller)
    assert (caller.user_id, caller.project_id, caller.roles) == ("u1", "p1", ("member",))


def test_an_expired_token_is_refused_unless_allowed() -> None:
    refused = read_token(lambda: _token(_when(-0.5)), "tok", allow_expired=False)
    assert not isinstance(refused, Caller)
    assert refused.reason == "token expired"
    assert isinstance(read_token(lambda: _token(_when(-0.5)), "tok", allow_expired=True),
                      Caller)


def _not_json() -> Any:
    return json.loads("<html>")


@pytest.mark.parametrize("body", [
    _not_json,                                  # ValueError from the JSON reader
    lambda: ["token"],                          # neither v2 nor v3
    lambda: {"token": {}},                      # KeyError on expires_at
    lambda: {"token": "a string"},              # TypeError indexing it
    lambda: _token("not a time"),               # ValueError parsing the time
    lambda: {"token": {"expires_at": _when(1)}},  # KeyError on the user
], ids=["not-json", "list", "empty-token", "string-token", "bad-time", "no-user"])
def test_an_answer_that_is_not_a_token_is_refused(body: Any) -> None:
    refused = read_token(body, "tok", allow_expired=False)
    assert not isinstance(refused, Caller)
    assert refused.reason == "invalid token contents"
