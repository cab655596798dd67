"""Temp URLs are served where they are handed out.

Issue 27: with ``heat_metadata_server_url`` set (naming the CFN listener, as every real
deployment sets it) the temp URLs of POLL_TEMP_URL and TEMP_URL_SIGNAL were handed out
on that listener but served only by the native one: os-collect-config's ``request``
collector got 404 and the deployment never completed. The CFN listener serves them now;
here the real agent chain runs against such a server.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.functional.agents.deploying import (
    create,
    deployment_template,
    metadata_url,
    outputs,
    server_collector,
    settled,
    wait_deployment,
)
from tests.support.agents import Sandbox
from tests.support.clients import heat_client
from tests.support.ports import free_port
from tests.support.server import HTTP_TIMEOUT, KilnProcess, start_kiln


@pytest.fixture(scope="module", params=["", "/v1/"], ids=["root", "v1"])
def cfn_kiln(request: pytest.FixtureRequest,
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    """The option as operators write it: the listener's root, or its ``/v1/``."""
    cfn_port = free_port()
    url = f"http://127.0.0.1:{cfn_port}{request.param}"
    proc = start_kiln(tmp_path_factory.mktemp("kiln-cfn-urls"), options={
        "DEFAULT": {"heat_metadata_server_url": url,
                    "graceful_shutdown_timeout": 2},
        "heat_api_cfn": {"bind_port": cfn_port}})
    proc.cfn_port = cfn_port  # the port given above, over the one start_kiln chose
    yield proc
    proc.stop()


def test_the_agents_chain_runs_through_the_cfn_listener(cfn_kiln: KilnProcess,
                                                       box: Sandbox) -> None:
    hc: Any = heat_client(cfn_kiln.endpoint("demo"))
    sid = create(hc, "on-cfn", deployment_template(), greeting="hi")
    wait_deployment(hc, sid, "CREATE")
    args = server_collector(hc, sid)
    url = metadata_url(args)
    assert url.startswith(f"http://127.0.0.1:{cfn_kiln.cfn_port}/v1/AUTH_demo/{sid}/"), url
    polled = httpx.get(url, timeout=HTTP_TIMEOUT)
    assert polled.status_code == 200, polled.text
    # a forged signature: the temp URL's own 401, in Heat's fault body, on this listener
    forged = httpx.get(url.replace("temp_url_sig=", "temp_url_sig=0"), timeout=HTTP_TIMEOUT)
    assert forged.status_code == 401
    assert forged.json()["error"]["type"] == "HTTPUnauthorized"

    run = box.run_chain(args)
    assert run.returncode == 0, box.log()
    stack = settled(hc, sid)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    assert outputs(hc, sid)["result"] == "hi-done"
