"""Cross-site requests and request sizes, against a real ``kiln serve``
(docs/security.md, "Cross-site requests and request sizes").

A web page on another site can make a browser send a form (``text/plain``, form types)
or a ``no-cors`` fetch to the no-authentication API; those are refused (415, 403) and
change nothing. A body over its bound is refused from its declared length, before the
body is sent, and a chunked one as soon as it passes the bound: the raw-socket tests
send a small start and never the rest, so a server that waited for the body would time
out instead of answering.
"""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import psutil
import pytest

from tests.functional.agents.deploying import create, deployment_template, wait_deployment
from tests.support.clients import heat_client, wait_for_stack_status
from tests.support.server import HTTP_TIMEOUT, KilnProcess

TEMPLATE = {"heat_template_version": "2018-08-31",
            "resources": {"r": {"type": "OS::Heat::None"}}}
#: a browser's refused request is answered this fast or the test fails (not a sleep:
#: the socket's timeout, waited only when the server does not answer)
ANSWER_WITHIN = 10.0
HUGE = 200_000_000


@pytest.fixture
def api(kiln_server: KilnProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=kiln_server.endpoint("demo"), timeout=60) as client:
        yield client


def _names(api: httpx.Client) -> set[str]:
    return {s["stack_name"] for s in api.get("/stacks").json()["stacks"]}


def _fault(resp: httpx.Response | Any, status: int, error_type: str) -> str:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert set(body) == {"code", "title", "explanation", "error"}, body
    assert body["code"] == status and body["error"]["type"] == error_type, body
    assert body["error"]["traceback"] is None
    message: str = body["error"]["message"]
    return message


# -- what a web page on another site can send ---------------------------------------

@pytest.mark.parametrize("ctype", ["text/plain", "text/plain;charset=UTF-8",
                                   "application/x-www-form-urlencoded",
                                   "multipart/form-data; boundary=x"])
def test_a_form_or_text_body_creating_a_stack_is_refused_and_no_stack_appears(
        api: httpx.Client, ctype: str) -> None:
    name = "csrf-" + ctype.split("/")[1].split(";")[0].replace("x-www-", "")
    body = json.dumps({"stack_name": name, "template": TEMPLATE})
    message = _fault(api.post("/stacks", content=body, headers={"Content-Type": ctype}),
                     415, "HTTPUnsupportedMediaType")
    assert f"Unsupported Content-Type '{ctype.split(';')[0]}'" in message
    assert "Content-Type: application/json" in message
    assert name not in _names(api)


def test_json_types_with_parameters_are_json(api: httpx.Client) -> None:
    for i, ctype in enumerate(["application/json; charset=utf-8",
                               "Application/JSON", "application/vnd.openstack+json"]):
        body = json.dumps({"stack_name": f"typed{i}", "template": TEMPLATE})
        resp = api.post("/stacks", content=body, headers={"Content-Type": ctype})
        assert resp.status_code == 201, (ctype, resp.text)


def test_an_untyped_body_is_json_as_in_heat(kiln_server: KilnProcess) -> None:
    """Heat reads a body without Content-Type as JSON; programs sending raw bytes rely on
    it (a browser cannot send one without an Origin, refused below)."""
    url = urlsplit(kiln_server.url)
    body = json.dumps({"stack_name": "untyped", "template": TEMPLATE}).encode()
    conn = http.client.HTTPConnection(url.hostname or "", url.port, timeout=30)
    conn.putrequest("POST", "/v1/demo/stacks", skip_accept_encoding=True)
    conn.putheader("Content-Length", str(len(body)))
    conn.endheaders(body)
    resp = conn.getresponse()
    assert resp.status == 201, resp.read()
    conn.close()


