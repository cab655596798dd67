"""Every Kiln error leaves as Heat's fault body with Heat's status and type."""

from __future__ import annotations

import json

import pytest

from kiln import errors
from kiln.api.faults import HTTPError, fault_response


@pytest.mark.parametrize(("exc", "status", "etype", "title"), [
    (errors.StackValidationFailed("bad"), 400, "StackValidationFailed", "Bad Request"),
    (errors.EntityNotFound("gone"), 404, "EntityNotFound", "Not Found"),
    (errors.ActionInProgress("busy"), 409, "ActionInProgress", "Conflict"),
    (errors.Forbidden("no"), 403, "Forbidden", "Forbidden"),
    (errors.RequestLimitExceeded("big"), 400, "RequestLimitExceeded", "Bad Request"),
    (errors.RequestEntityTooLarge("huge"), 413, "HTTPRequestEntityTooLarge",
     "Request Entity Too Large"),
    (HTTPError(405), 405, "HTTPMethodNotAllowed", "Method Not Allowed"),
])
def test_kiln_errors_map_to_heats_status_and_type(exc: Exception, status: int, etype: str,
                                                  title: str) -> None:
    resp = fault_response(exc)
    assert resp.status_code == status
    body = json.loads(bytes(resp.body))
    assert body["code"] == status
    assert body["title"] == title
    assert body["error"]["type"] == etype
    assert body["error"]["traceback"] is None


def test_a_bug_is_an_opaque_500_without_its_message() -> None:
    resp = fault_response(KeyError("secret internals"))
    body = json.loads(bytes(resp.body))
    assert resp.status_code == 500
    assert body["error"]["type"] == "HTTPInternalServerError"
    assert "secret" not in json.dumps(body)
