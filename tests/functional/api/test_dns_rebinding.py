"""DNS rebinding against the no-auth native API (issue 22), through a real ``kiln serve``.

A rebound page's requests reach Kiln as same-origin ones: ``Host`` and ``Origin`` both
name the attacker's domain, so the Origin check alone lets them through. In ``noauth``
mode the listener refuses any ``Host`` that is not one of its own names (IP literals,
localhost, the configured bind hosts and server URLs, ``[kiln_api] allowed_hosts``) with
a 403 in Heat's fault body naming the option; the names servers and clients are given
keep working. With authentication the check is not made (a rebound page holds no token).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.server import HTTP_TIMEOUT, KilnProcess, start_kiln

TEMPLATE = {"heat_template_version": "2018-08-31",
            "resources": {"v": {"type": "OS::Heat::None"}}}
META_NAME = "kiln-meta.internal"


@pytest.fixture(scope="module")
def kiln(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    proc = start_kiln(tmp_path_factory.mktemp("rebinding"), options={
        "DEFAULT": {"heat_metadata_server_url": f"http://{META_NAME}:8000/v1/"},
        "kiln_api": {"allowed_hosts": "kiln.example.com, *.corp.example"}})
    yield proc
    assert proc.stop() == 0, proc.logs()


def _port(kiln: KilnProcess) -> str:
    return kiln.endpoint("demo").split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)[1]


def _get(kiln: KilnProcess, host: str, path: str = "/v1/demo/stacks") -> httpx.Response:
    base = kiln.endpoint("demo").split("/v1/", 1)[0]
    return httpx.get(base + path, headers={"Host": host}, timeout=HTTP_TIMEOUT)


def test_a_rebound_page_can_neither_read_nor_create(kiln: KilnProcess) -> None:
    port = _port(kiln)
    host = f"attacker.example:{port}"
    name = f"rebound_{uuid.uuid4().hex[:6]}"
    made = httpx.post(kiln.endpoint("demo") + "/stacks",
                      headers={"Host": host, "Origin": f"http://{host}"},
                      json={"stack_name": name, "template": TEMPLATE}, timeout=HTTP_TIMEOUT)
    assert made.status_code == 403, made.text
    error = made.json()["error"]
    assert error["type"] == "HTTPForbidden" and error["traceback"] is None
    assert "attacker.example" in error["message"], error
    assert "[kiln_api] allowed_hosts" in error["message"], error
    read = _get(kiln, host)
    assert read.status_code == 403, read.text
    assert _get(kiln, host, "/").status_code == 403
    listed = httpx.get(kiln.endpoint("demo") + "/stacks", timeout=HTTP_TIMEOUT).json()
    assert name not in [s["stack_name"] for s in listed["stacks"]]


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost", "app.localhost", "[::1]",
                                  "kiln.example.com", "KILN.example.com.", "a.corp.example",
                                  META_NAME])
def test_the_servers_own_names_are_served(kiln: KilnProcess, name: str) -> None:
    answer = _get(kiln, f"{name}:{_port(kiln)}")
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("name", ["corp.example.evil", "localhost.evil", "example.com"])
def test_look_alikes_are_refused(kiln: KilnProcess, name: str) -> None:
    assert _get(kiln, name).status_code == 403


def test_agents_reach_temp_urls_by_the_configured_name(kiln: KilnProcess) -> None:
    """A temp URL handed out on heat_metadata_server_url's name is answered (404 here:
    it names no resource), not refused for its Host."""
    path = f"/v1/AUTH_demo/{uuid.uuid4()}/r?temp_url_sig=x&temp_url_expires=99999999999"
    answer = _get(kiln, f"{META_NAME}:{_port(kiln)}", path)
    assert answer.status_code == 404, answer.text
    assert _get(kiln, "attacker.example", path).status_code == 403


def test_with_authentication_the_host_is_not_checked(start_kiln_factory: Any,
                                                     tmp_path: Any) -> None:
    import yaml

    tokens = tmp_path / "tokens.yaml"
    tokens.write_text(yaml.safe_dump([{"token": "t0ken", "user_id": "u",
                                       "project_id": "demo", "roles": ["member", "reader"]}]))
    kiln = start_kiln_factory(options={
        "paste_deploy": {"flavor": "custombackend"},
        "kiln_auth": {"backend": "tokens_file", "tokens_file": tokens}})
    base = kiln.endpoint("demo")
    # no token: the 401 a rebound page gets, whatever the Host
    refused = httpx.get(base + "/stacks", headers={"Host": "attacker.example"},
                        timeout=HTTP_TIMEOUT)
    assert refused.status_code == 401, refused.text
    served = httpx.get(base + "/stacks", headers={"Host": "proxy.example",
                                                  "X-Auth-Token": "t0ken"},
                       timeout=HTTP_TIMEOUT)
    assert served.status_code == 200, served.text