def test_a_no_cors_suspend_is_refused_and_the_stack_stays(api: httpx.Client,
                                                         kiln_server: KilnProcess) -> None:
    created = api.post("/stacks", json={"stack_name": "victim", "template": TEMPLATE})
    assert created.status_code == 201, created.text
    heat = heat_client(kiln_server.endpoint("demo"))
    assert wait_for_stack_status(heat, "victim").stack_status == "CREATE_COMPLETE"
    path = f"/stacks/victim/{created.json()['stack']['id']}/actions"
    suspend = json.dumps({"suspend": None})
    # fetch(url, {method: "POST", mode: "no-cors", body: "..."}): text/plain
    _fault(api.post(path, content=suspend,
                    headers={"Content-Type": "text/plain;charset=UTF-8",
                             "Origin": "http://attacker.example"}),
           403, "HTTPForbidden")
    _fault(api.post(path, content=suspend, headers={"Content-Type": "text/plain"}),
           415, "HTTPUnsupportedMediaType")
    # ... or a Blob without a type: no Content-Type at all, but an Origin
    _fault(api.post(path, content=suspend, headers={"Origin": "http://attacker.example"}),
           403, "HTTPForbidden")
    # a browser that sends only Sec-Fetch-Site
    _fault(api.post(path, content=suspend, headers={"Sec-Fetch-Site": "cross-site"}),
           403, "HTTPForbidden")
    assert heat.stacks.get("victim").stack_status == "CREATE_COMPLETE"


def test_a_foreign_origin_cannot_create_or_delete(api: httpx.Client,
                                                   kiln_server: KilnProcess) -> None:
    body = {"stack_name": "from-afar", "template": TEMPLATE}
    for origin in ("http://attacker.example", "null", "http://127.0.0.1.attacker.example",
                   kiln_server.url.replace("http://", "https://") + "0"):
        message = _fault(api.post("/stacks", json=body, headers={"Origin": origin}),
                         403, "HTTPForbidden")
        assert message.startswith(f"Cross-site request refused: Origin '{origin}'")
        assert "[cors] allowed_origin" in message
    assert "from-afar" not in _names(api)
    created = api.post("/stacks", json={"stack_name": "kept", "template": TEMPLATE})
    assert created.status_code == 201
    stack = f"/stacks/kept/{created.json()['stack']['id']}"
    _fault(api.delete(stack, headers={"Origin": "http://attacker.example"}),
           403, "HTTPForbidden")
    assert "kept" in _names(api)
    # reading is not changing: a GET with a foreign Origin is answered (without CORS
    # headers, so the browser keeps the answer from the page)
    listed = api.get("/stacks", headers={"Origin": "http://attacker.example"})
    assert listed.status_code == 200
    assert "access-control-allow-origin" not in listed.headers


def test_the_servers_own_origin_passes(api: httpx.Client, kiln_server: KilnProcess) -> None:
    """What the dashboard's fetch sends: its own origin, JSON."""
    resp = api.post("/stacks", json={"stack_name": "same-origin", "template": TEMPLATE},
                    headers={"Origin": kiln_server.url, "Sec-Fetch-Site": "same-origin"})
    assert resp.status_code == 201, resp.text
    assert "access-control-allow-origin" not in resp.headers
    # behind a TLS proxy the browser's Origin says https, the Host is the same
    behind = api.post("/stacks", json={"stack_name": "via-proxy", "template": TEMPLATE},
                      headers={"Origin": kiln_server.url.replace("http:", "https:")})
    assert behind.status_code == 201, behind.text


