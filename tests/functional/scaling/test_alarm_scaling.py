"""Autoscaling driven by real metrics, end to end through ``kiln serve``: boto3's
CloudWatch client pushes a metric above a threshold, the watcher moves the stack's
AWS::CloudWatch::Alarm to ALARM and signals the scaling policy through its pre-signed
``alarm_url``; the group grows; the metric falls, a second alarm signals the other
policy through its native ``signal_url``; the group shrinks. DescribeAlarmHistory shows
every transition and action."""

from __future__ import annotations

import json
import re
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.support.clients import heat_client, wait_for_stack_status
from tests.support.server import KilnProcess, kiln_command, start_kiln

pytestmark = pytest.mark.slow

#: a group of one to three members and a policy that adds one (both templates below)
GROUP_AND_UP = """  group:
    type: OS::Heat::AutoScalingGroup
    properties:
      min_size: 1
      max_size: 3
      cooldown: 0
      resource: {type: OS::Heat::Value, properties: {value: member}}
  up:
    type: OS::Heat::ScalingPolicy
    properties:
      auto_scaling_group_id: {get_resource: group}
      adjustment_type: change_in_capacity
      scaling_adjustment: 1
"""

TEMPLATE = """heat_template_version: 2021-04-16
parameters:
  group_name: {type: string}
resources:
""" + GROUP_AND_UP + """  down:
    type: OS::Heat::ScalingPolicy
    properties:
      auto_scaling_group_id: {get_resource: group}
      adjustment_type: change_in_capacity
      scaling_adjustment: -1
  cpu_high:
    type: AWS::CloudWatch::Alarm
    properties:
      Namespace: test/scaling
      MetricName: cpu
      Dimensions: [{Name: group, Value: {get_param: group_name}}]
      Statistic: Average
      Period: '10'
      EvaluationPeriods: '1'
      Threshold: '80'
      ComparisonOperator: GreaterThanThreshold
      AlarmActions: [{get_attr: [up, alarm_url]}]
  cpu_low:
    type: OS::Heat::CWLiteAlarm
    properties:
      Namespace: test/scaling
      MetricName: cpu
      Dimensions: [{Name: group, Value: {get_param: group_name}}]
      Statistic: Average
      Period: '10'
      EvaluationPeriods: '1'
      Threshold: '20'
      ComparisonOperator: LessThanThreshold
      AlarmActions: [{get_attr: [down, signal_url]}]
outputs:
  size: {value: {get_attr: [group, current_size]}}
"""


