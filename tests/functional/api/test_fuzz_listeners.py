"""Fuzzing the native listener's request parsing against a real ``kiln serve``: random
methods, paths, query strings, headers and bodies on the API routes, the temp URLs, the
dashboard's login endpoint and the event stream (``events?stream=true``).

Whatever arrives: no 5xx (bar the documented 503 of a login whose Keystone cannot be
reached), no traceback in any answer, every error in Heat's fault body, and the server
keeps answering another client within 1 s throughout (a pinger runs beside the fuzz).

The CI run is a fast, derandomized subset (``FUZZ_EXAMPLES`` examples a test: 18 s for
the module's tests plus ~10 s of server starts, at load 13 on two CPUs);
``KILN_FUZZ_EXAMPLES=4000`` runs a long, random one (~10 minutes).
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.functional.agents.deploying import create, deployment_template, wait_deployment
from tests.support.clients import heat_client, wait_for_stack_status
from tests.support.server import KilnProcess

FUZZ_EXAMPLES = 40
EXAMPLES = int(os.environ.get("KILN_FUZZ_EXAMPLES", FUZZ_EXAMPLES))
LONG_RUN = EXAMPLES > FUZZ_EXAMPLES
#: the longest another client may wait for an answer while the fuzz runs
LIVENESS_SECONDS = 1.0

FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=not LONG_RUN,
                suppress_health_check=list(HealthCheck), print_blob=True)

TEMPLATE = {"heat_template_version": "2018-08-31",
            "resources": {"r": {"type": "OS::Heat::None"},
                          "s": {"type": "OS::Heat::RandomString", "properties": {"length": 4}}},
            "outputs": {"o": {"value": {"get_attr": ["s", "value"]}}}}


# -- the pinger and the checks ----------------------------------------------------------

def _queued(path: str) -> float:
    """Seconds a thread has spent runnable but waiting for a CPU (Linux schedstat);
    0 where the kernel does not say."""
    try:
        with open(path) as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def ping(url: str, server_pid: int, stop: Any, out: Any) -> None:
    """Another client, in a process of its own (the fuzz's GIL is not its delay): asks
    for the version document over and over until ``stop``; puts each answer slower
    than LIVENESS_SECONDS of the server's own time on ``out``, then its worst times.

    On a machine with more runnable threads than CPUs (CI's two workers, other jobs)
    an answer can be late only because the server's event loop, or this client, was
    runnable but waiting for a CPU; that wait is the kernel's (schedstat), not the
    server's, and is taken off. A loop blocked by a request is running, or sleeping
    in a call, and counts in full."""
    server = f"/proc/{server_pid}/task/{server_pid}/schedstat"
    me = f"/proc/self/task/{threading.get_native_id()}/schedstat"
    worst = worst_own = 0.0
    with httpx.Client(base_url=url, timeout=LIVENESS_SECONDS * 10) as client:
        while not stop.is_set():
            queued = _queued(server) + _queued(me)
            started, wall = time.monotonic(), time.time()
            try:
                status = client.get("/versions").status_code
            except httpx.HTTPError as exc:
                out.put((wall, f"{type(exc).__name__}: {exc}"))
                status = 0
            took = time.monotonic() - started
            waited = _queued(server) + _queued(me) - queued
            worst, worst_own = max(worst, took), max(worst_own, took - waited)
            if took - waited > LIVENESS_SECONDS or status != 300:
                out.put((wall, f"{took:.2f} s ({waited:.2f} s waiting for a CPU), status "
                               f"{status}, load {os.getloadavg()[0]:.1f}"))
            stop.wait(0.05)  # paces the pings; the stop event ends the loop
    out.put((worst, worst_own))


@dataclass
class Pinger:
    slow: list[str] = field(default_factory=list)
    worst: float = 0.0
    worst_own: float = 0.0


@pytest.fixture(scope="module")
def pinger(kiln_server: KilnProcess) -> Iterator[Pinger]:
    context = multiprocessing.get_context("spawn")
    stop, out = context.Event(), context.Queue()
    child = context.Process(target=ping, args=(kiln_server.url, kiln_server.proc.pid,
                                               stop, out), daemon=True)
    child.start()
    pinger = Pinger()
    yield pinger
    stop.set()
    while True:
        when, what = out.get(timeout=60)
        if isinstance(when, float) and isinstance(what, float):
            pinger.worst, pinger.worst_own = when, what
            break
        during = [r for t, r in list(RECENT) if when - 1.0 <= t <= when + 2.0]
        pinger.slow.append(f"{what}, while: {during[-4:]}")
    child.join(30)
    print(f"\nanother client's worst wait during the fuzz: {pinger.worst:.3f} s, "
          f"{pinger.worst_own:.3f} s of it the server's own")
    assert not pinger.slow, f"the server stalled: {pinger.slow[:5]}"


def check(resp: httpx.Response, what: str, *, allow_503: bool = False) -> None:
    body = resp.content
    assert resp.status_code < 500 or (allow_503 and resp.status_code == 503), (
        f"{what} -> {resp.status_code}: {body[:500]!r}")
    assert b"Traceback" not in body and b'File "/' not in body, f"{what}: {body[:500]!r}"
    if resp.status_code >= 400 and resp.request.method != "HEAD":
        fault = resp.json()
        assert set(fault) == {"code", "title", "explanation", "error"}, (what, fault)
        assert fault["code"] == resp.status_code and fault["error"]["traceback"] is None


#: the fuzz's latest requests (when sent, what), named when the pinger saw a stall
RECENT: deque[tuple[float, str]] = deque(maxlen=50)


def send(client: httpx.Client, method: str, target: str, headers: dict[str, bytes],
         body: bytes | None) -> httpx.Response:
    """``target`` goes on the request line as it is (raw path and query)."""
    RECENT.append((time.time(), f"{method} {target[:120]} ({len(body or b'')} B: "
                                     f"{(body or b'')[:60]!r})"))
    raw = [(k.encode(), v) for k, v in headers.items()]
    request = client.build_request(method, "/", headers=raw, content=body,
                                   extensions={"target": target.encode("latin-1")})
    return client.send(request)


# -- strategies ---------------------------------------------------------------------------

printable = st.characters(min_codepoint=0x20, max_codepoint=0xFF,
                          exclude_characters="\x7f")
header_text = st.text(printable, max_size=80).map(str.strip)
any_text = st.text(max_size=40)
CONTENT_TYPES = ["application/json", "application/json; charset=utf-8", "text/plain",
                 "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
                 "multipart/form-data; boundary=zz", "application/merge-patch+json",
                 "application/xml", "*/*", "application/json;;;=", "", "application/",
                 "+json", "APPLICATION/JSON"]
HEADER_NAMES = ["accept", "origin", "x-auth-token", "last-event-id", "sec-fetch-site",
                "x-openstack-request-id", "range", "accept-encoding", "x-auth-user",
                "x-auth-key", "cookie", "authorization", "access-control-request-method",
                "access-control-request-headers", "if-modified-since", "x-forwarded-host",
                "expect"]


@st.composite
def headers(draw: Any) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    if draw(st.booleans()):
        out["content-type"] = draw(st.sampled_from(CONTENT_TYPES) | header_text).encode(
            "latin-1")
    for name in draw(st.lists(st.sampled_from(HEADER_NAMES), max_size=4, unique=True)):
        if name == "expect":
            continue  # 100-continue is the HTTP library's business, not the API's
        value = draw(st.sampled_from(["http://attacker.example", "null", "cross-site",
                                      "same-origin", "bytes=0-1", "*", "gzip"])
                     | header_text)
        out[name] = value.encode("latin-1")
    return out


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | any_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(any_text, inner, max_size=4),
    max_leaves=20)
STACK_FIELDS = ["stack_name", "template", "parameters", "environment", "files", "timeout_mins",
                "disable_rollback", "tags", "template_url", "existing", "adopt_stack_data",
                "suspend", "resume", "check", "cancel_update", "name", "config", "group",
                "inputs", "outputs", "options", "server_id", "action", "status",
                "status_reason", "mark_unhealthy", "resource_status_reason", "data",
                "deploy_status_code", "username", "password", "project_id", "token"]
json_objects = st.dictionaries(st.sampled_from(STACK_FIELDS) | any_text,
                               json_values | st.just(TEMPLATE), max_size=5)
bodies = st.one_of(
    st.none(), st.just(b""), st.binary(max_size=200),
    json_objects.map(lambda o: json.dumps(o).encode()),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.sampled_from([b"{" * 3000, b'{"a": ' * 1500, b"[" * 100_000, b'{"template": "' +
                     b"a: " * 10_000 + b'"}', b"\xff\xfe{", b'{"stack_name": "\x00"}']))


def segment(real: list[str]) -> st.SearchStrategy[str]:
    words = ["stacks", "resources", "events", "actions", "preview", "snapshots", "outputs",
             "template", "environment", "files", "abandon", "export", "signal", "metadata",
             "software_configs", "software_deployments", "validate", "resource_types",
             "template_versions", "functions", "build_info", "services", "detail", "restore",
             "OS::Heat::None", "arn:openstack:heat::demo:stacks/fz/x", "..", ".", "%2e%2e",
             "%00", "%ff", "AUTH_demo"]
    return (st.sampled_from(words + real)
            | any_text.map(lambda t: quote(t, safe=""))
            | st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7e,
                                    exclude_characters="?#"), max_size=12))


def query_strings() -> st.SearchStrategy[str]:
    keys = st.sampled_from(["stream", "marker", "limit", "sort_keys", "sort_dir", "nested_depth",
                            "resource_name", "resource_action", "resource_status",
                            "resource_type", "global_tenant", "show_deleted", "show_nested",
                            "with_detail", "tags", "name", "status", "temp_url_sig",
                            "temp_url_expires", "filter", "show_hidden", "ignore_errors",
                            "not_tags", "name_contains", "with_count", "resolve_outputs"])
    values = st.sampled_from(["true", "false", "1", "0", "-1", "99999999999999999999",
                              "asc", "desc", "nan", "", "name"]) | any_text
    pair = st.tuples(keys | any_text, values).map(
        lambda kv: f"{quote(kv[0], safe='')}={quote(kv[1], safe='')}")
    raw = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7e,
                                exclude_characters="#"), max_size=30)
    return st.lists(pair, max_size=4).map("&".join) | raw


methods = st.sampled_from(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])


# -- the fixtures: real stacks to aim at --------------------------------------------------

@dataclass
class Targets:
    stack_name: str
    stack_id: str
    temp_url: str
    deploy_stack: str


@pytest.fixture(scope="module")
def targets(kiln_server: KilnProcess) -> Iterator[Targets]:
    hc = heat_client(kiln_server.endpoint("fuzz"))
    made = hc.stacks.create(stack_name="fz", template=TEMPLATE)
    sid = made["stack"]["id"]
    assert wait_for_stack_status(hc, "fz").stack_status == "CREATE_COMPLETE"
    deploy = create(hc, "fz-deploy", deployment_template())
    wait_deployment(hc, deploy, "CREATE")
    (deployment,) = hc.resources.metadata(deploy, "server")["deployments"]
    url = {i["name"]: i["value"] for i in deployment["inputs"]}["deploy_signal_id"]
    yield Targets("fz", sid, str(url), deploy)
    # the deployment waits for a signal the fuzz never sends: delete it (pre-empting the
    # create), or the server's graceful stop would wait for it past the fixture's bound
    from heatclient import exc as heat_exc

    hc.stacks.delete(deploy)
    with contextlib.suppress(heat_exc.HTTPNotFound):   # gone once deleted
        assert wait_for_stack_status(hc, deploy).stack_status == "DELETE_COMPLETE"


@pytest.fixture(scope="module")
def client(kiln_server: KilnProcess, pinger: Pinger) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=kiln_server.url, timeout=60, follow_redirects=False) as c:
        yield c


# -- the fuzz -----------------------------------------------------------------------------

@FUZZ
@given(data=st.data())
def test_native_api_requests(data: Any, client: httpx.Client, targets: Targets) -> None:
    real = [targets.stack_name, targets.stack_id, "r", "s", "o"]
    tenant = data.draw(st.sampled_from(["fuzz", "demo"]) | segment([]))
    segments = data.draw(st.lists(segment(real), max_size=6))
    if data.draw(st.booleans()):
        segments = ["stacks", targets.stack_name, targets.stack_id, *segments]
    path = "/v1/" + "/".join([tenant, *segments])
    query = data.draw(query_strings())
    target = path + ("?" + query if query else "")
    method = data.draw(methods)
    resp = send(client, method, target, data.draw(headers()), data.draw(bodies))
    check(resp, f"{method} {target}")


@FUZZ
@given(data=st.data())
def test_other_paths_of_the_listener(data: Any, client: httpx.Client) -> None:
    prefix = data.draw(st.sampled_from(["/", "/versions", "/openapi.yaml", "/dashboard/",
                                        "/v2/", "/v1.1/", "/v1", "//", "/v1/%2F/"]))
    rest = "/".join(data.draw(st.lists(segment([]), max_size=3)))
    query = data.draw(query_strings())
    target = prefix + rest + ("?" + query if query else "")
    method = data.draw(methods)
    resp = send(client, method, target, data.draw(headers()), data.draw(bodies))
    if resp.status_code < 400:
        return  # the dashboard's page and assets, the version document
    check(resp, f"{method} {target}")


def _mutated_temp_url(data: Any, url: str) -> str:
    parts = urlsplit(url)
    path, query = parts.path, parts.query
    choice = data.draw(st.integers(0, 5))
    if choice == 1:
        query = data.draw(query_strings())
    elif choice == 2:
        query = query.replace("temp_url_sig=", "temp_url_sig=" + data.draw(any_text.map(
            lambda t: quote(t, safe=""))))
    elif choice == 3:
        pieces = path.split("/")
        at = data.draw(st.integers(1, len(pieces) - 1))
        pieces[at] = data.draw(segment([]))
        path = "/".join(pieces)
    elif choice == 4:
        path += "/" + data.draw(segment([]))
    elif choice == 5:
        query += "&" + data.draw(query_strings())
    return path + ("?" + query if query else "")


@FUZZ
@given(data=st.data())
def test_temp_url_requests(data: Any, client: httpx.Client, targets: Targets) -> None:
    target = _mutated_temp_url(data, targets.temp_url)
    method = data.draw(st.sampled_from(["GET", "HEAD", "PUT", "PUT", "POST", "DELETE"]))
    resp = send(client, method, target, data.draw(headers()), data.draw(bodies))
    check(resp, f"{method} {target}")


@FUZZ
@given(data=st.data())
def test_dashboard_session_requests(data: Any, client: httpx.Client) -> None:
    method = data.draw(st.sampled_from(["GET", "POST", "POST", "PUT", "DELETE"]))
    query = data.draw(query_strings())
    target = "/dashboard/session" + ("?" + query if query else "")
    resp = send(client, method, target, data.draw(headers()), data.draw(bodies))
    check(resp, f"{method} {target}")


@pytest.fixture(scope="module")
def keystone_client(tmp_path_factory: pytest.TempPathFactory,
                    kiln_server: KilnProcess, pinger: Pinger) -> Iterator[httpx.Client]:
    """Keystone mode, where the login endpoint reads its body; the Keystone it names does
    not answer, so a login that gets that far is the documented 503."""
    from tests.support.fixtures import report_errors
    from tests.support.ports import free_port
    from tests.support.server import start_kiln

    nowhere = f"http://127.0.0.1:{free_port()}/v3"
    proc = start_kiln(tmp_path_factory.mktemp("kiln-fuzz-ks"), options={
        "paste_deploy": {"flavor": "keystone"},
        "keystone_authtoken": {"www_authenticate_uri": nowhere, "auth_url": nowhere,
                               "auth_type": "password", "username": "heat",
                               "password": "x", "project_name": "service",
                               "http_connect_timeout": 1}})
    with httpx.Client(base_url=proc.url, timeout=60) as c:
        yield c
    proc.stop()
    report_errors(proc)


@FUZZ
@given(data=st.data())
def test_login_requests_in_keystone_mode(data: Any, keystone_client: httpx.Client) -> None:
    method = data.draw(st.sampled_from(["GET", "POST", "POST", "POST"]))
    body = data.draw(bodies | st.fixed_dictionaries(
        {"username": any_text, "password": any_text},
        optional={"project_name": any_text, "project_id": any_text,
                  "user_domain_name": any_text, "token": any_text,
                  "project_domain_name": any_text}).map(lambda d: json.dumps(d).encode()))
    resp = send(keystone_client, method, "/dashboard/session", data.draw(headers()), body)
    check(resp, f"{method} /dashboard/session", allow_503=True)
    if resp.status_code == 503:
        assert resp.headers.get("retry-after"), resp.text


@FUZZ
@given(data=st.data())
def test_event_stream_requests(data: Any, client: httpx.Client, targets: Targets) -> None:
    stack = data.draw(st.sampled_from([f"{targets.stack_name}/{targets.stack_id}",
                                       targets.stack_name, "fz-deploy",
                                       f"{targets.stack_name}/{targets.stack_id}/resources/r"]))
    query = "stream=" + data.draw(st.sampled_from(["true", "1", "yes", "TRUE"]) | any_text.map(
        lambda t: quote(t, safe="")))
    extra = data.draw(query_strings())
    target = f"/v1/fuzz/stacks/{stack}/events?{query}" + (f"&{extra}" if extra else "")
    raw = [(k.encode(), v) for k, v in data.draw(headers()).items()]
    request = client.build_request("GET", "/", headers=raw,
                                   extensions={"target": target.encode("latin-1")})
    RECENT.append((time.time(), f"GET {target[:120]} (stream)"))
    resp = client.send(request, stream=True)
    try:
        if resp.status_code == 200 and resp.headers.get("content-type", "").startswith(
                "text/event-stream"):
            first = next(resp.iter_raw(), b"")
            assert first.startswith(b": kiln event stream"), first[:200]
            assert b"Traceback" not in first
            return
        resp.read()
        if resp.status_code >= 300 and resp.status_code != 302:
            check(resp, f"GET {target}")
    finally:
        resp.close()


def test_what_the_fuzz_found(client: httpx.Client, keystone_client: httpx.Client,
                             targets: Targets) -> None:
    """Each was a 500 before: a login body nested past the JSON parser's recursion, a
    re-scope token that cannot go in a header, a temp-URL signature with non-ASCII
    characters."""
    deep = b"[" * 15000
    check(keystone_client.post("/dashboard/session", content=deep,
                               headers={"Content-Type": "application/json"}), "deep login")
    assert keystone_client.post("/dashboard/session", content=deep).status_code == 400
    odd = keystone_client.post("/dashboard/session",
                               json={"token": "\u0100abc", "project_id": "p"})
    check(odd, "odd token")
    assert odd.status_code == 400 and "not a Keystone token" in odd.text
    parts = urlsplit(targets.temp_url)
    query = parts.query.replace("temp_url_sig=", "temp_url_sig=%C3%A9")
    forged = send(client, "PUT", f"{parts.path}?{query}", {}, b"{}")
    check(forged, "non-ASCII signature")
    assert forged.status_code == 401


def test_the_server_answers_for_its_stacks_afterwards(client: httpx.Client,
                                                     targets: Targets) -> None:
    """The fuzz may have changed the stacks; the server still answers for them (the
    pinger's verdict comes when the module ends, in its fixture)."""
    for path in (f"/v1/fuzz/stacks/{targets.stack_name}/{targets.stack_id}",
                 f"/v1/fuzz/stacks/fz-deploy/{targets.deploy_stack}"):
        resp = client.get(path)
        assert resp.status_code in (200, 404), resp.text


def test_the_pinger_sees_a_stalled_server() -> None:
    """The liveness check can fail: a server that takes 1.5 s to answer (sleeping, as a
    loop blocked in a call would) is reported, whatever the machine's load."""
    import http.server
    import queue

    from tests.support.local_http import local_http_server

    class Slow(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            time.sleep(1.5)  # the stall under test, not a wait for something
            self.send_response(300)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    stop, out = threading.Event(), queue.Queue[tuple[Any, Any]]()
    with local_http_server(Slow) as url:
        # the handler thread is not the server process's main thread: its own waits
        # for a CPU are not taken off, so the stall counts in full
        threading.Timer(2.0, stop.set).start()
        ping(url, os.getpid(), stop, out)
    first = out.get_nowait()
    assert isinstance(first[1], str) and first[1].startswith("1.5"), first
