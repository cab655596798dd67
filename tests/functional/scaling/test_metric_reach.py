"""What a stack's keypair may push metrics for (issue 22), through a real ``kiln serve``:
a keypair Kiln issued to a stack's resource pushes PutMetricData only for its own stack
tree's alarms, named by the ``AlarmName`` dimension (what cfn-push-stats ``--watch``
sends). Another stack's alarm, or no ``AlarmName``, is AWS's ``AccessDenied`` with
nothing kept; the stack's own agent (the real cfn-push-stats) still feeds its alarm, and
a nested stack's keypair (a group member's server) feeds its parent's alarm."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.functional.scaling.test_cloudwatch_bad_numbers import keys_for
from tests.support.clients import heat_client
from tests.support.server import KilnProcess, start_kiln

KEY = {"User": {"Type": "AWS::IAM::User"},
       "Key": {"Type": "AWS::IAM::AccessKey", "Properties": {"UserName": {"Ref": "User"}}}}
KEY_OUTPUTS = {"access": {"Value": {"Ref": "Key"}},
               "secret": {"Value": {"Fn::GetAtt": ["Key", "SecretAccessKey"]}}}
ALARM = {"Type": "AWS::CloudWatch::Alarm",
         "Properties": {"Namespace": "system/linux", "MetricName": "load",
                        "Statistic": "Maximum", "Period": "60", "EvaluationPeriods": "1",
                        "Threshold": "50", "ComparisonOperator": "GreaterThanThreshold"}}
TEMPLATE = {"AWSTemplateFormatVersion": "2010-09-09",
            "Resources": {**KEY, "cpu": ALARM},
            "Outputs": {**KEY_OUTPUTS, "alarm": {"Value": {"Ref": "cpu"}}}}
#: the keypair in a nested stack (a provider template), the alarm in its parent: a
#: group member's pattern
NESTED = {"heat_template_version": "2018-08-31",
          "resources": {"cpu": {"type": ALARM["Type"], "properties": ALARM["Properties"]},
                        "member": {"type": "key.yaml"}},
          "outputs": {"access": {"value": {"get_attr": ["member", "access"]}},
                      "secret": {"value": {"get_attr": ["member", "secret"]}},
                      "alarm": {"value": {"get_resource": "cpu"}}}}
FILES = {"key.yaml": json.dumps({"AWSTemplateFormatVersion": "2010-09-09",
                                 "Resources": KEY, "Outputs": KEY_OUTPUTS})}


@pytest.fixture(scope="module")
def kiln(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KilnProcess]:
    proc = start_kiln(tmp_path_factory.mktemp("reach"))
    yield proc
    assert proc.stop() == 0, proc.logs()


def cloudwatch(kiln: KilnProcess, access: str, secret: str) -> Any:
    import boto3

    return boto3.client("cloudwatch", endpoint_url=kiln.cloudwatch_url,
                        region_name="RegionOne", aws_access_key_id=access,
                        aws_secret_access_key=secret)


@pytest.fixture(scope="module")
def operator(kiln: KilnProcess) -> Any:
    """The project's own keypair (``kiln ec2-credentials create``)."""
    cred = keys_for(kiln, "demo")
    return cloudwatch(kiln, cred["access"], cred["secret"])


def stack(kiln: KilnProcess, template: dict[str, Any],
          files: dict[str, str] | None = None) -> dict[str, str]:
    heat = heat_client(kiln.endpoint("demo"))
    name = f"reach_{uuid.uuid4().hex[:6]}"
    heat.stacks.create(stack_name=name, template=template, files=files or {})
    deadline = time.monotonic() + 90
    while (shown := heat.stacks.get(name)).stack_status != "CREATE_COMPLETE":
        assert not shown.stack_status.endswith("FAILED"), shown.stack_status_reason
        assert time.monotonic() < deadline, shown.stack_status
        time.sleep(0.2)  # the create, bounded by the deadline
    return {o["output_key"]: str(o["output_value"]) for o in shown.outputs}


def put(client: Any, value: float, dims: list[dict[str, str]]) -> None:
    client.put_metric_data(Namespace="system/linux", MetricData=[
        {"MetricName": "load", "Value": value, "Unit": "Count", "Dimensions": dims}])


def points(operator: Any, alarm: str) -> list[float]:
    now = dt.datetime.now(dt.UTC)
    got = operator.get_metric_statistics(
        Namespace="system/linux", MetricName="load",
        Dimensions=[{"Name": "AlarmName", "Value": alarm}],
        StartTime=now - dt.timedelta(minutes=10), EndTime=now + dt.timedelta(minutes=1),
        Period=60, Statistics=["Maximum"])
    return [p["Maximum"] for p in got["Datapoints"]]


def refused(call: Any, needle: str) -> None:
    from botocore.exceptions import ClientError

    with pytest.raises(ClientError) as caught:
        call()
    error = caught.value.response["Error"]
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert error["Code"] == "AccessDenied", error
    assert needle in error["Message"], error


def test_a_stack_key_pushes_only_for_its_own_alarms(kiln: KilnProcess, operator: Any) -> None:
    mine, theirs = stack(kiln, TEMPLATE), stack(kiln, TEMPLATE)
    agent = cloudwatch(kiln, mine["access"], mine["secret"])
    refused(lambda: put(agent, 99.0, [{"Name": "AlarmName", "Value": theirs["alarm"]}]),
            "is not an alarm of the stack")
    refused(lambda: put(agent, 98.0, [{"Name": "host", "Value": "x"}]), "AlarmName")
    put(agent, 7.0, [{"Name": "AlarmName", "Value": mine["alarm"]}])
    assert points(operator, theirs["alarm"]) == []
    assert points(operator, mine["alarm"]) == [7.0]
    # the project's own keypair is not confined to a stack
    put(operator, 3.0, [{"Name": "AlarmName", "Value": theirs["alarm"]}])
    assert points(operator, theirs["alarm"]) == [3.0]


def test_a_nested_stacks_key_feeds_its_parents_alarm(kiln: KilnProcess,
                                                    operator: Any) -> None:
    nested, other = stack(kiln, NESTED, FILES), stack(kiln, TEMPLATE)
    agent = cloudwatch(kiln, nested["access"], nested["secret"])
    put(agent, 11.0, [{"Name": "AlarmName", "Value": nested["alarm"]}])
    assert points(operator, nested["alarm"]) == [11.0]
    refused(lambda: put(agent, 12.0, [{"Name": "AlarmName", "Value": other["alarm"]}]),
            "is not an alarm of the stack")


def test_the_real_cfn_push_stats_still_feeds_its_alarm(kiln: KilnProcess, operator: Any,
                                                      tmp_path: Path) -> None:
    from tests.support import cfn_push_stats

    cfn_push_stats.require()
    mine, theirs = stack(kiln, TEMPLATE), stack(kiln, TEMPLATE)

    def push(alarm: str, value: str) -> subprocess.CompletedProcess[str]:
        return cfn_push_stats.push(tmp_path / "agent", port=kiln.cloudwatch_port or 0,
                                   access=mine["access"], secret=mine["secret"],
                                   args=["--metric", "load", "--units", "Count",
                                         "--value", value, "--watch", alarm])

    done = push(mine["alarm"], "42")
    assert done.returncode == 0, done.stderr
    assert points(operator, mine["alarm"]) == [42.0]
    done = push(theirs["alarm"], "43")
    assert done.returncode != 0 and "<Code>AccessDenied</Code>" in done.stderr, done.stderr
    assert points(operator, theirs["alarm"]) == []
