"""A temp-URL signal (a SoftwareDeployment with ``signal_transport: TEMP_URL_SIGNAL``, on
an ``OS::Heat::DeployedServer`` polling a temp URL) sent to a ``kiln api`` process that
does not run the stack: the URL the server is handed names that process (the temp URLs'
base is ``heat_metadata_server_url``, as an operator sets it), which forwards the signal
to the engine running the stack; the deployment completes with what the server sent."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx

from tests.integration.scaleout.conftest import Cluster, client, wait_for, wait_status
from tests.support.ports import free_port

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "server": {
            "type": "OS::Heat::DeployedServer",
            "properties": {"software_config_transport": "POLL_TEMP_URL"},
        },
        "config": {
            "type": "OS::Heat::SoftwareConfig",
            "properties": {"group": "script", "config": "#!/bin/sh\ntrue\n"},
        },
        "deployment": {
            "type": "OS::Heat::SoftwareDeployment",
            "properties": {
                "config": {"get_resource": "config"},
                "server": {"get_resource": "server"},
                "signal_transport": "TEMP_URL_SIGNAL",
            },
        },
    },
    "outputs": {"stdout": {"value": {"get_attr": ["deployment", "deploy_stdout"]}}},
}


def _signal_url(c: httpx.Client, path: str) -> str | None:
    r = c.get(f"{path}/resources/server/metadata")
    if r.status_code != 200:
        return None
    for deployment in r.json()["metadata"].get("deployments") or []:
        for item in deployment.get("inputs") or []:
            if item.get("name") == "deploy_signal_id" and item.get("value"):
                return str(item["value"])
    return None


def test_temp_url_signal_through_the_other_api(
    sqlite_url: str, cluster_factory: Callable[[str], Cluster]
) -> None:
    cluster = cluster_factory(sqlite_url)
    port = free_port()
    cluster.extra = {"DEFAULT": {"heat_metadata_server_url": f"http://127.0.0.1:{port}/v1/"}}
    cluster.engine()
    other = cluster.api(port=port)
    with client(cluster.api()) as c:
        r = c.post("/stacks", json={"stack_name": "deployed", "template": TEMPLATE})
        assert r.status_code == 201, r.text
        path = f"/stacks/deployed/{r.json()['stack']['id']}"
        url: Any = wait_for(lambda: _signal_url(c, path), what="the deployment's signal URL")
        assert urlsplit(url).netloc == f"127.0.0.1:{other.port}", url
        assert "temp_url_sig=" in url, url
        body = {"deploy_stdout": "from-the-server", "deploy_status_code": 0}
        r = httpx.put(url, content=json.dumps(body), timeout=60)
        assert r.status_code == 201, r.text  # Swift's answer to a temp URL's PUT
        wait_status(c, "deployed", "CREATE_COMPLETE")
        out = c.get(f"{path}/outputs/stdout").json()["output"]["output_value"]
        assert out == "from-the-server"
