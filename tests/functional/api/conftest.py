"""A real uvicorn server running the API app alone, for wire-layer tests.

No engine stands behind ``wire_server``: the requests sent to it must be answered by the
API layer itself (version document, parsing, limits, fault bodies, ARN redirects); if one
reached the engine it would fail loudly with a 500, which the tests check never happens.
Engine-backed tests use the shared ``kiln_server`` fixture (a real ``kiln serve``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import uvicorn
from oslo_config import cfg

from kiln import conf as kiln_conf
from kiln import conf_identity as auth_options
from kiln.api.app import create_app
from tests.support.ports import free_port
from tests.support.server import HTTP_TIMEOUT


@dataclass
class WireServer:
    url: str
    conf: cfg.ConfigOpts

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=HTTP_TIMEOUT, follow_redirects=False)


def _serve(app: Any, port: int) -> tuple[uvicorn.Server, threading.Thread]:
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None,
                            access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    ready = threading.Event()
    while not server.started:
        if not thread.is_alive():
            raise AssertionError("uvicorn failed to start")
        ready.wait(0.01)  # uvicorn exposes no start event; bounded by the thread dying
    return server, thread


def small_limits_conf() -> cfg.ConfigOpts:
    """Kiln's options on a private ConfigOpts (the global one stays untouched), with small
    body and template limits so the tests can cross them cheaply."""
    conf = cfg.ConfigOpts()
    conf.register_opts(kiln_conf.default_opts)
    auth_options.register(conf)  # [paste_deploy] flavor and the rest create_app reads
    conf([], project="kiln", default_config_files=[])
    conf.set_override("max_json_body_size", 4096)
    conf.set_override("max_template_size", 2048)
    # short enough for the stalled server's test, long enough that a loaded machine
    # (load 15+ on 2 CPUs) still fetches a template that answers at once
    conf.set_override("template_url_timeout", 5)
    # the tests' template server listens on loopback, which is refused unless allowed
    conf.set_override("template_url_allowed_hosts", ["127.0.0.1"])
    return conf


@pytest.fixture(scope="module")
def wire_server() -> Iterator[WireServer]:
    conf = small_limits_conf()
    port = free_port()
    server, thread = _serve(create_app(None, conf), port)
    try:
        yield WireServer(f"http://127.0.0.1:{port}", conf)
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture
def wire(wire_server: WireServer) -> Iterator[httpx.Client]:
    with wire_server.client() as client:
        yield client


@pytest.fixture(scope="module")
def heat_endpoint(request: pytest.FixtureRequest) -> str:
    """The v1 endpoint (``.../v1/<project>``) the heatclient tests drive."""
    from tests.functional.api.heat_target import COMPARE_URL

    if COMPARE_URL:
        return COMPARE_URL
    server = request.getfixturevalue("kiln_server")
    return str(server.endpoint("demo"))


@pytest.fixture(scope="module")
def hc(heat_endpoint: str) -> object:
    from tests.support.clients import heat_client

    return heat_client(heat_endpoint)
