"""An alarm scaling a group through its policy's ``alarm_url`` with Kiln behind a real
Keystone: the user's own Keystone EC2 credential signs CloudWatch's SetAlarmState
(checked by Keystone's ec2tokens), the alarm's action signals the policy, and the
scaling, with no request of the user's behind it, acts through the stack's trust: the
group's members are Keystone roles, which the new member's create can only make with
the user's delegated identity (Kiln has no cloud credentials of its own here)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.functional.agents.deploying import wait_for
from tests.functional.identity.conftest import size
from tests.functional.identity.test_ec2_keystone import boto, ec2_credential
from tests.functional.identity.test_stack_users import heat_as
from tests.support.keystone import KeystoneProcess
from tests.support.server import KilnProcess, start_kiln

TEMPLATE = {
    "heat_template_version": "2021-04-16",
    "resources": {
        "group": {"type": "OS::Heat::AutoScalingGroup",
                  "properties": {"min_size": 1, "max_size": 3, "cooldown": 0,
                                 "resource": {"type": "OS::Keystone::Role"}}},
        "up": {"type": "OS::Heat::ScalingPolicy",
               "properties": {"auto_scaling_group_id": {"get_resource": "group"},
                              "adjustment_type": "change_in_capacity",
                              "scaling_adjustment": 1, "cooldown": 0}},
        "cpu_high": {"type": "AWS::CloudWatch::Alarm",
                     "properties": {"Namespace": "test/keystone", "MetricName": "cpu",
                                    "Statistic": "Average", "Period": "60",
                                    "EvaluationPeriods": "1", "Threshold": "80",
                                    "ComparisonOperator": "GreaterThanThreshold",
                                    "AlarmActions": [{"get_attr": ["up", "alarm_url"]}]}}},
    "outputs": {"size": {"value": {"get_attr": ["group", "current_size"]}}},
}


@pytest.fixture(scope="module")
def alarm_kiln(keystone: KeystoneProcess,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    options = {**keystone.kiln_options(), "kiln_alarms": {"evaluation_interval": 0.5}}
    proc = start_kiln(tmp_path_factory.mktemp("kiln-alarm"), options=options)
    yield proc
    proc.stop()


@pytest.mark.slow
def test_an_alarm_scales_through_the_policys_alarm_url(
        keystone: KeystoneProcess, alarm_kiln: KilnProcess) -> None:
    keystone.role_id("heat_stack_user")  # the scaling policy's stack user has it
    member = keystone.account(("member", "admin"))  # may make roles
    hc = heat_as(keystone, member, alarm_kiln)
    stack_id = hc.stacks.create(stack_name="alarmed", template=TEMPLATE)["stack"]["id"]
    made = wait_for(lambda: hc.stacks.get(stack_id),
                    lambda s: not s.stack_status.endswith("IN_PROGRESS"), "the create")
    assert made.stack_status == "CREATE_COMPLETE", made.stack_status_reason
    assert size(hc, stack_id) == 1

    cloudwatch = boto(alarm_kiln, "cloudwatch", ec2_credential(keystone, member))
    cloudwatch.set_alarm_state(AlarmName="alarmed-cpu_high", StateValue="ALARM",
                               StateReason="too hot")
    wait_for(lambda: size(hc, stack_id), lambda n: n == 2, "the alarm's scaling")
    actions = cloudwatch.describe_alarm_history(AlarmName="alarmed-cpu_high",
                                                HistoryItemType="Action")
    summaries = [i["HistorySummary"] for i in actions["AlarmHistoryItems"]]
    assert any(s.startswith("Successfully executed action ") and "/resources/up" in s
               for s in summaries), summaries
    roles = [r.physical_resource_id for r in hc.resources.list(stack_id, nested_depth=1)
             if r.resource_type == "OS::Keystone::Role"]
    assert len(roles) == 2
    for role_id in roles:
        assert keystone.admin().get(f"/roles/{role_id}").status_code == 200
    hc.stacks.delete(stack_id)
