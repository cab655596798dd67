"""Suspending a stack disables its stack users in Keystone, resuming enables them, as
Heat's StackUser resources do: with a real Keystone and a stack domain.

While the stack is suspended a HEAT_SIGNAL handle's user cannot log in, and the EC2
keypairs of a CFN handle, a scaling policy's alarm URL and an IAM user's access key are
refused by Keystone's ``ec2tokens`` (so by Kiln); after resume every one works again.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from botocore.exceptions import ClientError

from tests.functional.agents.deploying import wait_for
from tests.functional.identity.conftest import settle
from tests.functional.identity.test_ec2_keystone import Ec2, boto
from tests.functional.identity.test_stack_users import (  # noqa: F401  (fixtures)
    Domain,
    domain,
    heat_as,
    kiln,
    ks,
)
from tests.support.keystone import Account, KeystoneProcess
from tests.support.server import KilnProcess

TEMPLATE = {
    "heat_template_version": "2018-08-31",
    "resources": {
        "handle": {"type": "OS::Heat::WaitConditionHandle",
                   "properties": {"signal_transport": "HEAT_SIGNAL"}},
        "cfn_handle": {"type": "AWS::CloudFormation::WaitConditionHandle"},
        "group": {"type": "OS::Heat::AutoScalingGroup",
                  "properties": {"min_size": 1, "max_size": 3,
                                 "resource": {"type": "OS::Heat::None"}}},
        "up": {"type": "OS::Heat::ScalingPolicy",
               "properties": {"adjustment_type": "change_in_capacity",
                              "auto_scaling_group_id": {"get_resource": "group"},
                              "scaling_adjustment": 1, "cooldown": 0}},
        "user": {"type": "AWS::IAM::User"},
        "key": {"type": "AWS::IAM::AccessKey",
                "properties": {"UserName": {"get_resource": "user"}}},
    },
    "outputs": {"cfn_url": {"value": {"get_resource": "cfn_handle"}},
                "alarm_url": {"value": {"get_attr": ["up", "alarm_url"]}},
                "size": {"value": {"get_attr": ["group", "current_size"]}}},
}
#: the resources whose users Heat disables on suspend
USER_RESOURCES = ("cfn_handle", "handle", "up", "user")


def login(signal: dict[str, Any]) -> int:
    """The status of a password login as the HEAT_SIGNAL handle's user."""
    body = {"auth": {"identity": {"methods": ["password"], "password": {
        "user": {"id": signal["user_id"], "password": signal["password"]}}},
        "scope": {"project": {"id": signal["project_id"]}}}}
    return httpx.post(signal["auth_url"].rstrip("/") + "/auth/tokens", json=body,
                      timeout=30.0).status_code


def output(hc: Any, stack_id: str, name: str) -> Any:
    return hc.stacks.output_show(stack_id, name)["output"]["output_value"]


def describe(server: KilnProcess, key: Any) -> str:
    """What a describe signed with the IAM user's access key gets: OK or AWS's code."""
    cfn = boto(server, "cloudformation",
               Ec2(key.physical_resource_id, key.attributes["SecretAccessKey"]))
    try:
        cfn.describe_stack_resource(StackName="suspended", LogicalResourceId="handle")
    except ClientError as exc:
        return str(exc.response["Error"]["Code"])
    return "OK"


@pytest.mark.slow
def test_suspend_disables_the_stack_users_and_resume_enables_them(
        keystone: KeystoneProcess, domain: Domain, kiln: KilnProcess,  # noqa: F811
        member: Account) -> None:
    hc = heat_as(keystone, member, kiln)
    stack_id = hc.stacks.create(stack_name="suspended", template=TEMPLATE)["stack"]["id"]
    made = settle(hc, stack_id, "the create")
    assert made.stack_status == "CREATE_COMPLETE", made.stack_status_reason
    grants = ks(keystone, "/role_assignments", **{
        "scope.project.id": made.stack_user_project_id, "include_names": 1}).json()
    users = {g["user"]["name"].split("-")[1]: g["user"]["id"]
             for g in grants["role_assignments"]}
    assert sorted(users) == sorted(USER_RESOURCES)
    signal = json.loads(hc.resources.get(stack_id, "handle").attributes["signal"])
    cfn_url = output(hc, stack_id, "cfn_url")
    alarm_url = output(hc, stack_id, "alarm_url")
    key = hc.resources.get(stack_id, "key")
    cfn_body = {"Status": "SUCCESS", "Reason": "r", "UniqueId": "1", "Data": "d"}
    assert login(signal) == 201
    assert describe(kiln, key) == "OK"

    hc.actions.suspend(stack_id)
    suspended = settle(hc, stack_id, "the suspend")
    assert suspended.stack_status == "SUSPEND_COMPLETE", suspended.stack_status_reason
    for name, user_id in users.items():
        shown = ks(keystone, f"/users/{user_id}").json()["user"]
        assert shown["enabled"] is False, name
    assert login(signal) == 401
    refused = httpx.put(cfn_url, json=cfn_body, timeout=30.0)
    assert refused.status_code == 403 and "AccessDenied" in refused.text, refused.text
    refused = httpx.post(alarm_url, timeout=30.0)
    assert refused.status_code == 403 and "AccessDenied" in refused.text, refused.text
    assert describe(kiln, key) == "AccessDenied"

    hc.actions.resume(stack_id)
    resumed = settle(hc, stack_id, "the resume")
    assert resumed.stack_status == "RESUME_COMPLETE", resumed.stack_status_reason
    for name, user_id in users.items():
        assert ks(keystone, f"/users/{user_id}").json()["user"]["enabled"] is True, name
    assert login(signal) == 201
    assert describe(kiln, key) == "OK"
    sent = httpx.put(cfn_url, json=cfn_body, timeout=30.0)
    assert sent.status_code == 200, sent.text
    # the alarm URL signals the policy again, and the scaling acts through the trust
    sent = httpx.post(alarm_url, timeout=30.0)
    assert sent.status_code == 200, sent.text
    wait_for(lambda: output(hc, stack_id, "size"), lambda size: size == 2,
             "the group scaled by the alarm URL")
