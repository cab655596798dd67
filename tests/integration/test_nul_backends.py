"""NUL characters through a real `kiln serve` on each database: refused with a 400 where
a database text column would have to hold them (PostgreSQL cannot), kept where they are
stored inside JSON documents (parameter values), as Heat stores them."""

from __future__ import annotations

import time
from typing import Any

import httpx

from tests.support.fixtures import StartKiln

NUL = "\x00"


def template(resources: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"heat_template_version": "2018-08-31",
            "parameters": {"p": {"type": "string", "default": "plain"}},
            "resources": resources or {"r": {"type": "OS::Heat::None"}},
            "outputs": {"p": {"value": {"get_param": "p"}}}}


def refused(resp: httpx.Response, etype: str, message: str) -> None:
    assert resp.status_code == 400, resp.text
    error = resp.json()["error"]
    assert (error["type"], error["message"]) == (etype, message)


def test_nul_in_names_and_tags_is_a_400_and_in_parameters_is_kept(
        start_kiln_factory: StartKiln, db_url: str) -> None:
    server = start_kiln_factory(options={"database": {"connection": db_url}})
    with httpx.Client(base_url=server.endpoint("proj"), timeout=60.0) as http:
        refused(http.post("/stacks", json={"stack_name": f"a{NUL}b", "template": template()}),
                "StackValidationFailed",
                f'Invalid stack name a{NUL}b must contain only alphanumeric or "_-." '
                "characters, must start with alpha and must be 255 characters or less.")
        refused(http.post("/stacks", json={
            "stack_name": "named", "template": template({f"r{NUL}x": {
                "type": "OS::Heat::None"}})}),
            "StackValidationFailed", f'Resource name "r{NUL}x" may not contain a NUL '
            "character")
        refused(http.post("/stacks", json={"stack_name": "tagged", "tags": f"ok,t{NUL}g",
                                           "template": template()}),
                "HTTPBadRequest", f'Invalid tag, "t{NUL}g" contains a NUL character')
        assert http.get("/stacks").json()["stacks"] == []

        created = http.post("/stacks", json={"stack_name": "param", "template": template(),
                                             "parameters": {"p": f"a{NUL}b"}})
        assert created.status_code == 201, created.text
        url = "/stacks/param/" + created.json()["stack"]["id"]
        deadline = time.monotonic() + 60
        while (stack := http.get(url).json()["stack"])["stack_status"].endswith(
                "IN_PROGRESS") and time.monotonic() < deadline:
            time.sleep(0.1)  # status poll, bounded by the deadline
        assert stack["stack_status"] == "CREATE_COMPLETE", stack
        assert stack["parameters"]["p"] == f"a{NUL}b"
        assert stack["outputs"][0]["output_value"] == f"a{NUL}b"
