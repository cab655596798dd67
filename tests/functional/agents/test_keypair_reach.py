"""A server's credentials reach only what was handed to that server.

Issue 22, finding 7: a DeployedServer's POLL_SERVER_CFN keypair signed
``/v1/signal/<ARN of another server's deployment>`` and completed it with forged
outputs, and grew an autoscaling group through its ScalingPolicy's signal. Now a keypair
Kiln issued to a resource signals that resource only (AWS's 403 ``AccessDenied``),
while the URLs each resource was handed, pre-signed with its own keypair, still work.

Requests are signed here as Heat's pre-signed URLs are (SigV2 in the query) and as
botocore signs (SigV4 in the headers), with the keypair the server was issued.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

import httpx
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from kiln import ec2sign
from tests.functional.agents.deploying import create, settled, wait_deployment, wait_for
from tests.support.server import HTTP_TIMEOUT

CONFIG = {"type": "OS::Heat::SoftwareConfig",
          "properties": {"group": "script", "config": "#!/bin/sh\ntrue\n"}}


def deployment(server: str) -> dict[str, Any]:
    return {"type": "OS::Heat::SoftwareDeployment",
            "properties": {"config": {"get_resource": "config"},
                           "server": {"get_resource": server},
                           "signal_transport": "CFN_SIGNAL"}}


TEMPLATE: dict[str, Any] = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "web": {"type": "OS::Heat::DeployedServer",
                "properties": {"software_config_transport": "POLL_SERVER_CFN"}},
        "db": {"type": "OS::Heat::DeployedServer",
               "properties": {"software_config_transport": "POLL_SERVER_CFN"}},
        "config": CONFIG,
        "web_deployment": deployment("web"),
        "db_deployment": deployment("db"),
        "group": {"type": "OS::Heat::AutoScalingGroup",
                  "properties": {"min_size": 1, "max_size": 3, "cooldown": 0,
                                 "resource": {"type": "OS::Heat::None"}}},
        "up": {"type": "OS::Heat::ScalingPolicy",
               "properties": {"auto_scaling_group_id": {"get_resource": "group"},
                              "adjustment_type": "change_in_capacity",
                              "scaling_adjustment": 1, "cooldown": 0}},
    },
    "outputs": {"size": {"value": {"get_attr": ["group", "current_size"]}},
                "alarm_url": {"value": {"get_attr": ["up", "alarm_url"]}}},
}
FORGED = {"deploy_stdout": "forged", "deploy_stderr": "", "deploy_status_code": 0}


def signal_url(hc: Any, sid: str, server: str) -> str:
    (config,) = hc.resources.metadata(sid, server)["deployments"]
    return str({i["name"]: i.get("value") for i in config["inputs"]}["deploy_signal_id"])


def unsigned(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def sigv2(url: str, keys: dict[str, str]) -> str:
    return ec2sign.presign(unsigned(url), verb="POST", access_key=keys["access_key_id"],
                           secret=keys["secret_access_key"])


def sigv4_post(url: str, keys: dict[str, str], body: bytes) -> httpx.Response:
    # the ARN's colons sent as they are (botocore encodes the path it signs once more)
    request = AWSRequest(method="POST", url=unquote(unsigned(url)), data=body,
                         headers={"Content-Type": "application/json"})
    SigV4Auth(Credentials(keys["access_key_id"], keys["secret_access_key"]),
              "cloudformation", "RegionOne").add_auth(request)
    return httpx.post(request.url, content=body, headers=dict(request.headers.items()),
                      timeout=HTTP_TIMEOUT)


def code(answer: httpx.Response) -> tuple[int, str]:
    text = answer.text
    assert "<ErrorResponse>" in text, text
    return answer.status_code, text[text.index("<Code>") + 6:text.index("</Code>")]


def size(hc: Any, sid: str) -> int:
    outs = {o["output_key"]: o["output_value"] for o in hc.stacks.get(sid).outputs}
    return int(outs["size"])


def test_a_servers_keypair_signals_nothing_it_was_not_handed(hc: Any) -> None:
    sid = create(hc, "reach", TEMPLATE)
    wait_deployment(hc, sid, "CREATE", server="web")
    wait_deployment(hc, sid, "CREATE", server="db")
    web_keys = dict(hc.resources.get(sid, "web").attributes["os_collect_config"]["cfn"])
    db_url = signal_url(hc, sid, "db")
    alarm_url = wait_for(
        lambda: {o["output_key"]: o["output_value"]
                 for o in hc.stacks.get(sid).outputs}.get("alarm_url"),
        lambda url: bool(url), "the policy's alarm_url")

    # the web server's keypair completing the db server's deployment with forged outputs
    forged = httpx.post(sigv2(db_url, web_keys), json=FORGED, timeout=HTTP_TIMEOUT)
    assert code(forged) == (403, "AccessDenied")
    assert code(sigv4_post(db_url, web_keys, b'{"deploy_status_code": 0}')) == \
        (403, "AccessDenied")
    # ... or growing the group through its scaling policy
    grow = httpx.post(sigv2(str(alarm_url), web_keys), timeout=HTTP_TIMEOUT)
    assert code(grow) == (403, "AccessDenied")
    assert code(sigv4_post(str(alarm_url), web_keys, b"")) == (403, "AccessDenied")
    # ... or its own server's deployment: handed its own pre-signed URL, not this
    web_url = signal_url(hc, sid, "web")
    assert code(httpx.post(sigv2(web_url, web_keys), json=FORGED,
                           timeout=HTTP_TIMEOUT)) == (403, "AccessDenied")
    assert hc.resources.get(sid, "db_deployment").resource_status == "CREATE_IN_PROGRESS"
    assert hc.resources.get(sid, "web_deployment").resource_status == "CREATE_IN_PROGRESS"

    # what each resource was handed still works: the deployments' own pre-signed URLs
    # (heat-config-notify's CFN_SIGNAL) and the policy's alarm_url
    for url, who in ((web_url, "web"), (db_url, "db")):
        done = {"deploy_stdout": who, "deploy_stderr": "", "deploy_status_code": 0}
        assert httpx.post(url, json=done, timeout=HTTP_TIMEOUT).status_code == 200
    stack = settled(hc, sid)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    assert hc.resources.get(sid, "db_deployment").attributes["deploy_stdout"] == "db"
    assert size(hc, sid) == 1
    assert httpx.post(str(alarm_url), timeout=HTTP_TIMEOUT).status_code == 200
    wait_for(lambda: size(hc, sid), lambda n: n == 2, "the group grown by its alarm_url")
