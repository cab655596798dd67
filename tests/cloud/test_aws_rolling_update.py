"""AWS::AutoScaling::AutoScalingGroup's ``AutoScalingRollingUpdate`` driven through the
API of a ``kiln serve`` that reaches the test cloud (the launch configuration's
``ImageId`` and ``InstanceType`` are looked up in Glance and Nova, as in Heat): a new
launch configuration replaces the members' definition ``MaxBatchSize`` at a time,
keeping ``MinInstancesInService`` members untouched, with ``PauseTime`` between
batches. Checked from the stack's events (nested_depth=1), the way a user watches it.
The members are a provider template standing for AWS::EC2::Instance, so no server
boots: the rolling walk is the group's, whatever its members are."""

from __future__ import annotations

import datetime as dt
import time
import uuid
from typing import Any

import pytest

pytestmark = pytest.mark.slow

INSTANCE = """heat_template_version: 2013-05-23
parameters:
  ImageId: {type: string}
  InstanceType: {type: string}
  UserData: {type: string}
  Tags: {type: comma_delimited_list, default: ''}
resources:
  v: {type: OS::Heat::Value, properties: {value: {get_param: UserData}}}
outputs:
  PublicIp: {value: 10.0.0.1}
  data: {value: {get_attr: [v, value]}}
"""

TEMPLATE = """HeatTemplateFormatVersion: '2012-12-12'
Parameters:
  data: {Type: String}
Resources:
  lc:
    Type: AWS::AutoScaling::LaunchConfiguration
    Properties: {ImageId: cirros-kiln, InstanceType: m1.tiny, UserData: {Ref: data}}
  asg:
    Type: AWS::AutoScaling::AutoScalingGroup
    Properties:
      AvailabilityZones: []
      LaunchConfigurationName: {Ref: lc}
      MinSize: '3'
      MaxSize: '4'
    UpdatePolicy:
      AutoScalingRollingUpdate: {MinInstancesInService: '1', MaxBatchSize: '2',
                                 PauseTime: PT3S}
Outputs:
  ips: {Value: {'Fn::GetAtt': [asg, InstanceList]}}
"""
ENV = {"resource_registry": {"AWS::EC2::Instance": "instance.yaml"}}


def _when(event: Any) -> dt.datetime:
    return dt.datetime.fromisoformat(str(event.event_time).replace("Z", "+00:00"))


def wait_status(heat: Any, name: str, status: str) -> None:
    deadline = time.monotonic() + 180
    while (stack := heat.stacks.get(name)).stack_status != status:
        assert not stack.stack_status.endswith("FAILED"), stack.stack_status_reason
        assert time.monotonic() < deadline, stack.stack_status
        time.sleep(0.5)  # polling the API, bounded by the deadline


def test_rolling_update_replaces_members_in_batches(cloud_heat: Any) -> None:
    heat = cloud_heat
    name = f"roll_{uuid.uuid4().hex[:6]}"
    heat.stacks.create(stack_name=name, template=TEMPLATE, environment=ENV,
                       files={"instance.yaml": INSTANCE}, parameters={"data": "v1"})
    try:
        wait_status(heat, name, "CREATE_COMPLETE")
        first = [e.id for e in heat.events.list(name, nested_depth=1)]
        heat.stacks.update(name, template=TEMPLATE, environment=ENV,
                           files={"instance.yaml": INSTANCE}, parameters={"data": "v2"})
        wait_status(heat, name, "UPDATE_COMPLETE")
        events = [e for e in heat.events.list(name, nested_depth=1, sort_dir="asc")
                  if e.id not in first]
        child = next(e for e in events if e.resource_name.startswith(f"{name}-asg-"))
        child_id, child_name = child.physical_resource_id, child.resource_name
        # each batch is one update of the members' stack: what each member holds at
        # the end of it is in the properties of its UPDATE_COMPLETE event
        steps: list[dict[str, str]] = []
        ends: list[dt.datetime] = []
        starts: list[dt.datetime] = []
        for event in events:
            if event.resource_name == child_name:
                if event.resource_status == "UPDATE_IN_PROGRESS":
                    steps.append({})
                    starts.append(_when(event))
                elif event.resource_status == "UPDATE_COMPLETE":
                    ends.append(_when(event))
            elif steps and event.resource_status == "UPDATE_COMPLETE" \
                    and event.resource_name not in (name, "lc", "asg"):
                shown = heat.events.get(child_id, event.resource_name, event.id)
                steps[-1][event.resource_name] = shown.resource_properties["UserData"]
        new = [sorted(step.values()).count("v2") for step in steps]
        # MaxBatchSize 2: two members first while MinInstancesInService keeps the third
        # on the old configuration, then the third; a last step drops nothing (3 wanted)
        assert new[:2] == [2, 3] and all(n == 3 for n in new[2:]), steps
        assert all(len(step) == 3 for step in steps), steps
        # PauseTime PT3S between the batches (event times have whole seconds)
        assert starts[1] - ends[0] >= dt.timedelta(seconds=2), (starts, ends)
        outputs = {o["output_key"]: o.get("output_value")
                   for o in heat.stacks.get(name).outputs}
        assert outputs["ips"] == "10.0.0.1,10.0.0.1,10.0.0.1"
    finally:
        heat.stacks.delete(name)
