"""Hostile request fields against a real `kiln serve`: each is a 400 naming the field,
never a 500 (values nested past what later walks can recurse through, integers past
what the database drivers store)."""

from __future__ import annotations

import http.server
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.clients import wait_for_stack_status
from tests.support.local_http import local_http_server
from tests.support.server import HTTP_TIMEOUT, KilnProcess

HOT = {"heat_template_version": "2018-08-31"}


@pytest.fixture
def api(kiln_server: KilnProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=kiln_server.endpoint("demo"), timeout=60) as client:
        yield client


def _nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


def _error(resp: httpx.Response) -> str:
    assert resp.status_code == 400, resp.text
    message: str = resp.json()["error"]["message"]
    return message


@pytest.mark.parametrize("value", [json.dumps({"a": _nested(900)}), {"a": _nested(900)},
                                   "[" * 100_000],
                         ids=["text-900-deep", "object-900-deep", "100k-brackets"])
def test_a_json_parameter_nested_too_deeply_is_a_400_naming_it(api: httpx.Client,
                                                               value: Any) -> None:
    template = {**HOT, "parameters": {"deep": {"type": "json"}}}
    resp = api.post("/stacks", json={"stack_name": "deep", "template": template,
                                     "parameters": {"deep": value}})
    assert _error(resp) == ("Parameter 'deep' is invalid: Value must be valid JSON: nested "
                            "more than 128 levels of maps or lists")


def test_a_string_parameter_of_brackets_is_only_a_string(api: httpx.Client, heat: Any,
                                                          ) -> None:
    template = {**HOT, "parameters": {"s": {"type": "string"}},
                "outputs": {"o": {"value": {"get_param": "s"}}}}
    resp = api.post("/stacks", json={"stack_name": "brackets", "template": template,
                                     "parameters": {"s": "[" * 100_000}})
    assert resp.status_code == 201, resp.text
    assert wait_for_stack_status(heat, "brackets").stack_status == "CREATE_COMPLETE"
    assert heat.stacks.output_show("brackets", "o")["output"]["output_value"] == \
        "[" * 100_000


@pytest.mark.parametrize("value", [10**30, 2**63, "99999999999999999999999"])
def test_timeout_mins_beyond_a_database_integer_is_a_400(api: httpx.Client,
                                                         value: Any) -> None:
    resp = api.post("/stacks", json={"stack_name": "late", "template": HOT,
                                     "timeout_mins": value})
    assert "'timeout_mins'" in _error(resp)
    assert "integers up to 2147483647" in _error(resp)


@pytest.mark.parametrize("path", ["/stacks", "/software_configs"])
def test_limit_beyond_a_database_integer_is_a_400(api: httpx.Client, path: str) -> None:
    resp = api.get(path, params={"limit": "99999999999999999999999"})
    assert "'limit'" in _error(resp)
    assert api.get(path, params={"limit": str(2**31 - 1)}).status_code == 200


# -- URLs the server fetches -------------------------------------------------------------

class _Templates(http.server.BaseHTTPRequestHandler):
    """Serves a template at /t.yaml and redirects /away to another loopback address
    (127.0.0.2, not allowed: a lost check would still not leave the machine)."""

    def do_GET(self) -> None:
        if self.path == "/away":
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.2:1/latest/meta-data/")
            self.end_headers()
            return
        body = json.dumps({**HOT, "outputs": {"o": {"value": "fetched"}}}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def templates_url() -> Iterator[str]:
    with local_http_server(_Templates) as url:
        yield url


def test_template_url_at_kilns_own_api_is_refused(api: httpx.Client,
                                                  kiln_server: KilnProcess) -> None:
    # another project's template, read through the server's own loopback address
    other = httpx.post(kiln_server.endpoint("other") + "/stacks", json={
        "stack_name": "secret", "template": {**HOT, "description": "other project"}},
        timeout=HTTP_TIMEOUT)
    assert other.status_code == 201, other.text
    url = kiln_server.endpoint("other") + "/stacks/secret/template"
    resp = api.post("/stacks", json={"stack_name": "steal", "template_url": url})
    assert _error(resp) == (f"Could not retrieve template: {url} resolves to a loopback "
                            "address (127.0.0.1), which template_url_allowed_hosts does "
                            "not allow")


# Only loopback here: were the check ever lost, these requests must not leave the
# machine. Link-local (the metadata address) and private ranges are proven refused
# before any connection in tests/unit/api/test_urlfetch.py, on an in-memory transport.
@pytest.mark.parametrize(("host", "reason"), [
    ("localhost", "resolves to a loopback address"),
    ("127.0.0.2:1", "resolves to a loopback address (127.0.0.2)"),
])
def test_template_url_to_inside_addresses_is_refused(api: httpx.Client, host: str,
                                                     reason: str) -> None:
    url = f"http://{host}/latest/meta-data/"
    for path in ("/stacks", "/validate"):
        resp = api.post(path, json={"stack_name": "inside", "template_url": url})
        assert _error(resp).startswith(f"Could not retrieve template: {url} {reason}")


def test_allowed_loopback_server_is_fetched_but_not_its_redirects(
        start_kiln_factory: Any, templates_url: str) -> None:
    kiln = start_kiln_factory(options={"DEFAULT": {"template_url_allowed_hosts":
                                                   "127.0.0.1"}})
    with httpx.Client(base_url=kiln.endpoint("demo"), timeout=60) as client:
        ok = client.post("/validate", json={"template_url": templates_url + "/t.yaml"})
        assert ok.status_code == 200, ok.text
        resp = client.post("/stacks", json={"stack_name": "hop",
                                            "template_url": templates_url + "/away"})
        assert _error(resp) == (
            "Could not retrieve template: http://127.0.0.2:1/latest/meta-data/ resolves "
            "to a loopback address (127.0.0.2), which template_url_allowed_hosts does not "
            "allow")


def test_a_nested_stacks_template_url_is_checked_too(heat: Any, api: httpx.Client,
                                                     templates_url: str) -> None:
    template = {"AWSTemplateFormatVersion": "2010-09-09", "Resources": {
        "N": {"Type": "AWS::CloudFormation::Stack",
              "Properties": {"TemplateURL": templates_url + "/t.yaml"}}}}
    resp = api.post("/stacks", json={"stack_name": "cfnurl", "template": template})
    assert resp.status_code == 201, resp.text
    stack = wait_for_stack_status(heat, "cfnurl")
    assert stack.stack_status == "CREATE_FAILED"
    assert "resolves to a loopback address (127.0.0.1)" in stack.stack_status_reason