@pytest.fixture(scope="module")
def kiln(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    proc = start_kiln(tmp_path_factory.mktemp("kiln"),
                      options={"kiln_alarms": {"evaluation_interval": 0.5}})
    yield proc
    assert proc.stop() == 0, proc.logs()


@pytest.fixture(scope="module")
def cloudwatch(kiln: KilnProcess) -> Any:
    import boto3

    made = subprocess.run([*kiln_command(), "ec2-credentials", "create", "--config-file",
                           str(kiln.config_file), "--project", "demo"],
                          capture_output=True, text=True, check=True, timeout=60)
    cred = json.loads(made.stdout)
    return boto3.client("cloudwatch", endpoint_url=kiln.cloudwatch_url,
                        region_name="RegionOne", aws_access_key_id=cred["access"],
                        aws_secret_access_key=cred["secret"])


def push_until(cloudwatch: Any, group: str, value: float, done: Callable[[], bool], *,
               deadline: float = 90.0) -> None:
    """Push ``value`` every second until ``done()`` holds (the alarm works on 10-second
    windows: the first complete window containing the value decides)."""
    until = time.monotonic() + deadline
    while not done():
        if time.monotonic() > until:
            raise AssertionError(f"not done {deadline}s after pushing {value}")
        cloudwatch.put_metric_data(Namespace="test/scaling", MetricData=[{
            "MetricName": "cpu", "Value": value, "Unit": "Percent",
            "Dimensions": [{"Name": "group", "Value": group}]}])
        time.sleep(1.0)  # a metric sample per second, as an agent would push them


def test_metrics_drive_the_group_up_and_down(kiln: KilnProcess, cloudwatch: Any) -> None:
    heat = heat_client(kiln.endpoint("demo"))
    name = f"scale_{uuid.uuid4().hex[:6]}"
    group = f"g-{name}"
    heat.stacks.create(stack_name=name, template=TEMPLATE,
                       parameters={"group_name": group})

    def size() -> int | None:
        stack = heat.stacks.get(name)
        if stack.stack_status != "CREATE_COMPLETE":
            return None
        outputs = {o["output_key"]: o.get("output_value") for o in stack.outputs}
        value = outputs.get("size")
        return int(value) if value is not None else None

    deadline = time.monotonic() + 60
    while size() != 1:
        assert time.monotonic() < deadline, heat.stacks.get(name).stack_status_reason
        time.sleep(0.2)  # stack create poll, bounded by the deadline

    push_until(cloudwatch, group, 95.0, lambda: size() == 2)
    high = f"{name}-cpu_high"
    low = f"{name}-cpu_low"
    alarms = {a["AlarmName"]: a for a in cloudwatch.describe_alarms(
        AlarmNames=[high, low])["MetricAlarms"]}
    assert alarms[high]["StateValue"] == "ALARM"
    assert alarms[low]["StateValue"] == "OK"

    push_until(cloudwatch, group, 5.0, lambda: size() == 1)

    def transitions(alarm: str) -> list[str]:
        items = cloudwatch.describe_alarm_history(AlarmName=alarm,
                                                  HistoryItemType="StateUpdate")
        return [i["HistorySummary"] for i in reversed(items["AlarmHistoryItems"])]

    high_seen = transitions(high)
    assert "Alarm updated from INSUFFICIENT_DATA to ALARM" in high_seen[0:2] or \
        "Alarm updated from OK to ALARM" in high_seen, high_seen
    assert high_seen[-1].endswith("to OK"), high_seen
    assert any(t.endswith("to ALARM") for t in transitions(low))
    actions = cloudwatch.describe_alarm_history(AlarmName=high, HistoryItemType="Action")
    summaries = [i["HistorySummary"] for i in actions["AlarmHistoryItems"]]
    assert any(s.startswith("Successfully executed action ") and "/resources/up?" in s
               and "Signature=***" in s for s in summaries), summaries
    # the pre-signed URL's signature (a credential) is never shown, in any history item
    every = cloudwatch.describe_alarm_history(AlarmName=high)["AlarmHistoryItems"]
    shown = json.dumps([[i["HistorySummary"], i.get("HistoryData", "")] for i in every])
    assert "AWSAccessKeyId=" in shown and "Signature=***" in shown
    assert re.search(r"[?&]Signature=(?!\*\*\*)", shown) is None, shown
    events = heat.events.list(name, resource_name="up")
    assert any(e.resource_status_reason.startswith("alarm state changed from")
               for e in events)
    # each state change of the stack's alarm is an event of its resource too
    alarm_events = [e.resource_status_reason for e in heat.events.list(
        name, resource_name="cpu_high") if e.resource_status == "SIGNAL_COMPLETE"]
    assert any(r.startswith("Alarm state changed from ") and " to ALARM: " in r
               for r in alarm_events), alarm_events
    assert any(" to OK: " in r for r in alarm_events), alarm_events
    heat.stacks.delete(name)


SEED_TEMPLATE = """HeatTemplateFormatVersion: '2012-12-12'
Resources:
  group:
    Type: OS::Heat::AutoScalingGroup
    Properties:
      min_size: 1
      max_size: 2
      cooldown: 0
      resource: {type: OS::Heat::Value, properties: {value: member}}
  up:
    Type: AWS::AutoScaling::ScalingPolicy
    Properties:
      AutoScalingGroupName: {Ref: group}
      AdjustmentType: ChangeInCapacity
      ScalingAdjustment: '1'
  down:
    Type: AWS::AutoScaling::ScalingPolicy
    Properties:
      AutoScalingGroupName: {Ref: group}
      AdjustmentType: ChangeInCapacity
      ScalingAdjustment: '-1'
  cpu:
    Type: AWS::CloudWatch::Alarm
    Properties:
      Namespace: system/linux
      MetricName: load
      Statistic: Maximum
      Period: '10'
      EvaluationPeriods: '1'
      Threshold: '50'
      ComparisonOperator: GreaterThanThreshold
      AlarmActions: [{Ref: up}]
      OKActions: [{Ref: down}]
Outputs:
  size: {Value: {'Fn::GetAtt': [group, current_size]}}
  alarm: {Value: {Ref: cpu}}
"""


def test_cfn_push_stats_drives_the_seed_pattern(kiln: KilnProcess, cloudwatch: Any,
                                                tmp_path: Any) -> None:
    """The seed: servers run cfn-push-stats --watch <alarm>; the alarm's actions are AWS
    scaling policies by reference (their pre-signed URLs)."""
    from tests.support import cfn_push_stats

    cfn_push_stats.require()
    creds = cloudwatch._request_signer._credentials
    heat = heat_client(kiln.endpoint("demo"))
    name = f"seed_{uuid.uuid4().hex[:6]}"
    heat.stacks.create(stack_name=name, template=SEED_TEMPLATE)

    def outputs() -> dict[str, Any]:
        stack = heat.stacks.get(name)
        if stack.stack_status != "CREATE_COMPLETE":
            return {}
        return {o["output_key"]: o.get("output_value") for o in stack.outputs}

    deadline = time.monotonic() + 60
    while outputs().get("size") != 1:
        assert time.monotonic() < deadline, heat.stacks.get(name).stack_status_reason
        time.sleep(0.2)  # stack create poll, bounded by the deadline
    alarm = outputs()["alarm"]
    assert alarm == f"{name}-cpu"

    def push_until(value: str, size: int) -> None:
        until = time.monotonic() + 90
        while outputs().get("size") != size:
            assert time.monotonic() < until, f"size never reached {size}"
            done = cfn_push_stats.push(tmp_path / "agent", port=kiln.cloudwatch_port or 0,
                                       access=creds.access_key, secret=creds.secret_key,
                                       args=["--metric", "load", "--units", "Count",
                                             "--value", value, "--watch", alarm])
            assert done.returncode == 0, done.stderr
            time.sleep(1.0)  # one sample a second, as an agent's cron would push

    push_until("75", 2)
    push_until("10", 1)
    states = [i["HistorySummary"] for i in cloudwatch.describe_alarm_history(
        AlarmName=alarm, HistoryItemType="StateUpdate")["AlarmHistoryItems"]]
    assert states[0] == "Alarm updated from ALARM to OK", states
    heat.stacks.delete(name)


URL_TEMPLATE = """heat_template_version: 2021-04-16
resources:
""" + GROUP_AND_UP + """outputs:
  size: {value: {get_attr: [group, current_size]}}
  alarm_url: {value: {get_attr: [up, alarm_url]}}
"""


def test_alarm_url_is_presigned_and_scales_with_no_other_credentials(
        kiln: KilnProcess) -> None:
    """A plain POST to the policy's alarm_url (nothing but the URL, as an alarm service
    or curl sends it) scales the group; the same URL tampered with is refused. The
    resize is seen where stack events go: the event list and the live event stream."""
    import httpx

    from tests.support.sse import EventStream

    heat = heat_client(kiln.endpoint("demo"))
    name = f"url_{uuid.uuid4().hex[:6]}"
    stack_id = heat.stacks.create(stack_name=name, template=URL_TEMPLATE)["stack"]["id"]

    def outputs() -> dict[str, Any]:
        stack = heat.stacks.get(name)
        if stack.stack_status != "CREATE_COMPLETE":
            return {}
        return {o["output_key"]: o.get("output_value") for o in stack.outputs}

    deadline = time.monotonic() + 60
    while outputs().get("size") != 1:
        assert time.monotonic() < deadline, heat.stacks.get(name).stack_status_reason
        time.sleep(0.2)  # stack create poll, bounded by the deadline
    url = outputs()["alarm_url"]
    assert "/v1/signal/" in url and "Signature=" in url and "AWSAccessKeyId=" in url

    tampered = [url.replace("resources/up", "resources/group"),
                url.replace("Signature=", "Signature=A")]
    for bad in tampered:
        refused = httpx.post(bad, content=b"", timeout=30)
        assert refused.status_code == 403, refused.text
        assert "<Code>SignatureDoesNotMatch</Code>" in refused.text \
            or "<Code>AccessDenied</Code>" in refused.text, refused.text

    with httpx.Client(base_url=kiln.endpoint("demo"), timeout=60.0) as api, \
            EventStream(api, f"/stacks/{name}/{stack_id}/events?stream=true"
                             "&resource_name=group") as stream:
        answered = httpx.post(url, content=b"", timeout=30)   # no token, no headers
        assert answered.status_code == 200, answered.text
        seen = stream.until(lambda m: m.event == "event" and m.json()[
            "resource_status_reason"].startswith("End resizing the group"))
        reasons = [m.json()["resource_status_reason"] for m in seen if m.event == "event"]
        assert any(r.startswith("Start resizing the group") for r in reasons), reasons
    deadline = time.monotonic() + 30
    while outputs().get("size") != 2:
        assert time.monotonic() < deadline, outputs()
        time.sleep(0.2)  # the outputs follow the group's stored size
    listed = [(e.resource_status, e.resource_status_reason)
              for e in heat.events.list(name, resource_name="group")]
    assert [s for s, r in listed if r.startswith("End resizing the group")] == \
        ["SIGNAL_COMPLETE"], listed
    heat.stacks.delete(name)


KEY_TEMPLATE = {
    "AWSTemplateFormatVersion": "2010-09-09",
    "Resources": {"User": {"Type": "AWS::IAM::User"},
                  "Key": {"Type": "AWS::IAM::AccessKey",
                          "Properties": {"UserName": {"Ref": "User"}}}},
    "Outputs": {"access": {"Value": {"Ref": "Key"}},
                "secret": {"Value": {"Fn::GetAtt": ["Key", "SecretAccessKey"]}}}}


def test_a_deleted_stacks_key_is_refused_at_once(kiln: KilnProcess) -> None:
    """The CloudWatch API caches keypair lookups, but a keypair this process deleted (its
    stack deleted here) stops signing at once, not when the cache entry expires."""
    import boto3
    from botocore.exceptions import ClientError
    from heatclient.exc import HTTPNotFound

    heat = heat_client(kiln.endpoint("demo"))
    name = f"key_{uuid.uuid4().hex[:6]}"
    heat.stacks.create(stack_name=name, template=json.dumps(KEY_TEMPLATE))
    stack = wait_for_stack_status(heat, name)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    outputs = {o["output_key"]: o["output_value"] for o in stack.outputs}
    client = boto3.client("cloudwatch", endpoint_url=kiln.cloudwatch_url,
                          region_name="RegionOne", aws_access_key_id=outputs["access"],
                          aws_secret_access_key=outputs["secret"])
    datum = [{"MetricName": "m", "Value": 1.0}]
    with pytest.raises(ClientError) as denied:
        # authenticated (so the keypair is cached now), then refused: a stack's keypair
        # pushes only for its stack's alarms (test_metric_reach.py), and this has none
        client.put_metric_data(Namespace="test/keys", MetricData=datum)
    assert denied.value.response["Error"]["Code"] == "AccessDenied"
    heat.stacks.delete(stack.id)
    deadline = time.monotonic() + 60
    while True:   # until the delete committed (the stack then reads as not found)
        try:
            status = heat.stacks.get(stack.id)
        except HTTPNotFound:
            break
        assert status.stack_status != "DELETE_FAILED", status.stack_status_reason
        assert time.monotonic() < deadline, status.stack_status
        time.sleep(0.1)  # stack delete poll, bounded by the deadline
    with pytest.raises(ClientError) as refused:
        client.put_metric_data(Namespace="test/keys", MetricData=datum)
    assert refused.value.response["Error"]["Code"] == "InvalidClientTokenId"