def test_an_allowed_origin_passes_with_cors_answers(start_kiln_factory: Any) -> None:
    allowed = "https://horizon.example:8443"
    kiln = start_kiln_factory(options={"cors": {"allowed_origin": f"{allowed}, "
                                                                  "http://other.example"}})
    with httpx.Client(base_url=kiln.endpoint("demo"), timeout=60) as api:
        pre = api.options("/stacks", headers={
            "Origin": allowed, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type,x-auth-token"})
        assert pre.status_code == 200, pre.text
        assert pre.headers["access-control-allow-origin"] == allowed
        assert pre.headers["access-control-allow-methods"] == "POST"
        assert pre.headers["access-control-allow-headers"] == "content-type, x-auth-token"
        resp = api.post("/stacks", json={"stack_name": "shared", "template": TEMPLATE},
                        headers={"Origin": allowed})
        assert resp.status_code == 201, resp.text
        assert resp.headers["access-control-allow-origin"] == allowed
        assert "X-OpenStack-Request-ID" in resp.headers["access-control-expose-headers"]
        _fault(api.post("/stacks", json={"stack_name": "not-shared", "template": TEMPLATE},
                        headers={"Origin": "https://attacker.example"}),
               403, "HTTPForbidden")
        names = {s["stack_name"] for s in api.get("/stacks").json()["stacks"]}
        assert names == {"shared"}
        # a preflight from elsewhere gets no CORS answer
        other = api.options("/stacks", headers={"Origin": "https://attacker.example",
                                                "Access-Control-Request-Method": "POST"})
        assert "access-control-allow-origin" not in other.headers


# -- bodies over their bound ---------------------------------------------------------

def _raw(url: str, method: str, path: str, headers: dict[str, str], start: bytes,
         ) -> tuple[http.client.HTTPResponse, socket.socket]:
    """Send the head and the first bytes of a body, nothing more; the answer."""
    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname or "", parts.port or 80),
                                    timeout=ANSWER_WITHIN)
    head = [f"{method} {path} HTTP/1.1", f"Host: {parts.netloc}",
            *(f"{k}: {v}" for k, v in headers.items()), "", ""]
    sock.sendall("\r\n".join(head).encode() + start)
    resp = http.client.HTTPResponse(sock)
    try:
        resp.begin()
    except TimeoutError:
        sock.close()
        raise AssertionError(f"{method} {path}: no answer within {ANSWER_WITHIN} s while "
                             "the body was still coming (the server waited for it)") from None
    return resp, sock


def _takes_no_more(sock: socket.socket) -> None:
    """The server closed the connection: what the client sends next is not taken in."""
    piece = b"x" * 65536
    with pytest.raises(OSError):  # the pipe breaks after some sends
        for _ in range(2000):
            sock.sendall(piece)
    sock.close()


def _refused_early(url: str, path: str, headers: dict[str, str], status: int,
                   error_type: str, *, chunked: bool = False, method: str = "POST") -> str:
    if chunked:
        headers = {**headers, "Transfer-Encoding": "chunked"}
        piece = b"x" * 32768
        start = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for _ in range(40))
    else:
        headers = {**headers, "Content-Length": str(HUGE)}
        start = b'{"stack_name": "big", "pad": "' + b"x" * 1000
    resp, sock = _raw(url, method, path, headers, start)
    body = json.loads(resp.read())
    assert resp.status == status, body
    assert body["code"] == status and body["error"]["type"] == error_type, body
    assert resp.getheader("connection") == "close"
    _takes_no_more(sock)
    message: str = body["error"]["message"]
    return message


def test_an_oversize_json_body_is_refused_before_it_is_sent(kiln_server: KilnProcess) -> None:
    rss = psutil.Process(kiln_server.proc.pid).memory_info().rss
    for path in ("/v1/demo/stacks", "/v1/demo/validate"):
        message = _refused_early(kiln_server.url, path,
                                 {"Content-Type": "application/json"}, 400,
                                 "RequestLimitExceeded")
        assert message == (f"Request limit exceeded: JSON body size ({HUGE} bytes) exceeds "
                           "maximum allowed size (1048576 bytes).")
        message = _refused_early(kiln_server.url, path, {"Content-Type": "application/json"},
                                 400, "RequestLimitExceeded", chunked=True)
        assert "exceeds maximum allowed size (1048576 bytes)" in message
    grown = psutil.Process(kiln_server.proc.pid).memory_info().rss - rss
    assert grown < 20_000_000, f"RSS grew by {grown} bytes"


