"""The signal URL a wait-condition handle hands to servers, made by a ``kiln engine``
(found by the multi-process probe, issue 24).

Before, the engine named its own ``[heat_api]`` listener in the handle's ``endpoint`` and
``curl_cli``: an engine runs no API, so a server signalling the URL it was given reached
nothing (or whatever listened on 8004). Heat takes that URL from ``[clients_heat] url``
(``.../v1/%(tenant_id)s``); Kiln now does too, so the URL names the API process (or load
balancer) the operator chose, and an agent's signal to it completes the wait condition.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable

import httpx

from tests.integration.scaleout.conftest import Cluster, client, wait_for, wait_status

WAITING = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "handle": {"type": "OS::Heat::WaitConditionHandle"},
        "wait": {"type": "OS::Heat::WaitCondition",
                 "properties": {"handle": {"get_resource": "handle"}, "timeout": 120}},
    },
    "outputs": {"curl": {"value": {"get_attr": ["handle", "curl_cli"]}},
                "data": {"value": {"get_attr": ["wait", "data"]}}},
}


def test_handle_curl_cli_names_clients_heat_url(
        postgresql_url: str, cluster_factory: Callable[[str], Cluster]) -> None:
    cluster = cluster_factory(postgresql_url)
    one, two = cluster.api(), cluster.api()
    cluster.extra = {"clients_heat": {"url": f"{two.url}/v1/%(tenant_id)s"}}
    cluster.engine()
    with client(one) as c1:
        r = c1.post("/stacks", json={"stack_name": "agent", "template": WAITING})
        assert r.status_code == 201, r.text
        path = f"/stacks/agent/{r.json()['stack']['id']}"
        wait_for(lambda: c1.get(f"{path}/resources/wait").json()["resource"]
                 ["resource_status"] == "CREATE_IN_PROGRESS", what="the wait condition")
        # the command a server runs, as the handle gives it (curl -i -X POST -H ... URL)
        words = shlex.split(c1.get(f"{path}/outputs/curl").json()["output"]["output_value"])
        url = words[-1]
        assert url == f"{two.url}/v1/demo{path}/resources/handle/signal", url
        headers = dict(w.split(": ", 1) for w, flag in zip(words[1:], words, strict=False)
                       if flag == "-H")
        answer = httpx.post(url, headers=headers, json={"status": "SUCCESS",
                                                         "data": "agent", "id": "1"})
        assert answer.status_code == 200, answer.text
        wait_status(c1, "agent", "CREATE_COMPLETE")
        assert "agent" in str(c1.get(f"{path}/outputs/data").json()["output"])
