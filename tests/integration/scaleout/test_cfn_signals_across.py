"""Wait-condition signals sent to a ``kiln api-cfn`` process that does not run the stack
(issue 24): the stack is created through a ``kiln api``, a ``kiln engine`` runs it and
waits, and the server's signal reaches ``kiln api-cfn`` on the URL it was handed
(``heat_waitcondition_server_url`` / ``heat_metadata_server_url`` naming that listener, as
an operator sets them). The CFN process forwards the signal to the engine, which completes
the wait condition.

Both handles whose URL is the CFN listener's: an AWS::CloudFormation::WaitConditionHandle
(its reference is the pre-signed URL cfn-signal ``PUT``s to) and an
OS::Heat::WaitConditionHandle with ``signal_transport: CFN_SIGNAL`` (its ``signal``
attribute's ``alarm_url``). (Its ``TEMP_URL_SIGNAL`` is a Swift temp URL, not Kiln's.)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from tests.integration.scaleout.conftest import Cluster, client, wait_for, wait_status
from tests.support.ports import free_port

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "aws_handle": {"type": "AWS::CloudFormation::WaitConditionHandle"},
        "aws_wait": {"type": "AWS::CloudFormation::WaitCondition",
                     "properties": {"Handle": {"get_resource": "aws_handle"},
                                    "Timeout": 120, "Count": 1}},
        "os_handle": {"type": "OS::Heat::WaitConditionHandle",
                       "properties": {"signal_transport": "CFN_SIGNAL"}},
        "os_wait": {"type": "OS::Heat::WaitCondition",
                     "properties": {"handle": {"get_resource": "os_handle"},
                                    "timeout": 120}},
    },
    "outputs": {
        "aws_url": {"value": {"get_resource": "aws_handle"}},
        "os_signal": {"value": {"get_attr": ["os_handle", "signal"]}},
        "aws_data": {"value": {"get_attr": ["aws_wait", "Data"]}},
        "os_data": {"value": {"get_attr": ["os_wait", "data"]}},
    },
}


def _status(c: httpx.Client, path: str, name: str) -> str:
    r = c.get(f"{path}/resources/{name}")
    return str(r.json()["resource"]["resource_status"]) if r.status_code == 200 else ""


def _output(c: httpx.Client, path: str, key: str) -> Any:
    r = c.get(f"{path}/outputs/{key}")
    r.raise_for_status()
    return r.json()["output"]["output_value"]


def test_cfn_signals_through_api_cfn(
        cluster_factory: Callable[[str], Cluster], db_url: str) -> None:
    cluster = cluster_factory(db_url)
    cfn_port = free_port()
    cfn_root = f"http://127.0.0.1:{cfn_port}"
    cluster.extra = {"DEFAULT": {
        "heat_metadata_server_url": f"{cfn_root}/v1/",
        "heat_waitcondition_server_url": f"{cfn_root}/v1/waitcondition"}}
    cfn = cluster.start("api-cfn", port=cfn_port)
    assert cfn.cfn_port == cfn_port
    cluster.engine()
    api = cluster.api()
    with client(api) as c:
        r = c.post("/stacks", json={"stack_name": "cfnwait", "template": TEMPLATE})
        assert r.status_code == 201, r.text
        path = f"/stacks/cfnwait/{r.json()['stack']['id']}"
        wait_for(lambda: all(_status(c, path, w) == "CREATE_IN_PROGRESS"
                             for w in ("aws_wait", "os_wait")), what="both conditions to wait")
        aws_url = str(_output(c, path, "aws_url"))
        signal = _output(c, path, "os_signal")
        os_url = str((json.loads(signal) if isinstance(signal, str) else signal)
                     ["alarm_url"])
        # both name the CFN process, not the API the stack was created through
        assert aws_url.startswith(f"{cfn_root}/v1/waitcondition/"), aws_url
        assert os_url.startswith(f"{cfn_root}/v1/waitcondition/"), os_url

        # cfn-signal's request (heat-cfntools): a PUT of the AWS body to the URL
        r = httpx.put(aws_url, json={"Status": "SUCCESS", "Reason": "up",
                                     "UniqueId": "i1", "Data": "from-cfn"}, timeout=60)
        assert r.status_code == 200, r.text
        wait_for(lambda: _status(c, path, "aws_wait") == "CREATE_COMPLETE",
                 what="the AWS wait condition to complete")
        assert _status(c, path, "os_wait") == "CREATE_IN_PROGRESS"

        # the engine's refusal reaches the sender in AWS's format (an OS::Heat handle
        # reads Heat's native body, whatever the transport) and changes nothing
        r = httpx.put(os_url, json={"Status": "SUCCESS", "UniqueId": "o0",
                                    "Data": "wrong-format"}, timeout=60)
        assert r.status_code == 400, r.text
        assert "<Code>InvalidParameterValue</Code>" in r.text, r.text
        assert _status(c, path, "os_wait") == "CREATE_IN_PROGRESS"
        r = httpx.put(os_url, json={"status": "SUCCESS", "reason": "up", "id": "o1",
                                    "data": "from-os-handle"}, timeout=60)
        assert r.status_code == 200, r.text
        wait_status(c, "cfnwait", "CREATE_COMPLETE")
        assert "from-cfn" in str(_output(c, path, "aws_data"))
        assert "from-os-handle" in str(_output(c, path, "os_data"))
