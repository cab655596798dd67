"""The URLs a stack hands its servers come from configuration, never from a request.

Issue 22, finding 2: the base of every signal, wait-condition, metadata and alarm URL
was remembered process-wide from the latest request's Host header, before any
authentication, so anyone could point new stacks' servers (and the credentials they
send) at a host of theirs. Here requests with ``Host: attacker.example`` reach every
listener (the version document, a refused CFN request, a temp URL with a forged
signature: 401) before and while a stack is created; every URL it hands out names the
configured listeners, while the API's own ``links`` still follow the request, as Heat's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.functional.agents.deploying import create, deploy_actions, wait_for
from tests.support.clients import heat_client
from tests.support.server import HTTP_TIMEOUT, KilnProcess, start_kiln

ATTACKER = "attacker.example"
STACK_ID = "0f6e2b3c-8c2e-4a43-9d58-0b8c3c1d2e4f"

CONFIG = {"type": "OS::Heat::SoftwareConfig",
          "properties": {"group": "script", "config": "#!/bin/sh\ntrue\n"}}
TEMPLATE: dict[str, Any] = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "aws_handle": {"type": "AWS::CloudFormation::WaitConditionHandle"},
        "cfn_handle": {"type": "OS::Heat::WaitConditionHandle",
                       "properties": {"signal_transport": "CFN_SIGNAL"}},
        "heat_handle": {"type": "OS::Heat::WaitConditionHandle",
                        "properties": {"signal_transport": "HEAT_SIGNAL"}},
        "group": {"type": "OS::Heat::AutoScalingGroup",
                  "properties": {"min_size": 1, "max_size": 2,
                                 "resource": {"type": "OS::Heat::None"}}},
        "policy": {"type": "OS::Heat::ScalingPolicy",
                   "properties": {"auto_scaling_group_id": {"get_resource": "group"},
                                  "adjustment_type": "change_in_capacity",
                                  "scaling_adjustment": 1}},
        "cfn_server": {"type": "OS::Heat::DeployedServer",
                       "properties": {"software_config_transport": "POLL_SERVER_CFN"}},
        "url_server": {"type": "OS::Heat::DeployedServer",
                       "properties": {"software_config_transport": "POLL_TEMP_URL"}},
        "config": CONFIG,
        "cfn_deployment": {"type": "OS::Heat::SoftwareDeployment",
                           "properties": {"config": {"get_resource": "config"},
                                          "server": {"get_resource": "cfn_server"},
                                          "signal_transport": "CFN_SIGNAL"}},
        "url_deployment": {"type": "OS::Heat::SoftwareDeployment",
                           "properties": {"config": {"get_resource": "config"},
                                          "server": {"get_resource": "url_server"},
                                          "signal_transport": "TEMP_URL_SIGNAL"}},
    },
    "outputs": {
        "aws_handle": {"value": {"get_resource": "aws_handle"}},
        "cfn_signal": {"value": {"get_attr": ["cfn_handle", "signal"]}},
        "heat_signal": {"value": {"get_attr": ["heat_handle", "signal"]}},
        "alarm_url": {"value": {"get_attr": ["policy", "alarm_url"]}},
        "signal_url": {"value": {"get_attr": ["policy", "signal_url"]}},
    },
}


@pytest.fixture(scope="module")
def kiln(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    # any Host answered (the DNS rebinding check off, test_dns_rebinding.py), so the
    # attacker's Host reaches every route and must still steer no URL
    proc = start_kiln(tmp_path_factory.mktemp("kiln-urls"),
                      options={"DEFAULT": {"graceful_shutdown_timeout": 2},
                               "kiln_api": {"allowed_hosts": "*"}})
    yield proc
    proc.stop()


def as_attacker(kiln: KilnProcess, temp_url: str | None = None) -> None:
    """Requests naming another host, on every listener, some of them refused (a temp
    URL with a forged signature is a 401)."""
    host = {"Host": ATTACKER}
    assert httpx.get(kiln.url + "/", headers=host, timeout=HTTP_TIMEOUT).status_code == 300
    missing = httpx.get(f"{kiln.url}/v1/AUTH_demo/{STACK_ID}/x?temp_url_sig=00"
                        "&temp_url_expires=99999999999", headers=host, timeout=HTTP_TIMEOUT)
    assert missing.status_code == 404
    if temp_url is not None:
        forged = httpx.get(temp_url.replace("temp_url_sig=", "temp_url_sig=0"),
                           headers=host, timeout=HTTP_TIMEOUT)
        assert forged.status_code == 401, forged.text
    refused = httpx.get(kiln.cfn_url + "?Action=ListStacks", headers=host,
                        timeout=HTTP_TIMEOUT)
    assert 400 <= refused.status_code < 500
    assert httpx.get(kiln.cfn_url.removesuffix("/v1/") + "/", headers=host,
                     timeout=HTTP_TIMEOUT).status_code == 300
    listed = httpx.get(kiln.endpoint("demo") + "/stacks", headers=host, timeout=HTTP_TIMEOUT)
    assert listed.status_code == 200


def urls_in(value: Any) -> list[str]:
    """Every http(s) URL in a JSON-like value (strings inside strings included)."""
    text = json.dumps(value)
    found = []
    for part in text.replace('\\"', '"').split('"'):
        if part.startswith(("http://", "https://")):
            found.append(part)
    return found


def test_urls_handed_to_servers_name_the_configured_listeners(kiln: KilnProcess) -> None:
    as_attacker(kiln)
    hc = heat_client(kiln.endpoint("demo"))
    sid = create(hc, "urls", TEMPLATE)
    as_attacker(kiln)
    wait_for(lambda: (deploy_actions(hc, sid, "cfn_server"),
                      deploy_actions(hc, sid, "url_server")),
             lambda got: "CREATE" in got[0] and "CREATE" in got[1],
             "both deployments in their servers' metadata")
    occ = hc.resources.get(sid, "url_server").attributes["os_collect_config"]
    as_attacker(kiln, temp_url=occ["request"]["metadata_url"])
    stack = hc.stacks.get(sid)
    handed: list[str] = []
    for output in stack.outputs:
        handed += urls_in(output.get("output_value"))
    for server in ("cfn_server", "url_server"):
        handed += urls_in(hc.resources.get(sid, server).attributes["os_collect_config"])
        handed += urls_in(hc.resources.metadata(sid, server))
    native, cfn = f"127.0.0.1:{kiln.port}", f"127.0.0.1:{kiln.cfn_port}"
    places = {urlsplit(url).netloc for url in handed}
    assert ATTACKER not in " ".join(handed)
    assert places == {native, cfn}, handed
    # each kind on its listener: CFN's pre-signed URLs and metadata, the native API's
    # signal routes and temp URLs
    outs = {o["output_key"]: o["output_value"] for o in stack.outputs}
    assert outs["aws_handle"].startswith(f"http://{cfn}/v1/waitcondition/")
    assert json.loads(outs["cfn_signal"])["alarm_url"].startswith(f"http://{cfn}/v1/")
    assert outs["alarm_url"].startswith(f"http://{cfn}/v1/signal/")
    assert outs["signal_url"].startswith(f"http://{native}/v1/demo/stacks/")
    assert json.loads(outs["heat_signal"])["alarm_url"].startswith(
        f"http://{native}/v1/demo/stacks/")
    occ = hc.resources.get(sid, "cfn_server").attributes["os_collect_config"]
    assert occ["cfn"]["metadata_url"] == f"http://{cfn}/v1/"
    # a stack made after the 401: its handle's URL is still the configured listener's
    after = hc.stacks.create(stack_name="urls-after", template={
        "heat_template_version": "2018-08-31",
        "resources": {"handle": {"type": "AWS::CloudFormation::WaitConditionHandle"}},
        "outputs": {"url": {"value": {"get_resource": "handle"}}}})["stack"]["id"]
    made = wait_for(lambda: hc.stacks.get(after),
                    lambda s: not s.stack_status.endswith("IN_PROGRESS"), "urls-after")
    (url,) = [o["output_value"] for o in made.outputs]
    assert url.startswith(f"http://{cfn}/v1/waitcondition/"), url
    # the API's own links still follow the request, as Heat builds them
    shown = httpx.get(f"{kiln.endpoint('demo')}/stacks/urls/{sid}",
                      headers={"Host": "links.example:8004"}, timeout=HTTP_TIMEOUT)
    assert shown.json()["stack"]["links"][0]["href"].startswith(
        "http://links.example:8004/v1/demo/stacks/urls/")
