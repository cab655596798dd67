"""Which types disable their stack user on suspend and enable it on resume: the ones
whose Heat 27 classes inherit StackUser's handle_suspend/handle_resume (wait-condition
handles, scaling policies, AWS::IAM::User, OS::Heat::DeployedServer); a server and a
software deployment suspend their own way and leave their user alone, as in Heat."""

from __future__ import annotations

import pytest

from tests.unit.resources.fakes import FakeRuntime, make, run

DISABLING = ["OS::Heat::WaitConditionHandle", "AWS::CloudFormation::WaitConditionHandle",
             "OS::Heat::UpdateWaitConditionHandle", "AWS::IAM::User",
             "OS::Heat::DeployedServer"]


@pytest.mark.parametrize("type_name", DISABLING)
async def test_suspend_disables_and_resume_enables_the_stack_user(type_name: str) -> None:
    rt = FakeRuntime()
    res = make(rt, "r", type_name)
    await run(res, "suspend")
    assert rt.stack_user_enabled == {"r": False}
    await run(res, "resume")
    assert rt.stack_user_enabled == {"r": True}


@pytest.mark.parametrize("type_name", ["OS::Heat::ScalingPolicy",
                                       "AWS::AutoScaling::ScalingPolicy"])
async def test_scaling_policies_too(type_name: str) -> None:
    rt = FakeRuntime()
    props = ({"adjustment_type": "change_in_capacity", "auto_scaling_group_id": "g",
              "scaling_adjustment": 1} if type_name.startswith("OS::") else
             {"AdjustmentType": "ChangeInCapacity", "AutoScalingGroupName": "g",
              "ScalingAdjustment": 1})
    res = make(rt, "p", type_name, props)
    await run(res, "suspend")
    assert rt.stack_user_enabled == {"p": False}
    await run(res, "resume")
    assert rt.stack_user_enabled == {"p": True}


@pytest.mark.parametrize("type_name", ["OS::Heat::SoftwareDeployment",
                                       "AWS::IAM::AccessKey", "OS::Heat::None"])
async def test_other_types_leave_their_user_alone(type_name: str) -> None:
    rt = FakeRuntime()
    props = {"server": "s"} if type_name == "OS::Heat::SoftwareDeployment" else \
        {"UserName": "u"} if type_name == "AWS::IAM::AccessKey" else {}
    res = make(rt, "r", type_name, props)
    res.resource_id = None
    await run(res, "suspend")
    await run(res, "resume")
    assert rt.stack_user_enabled == {}
