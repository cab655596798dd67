"""Bad input on every route of the route table: malformed JSON, oversize bodies, unknown
stacks and objects. Each answer is Heat's status and error type, never a 5xx."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kiln.api.openstack_v1 import routes

BODY_METHODS = ("POST", "PUT", "PATCH")
MISSING = str(uuid.uuid4())


def _concrete(path: str, stack_name: str = "api_missing_stack") -> str:
    values = {"tenant_id": "demo", "stack_name": stack_name, "stack_id": MISSING,
              "resource_name": "r1", "event_id": MISSING, "snapshot_id": MISSING,
              "output_key": "o", "type_name": "OS::Heat::None", "template_version":
              "heat_template_version.2018-08-31", "config_id": MISSING,
              "deployment_id": MISSING, "server_id": "srv", "changeset": MISSING,
              "version": "1"}
    return re.sub(r"\{(\w+)(:[^}]*)?\}", lambda m: values[m.group(1)], path)


def _routes(methods: tuple[str, ...], *, stack_scoped: bool | None = None,
            ) -> list[tuple[str, str]]:
    out = []
    for path, route_methods, _handler in routes._TABLE:
        if "{stack_name:" in path or "{subpath" in path or path.endswith("{stack_name}"):
            continue  # lookups: redirects, tested elsewhere
        if path.endswith("/restore") and methods == BODY_METHODS:
            continue  # takes no body
        scoped = "{stack_id}" in path
        if stack_scoped is not None and scoped != stack_scoped:
            continue
        out += [(m, path) for m in route_methods if m in methods]
    return out


@pytest.mark.parametrize(("method", "path"), _routes(BODY_METHODS))
def test_malformed_json_on_every_body_route(wire: httpx.Client, method: str,
                                            path: str) -> None:
    resp = wire.request(method, _concrete(path), content=b'{"a": ',
                        headers={"content-type": "application/json"})
    assert resp.status_code == 400, resp.text
    assert resp.json()["error"]["type"] == "HTTPBadRequest"
    assert resp.json()["error"]["message"].startswith("Expecting value")


@pytest.mark.parametrize(("method", "path"), _routes(BODY_METHODS))
def test_oversize_body_on_every_body_route(wire: httpx.Client, method: str,
                                           path: str) -> None:
    body = b'{"x": "' + b"y" * 5000 + b'"}'
    resp = wire.request(method, _concrete(path), content=body,
                        headers={"content-type": "application/json"})
    assert resp.status_code == 400, resp.text
    assert resp.json()["error"]["type"] == "RequestLimitExceeded"


@pytest.fixture(scope="module")
def api(heat_endpoint: str) -> Iterator[httpx.Client]:
    root = heat_endpoint.rsplit("/v1/", 1)[0]
    with httpx.Client(base_url=root, timeout=30) as client:
        yield client


def _body_for(method: str, path: str) -> Any:
    if path.endswith("/restore"):
        return None
    if path.endswith("/actions"):
        return {"check": None}
    if path.endswith("/resources/{resource_name}") and method == "PATCH":
        return {"mark_unhealthy": True}
    if method == "PUT" and "{stack_id}" in path:
        return {"template": {"heat_template_version": "2018-08-31"}}
    if method in BODY_METHODS:
        return {}
    return None


@pytest.mark.parametrize(("method", "path"), _routes(("GET", "POST", "PUT", "PATCH", "DELETE"),
                                                     stack_scoped=True))
def test_unknown_stack_is_404_on_every_stack_route(api: httpx.Client, method: str,
                                                   path: str) -> None:
    url = _concrete(path).replace("/v1/demo/", "/v1/" + "demo/")
    resp = api.request(method, url, json=_body_for(method, path))
    assert resp.status_code == 404, resp.text
    error = resp.json()["error"]
    assert error["type"] == "EntityNotFound"
    assert re.fullmatch(r"The Stack \(\S+\) could not be found\.", error["message"])


def test_unknown_stack_message_names_the_stack(api: httpx.Client) -> None:
    resp = api.get(_concrete("/v1/{tenant_id}/stacks/{stack_name}/{stack_id}"))
    assert resp.json()["error"]["message"] == (
        "The Stack (api_missing_stack) could not be found.")


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/v1/demo/software_configs/{config_id}"),
    ("DELETE", "/v1/demo/software_configs/{config_id}"),
    ("GET", "/v1/demo/software_deployments/{deployment_id}"),
    ("PUT", "/v1/demo/software_deployments/{deployment_id}"),
    ("DELETE", "/v1/demo/software_deployments/{deployment_id}"),
    ("GET", "/v1/demo/resource_types/OS::Nope::Nothing"),
    ("GET", "/v1/demo/resource_types/OS::Nope::Nothing/template"),
    ("GET", "/v1/demo/template_versions/nope.1999/functions"),
])
def test_unknown_objects_are_404(api: httpx.Client, method: str, path: str) -> None:
    resp = api.request(method, _concrete(path), json={} if method == "PUT" else None)
    assert resp.status_code == 404, resp.text
    assert resp.json()["error"]["traceback"] is None


def test_unknown_stack_lookup_is_404(api: httpx.Client) -> None:
    for method in ("GET", "POST", "PUT", "PATCH", "DELETE"):
        resp = api.request(method, "/v1/demo/stacks/api_missing_stack")
        assert resp.status_code == 404
        assert resp.json()["error"]["type"] == "EntityNotFound"
