"""template_url fetching limits: size, HTTP errors and the timeout (answered by the API)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import httpx
import pytest

from tests.support.local_http import local_http_server

P = "/v1/demo"


class _Handler(http.server.BaseHTTPRequestHandler):
    release = threading.Event()

    def do_GET(self) -> None:
        if self.path == "/big.yaml":
            body = b"heat_template_version: 2018-08-31\ndescription: " + b"x" * 5000
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif self.path == "/stall.yaml":
            # held open until the module is over: the client must give up (after
            # template_url_timeout, 5 s)
            self.release.wait(120)
            self.send_response(200)
            self.end_headers()
        else:
            self.send_response(404)
            self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def files_url() -> Iterator[str]:
    try:
        with local_http_server(_Handler) as url:
            yield url
    finally:
        _Handler.release.set()


def _create(wire: httpx.Client, url: str) -> dict[str, str]:
    resp = wire.post(P + "/stacks", json={"stack_name": "a", "template_url": url})
    assert resp.status_code == 400, resp.text
    error: dict[str, str] = resp.json()["error"]
    return error


def test_template_larger_than_max_template_size(wire: httpx.Client, files_url: str) -> None:
    error = _create(wire, files_url + "/big.yaml")
    assert error["type"] == "HTTPBadRequest"
    assert error["message"] == ("Could not retrieve template: Template exceeds maximum "
                                "allowed size (2048 bytes)")


def test_http_error_from_the_template_server(wire: httpx.Client, files_url: str) -> None:
    url = files_url + "/missing.yaml"
    error = _create(wire, url)
    assert error["message"] == ("Could not retrieve template: Failed to retrieve template "
                                f"from {url}")


def test_unreachable_and_stalled_servers_fail_within_the_timeout(wire: httpx.Client,
                                                                 files_url: str) -> None:
    url = files_url + "/stall.yaml"
    error = _create(wire, url)
    assert error["message"] == ("Could not retrieve template: Failed to retrieve template "
                                f"from {url}")
    error = _create(wire, "http://127.0.0.1:1/t.yaml")
    assert error["message"].startswith("Could not retrieve template: Failed to retrieve")