@pytest.fixture(scope="module")
def keystone_mode(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    """Keystone mode (the login endpoint reads its body only then); no Keystone answers,
    and none is needed: an oversize body is refused before any login is tried."""
    from tests.support.fixtures import report_errors
    from tests.support.ports import free_port
    from tests.support.server import start_kiln

    nowhere = f"http://127.0.0.1:{free_port()}/v3"
    proc = start_kiln(tmp_path_factory.mktemp("kiln-ks"), options={
        "paste_deploy": {"flavor": "keystone"},
        "keystone_authtoken": {"www_authenticate_uri": nowhere, "auth_url": nowhere,
                               "auth_type": "password", "username": "heat",
                               "password": "x", "project_name": "service",
                               "http_connect_timeout": 1}})
    yield proc
    proc.stop()
    report_errors(proc)


def test_an_oversize_login_body_is_refused_before_it_is_sent(keystone_mode: KilnProcess,
                                                             ) -> None:
    """(Was: the whole body read first; a 200 MB one took RSS from 97 to 292 MB.)"""
    proc = psutil.Process(keystone_mode.proc.pid)
    rss = proc.memory_info().rss
    headers = {"Content-Type": "application/json"}
    message = _refused_early(keystone_mode.url, "/dashboard/session", headers, 413,
                             "HTTPRequestEntityTooLarge")
    assert message == f"The login body ({HUGE} bytes) is larger than 16384 bytes."
    message = _refused_early(keystone_mode.url, "/dashboard/session", headers, 413,
                             "HTTPRequestEntityTooLarge", chunked=True)
    assert message.endswith("is larger than 16384 bytes.")
    assert proc.memory_info().rss - rss < 20_000_000
    # a login form posted from another site: refused before Keystone is asked
    with httpx.Client(base_url=keystone_mode.url, timeout=HTTP_TIMEOUT) as http_:
        _fault(http_.post("/dashboard/session", content=b'{"username": "a"}',
                          headers={"Content-Type": "text/plain"}),
               415, "HTTPUnsupportedMediaType")
        _fault(http_.post("/dashboard/session", json={"username": "a"},
                          headers={"Origin": "http://attacker.example"}),
               403, "HTTPForbidden")


def test_an_oversize_temp_url_signal_is_refused_before_it_is_sent(
        kiln_server: KilnProcess) -> None:
    hc = heat_client(kiln_server.endpoint("demo"))
    sid = create(hc, "tu-big", deployment_template())
    wait_deployment(hc, sid, "CREATE")
    (deployment,) = hc.resources.metadata(sid, "server")["deployments"]
    url = {i["name"]: i["value"] for i in deployment["inputs"]}["deploy_signal_id"]
    parts = urlsplit(url)
    path = f"{parts.path}?{parts.query}"
    base = f"{parts.scheme}://{parts.netloc}"
    # agents send what they send: cfn-signal-like curl, an empty Content-Type
    message = _refused_early(base, path, {"Content-Type": ""}, 400,
                             "RequestLimitExceeded", method="PUT")
    assert f"JSON body size ({HUGE} bytes)" in message
    _refused_early(base, path, {}, 400, "RequestLimitExceeded", chunked=True,
                   method="PUT")
    assert hc.resources.get(sid, "deployment").resource_status == "CREATE_IN_PROGRESS"
    _fault(httpx.put(url, json={"deploy_status_code": 0}, timeout=HTTP_TIMEOUT,
                     headers={"Origin": "http://attacker.example"}), 403, "HTTPForbidden")
    assert hc.resources.get(sid, "deployment").resource_status == "CREATE_IN_PROGRESS"
    # and a signal of the ordinary size, typed text/plain, still completes it
    done = httpx.put(url, content=json.dumps({"deploy_status_code": 0}),
                     headers={"Content-Type": "text/plain"}, timeout=HTTP_TIMEOUT)
    assert done.status_code == 201, done.text
    assert wait_for_stack_status(hc, sid).stack_status == "CREATE_COMPLETE"


def test_the_aws_listeners_refuse_an_oversize_body_before_it_is_sent(
        kiln_server: KilnProcess) -> None:
    """The CFN and CloudWatch listeners go through the same bound (their own errors)."""
    for url, path in ((kiln_server.cfn_url, "/v1/"), (kiln_server.cfn_url, "/v1/signal/x"),
                      (kiln_server.cloudwatch_url, "/")):
        resp, sock = _raw(url, "POST", path,
                          {"Content-Type": "application/x-www-form-urlencoded",
                           "Content-Length": str(HUGE)}, b"Action=ListStacks&" + b"x" * 1000)
        body = resp.read()
        assert resp.status == 400 and b"RequestLimitExceeded" in body, (url, path, body)
        sock.close()
