"""Scaling groups and policies inside the real engine (EngineService on SQLite): what a
user of Heat 27 relies on — sizes, bounds, cooldown, which member goes on a scale-down,
rolling updates, a member failing mid-scale, the attributes, and persistence."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from kiln.conf import CONF
from kiln.engine.service import EngineService, RequestContext
from kiln.template.constraints import register_custom_constraint

CTX = RequestContext(project_id="demo")


@pytest.fixture
async def service(sqlite_url: str) -> AsyncIterator[EngineService]:
    CONF.set_override("poll_initial_delay", 0.001, group="kiln_engine")
    CONF.set_override("poll_max_delay", 0.05, group="kiln_engine")
    svc = EngineService(db_url=sqlite_url)
    await svc.start()
    yield svc
    await svc.stop()
    CONF.clear_override("poll_initial_delay", group="kiln_engine")
    CONF.clear_override("poll_max_delay", group="kiln_engine")


def group_template(*, min_size: int = 1, max_size: int = 4, desired: int | None = None,
                   cooldown: int = 0, member: dict[str, Any] | None = None,
                   adjustment: float = 1, kind: str = "change_in_capacity",
                   policy_cooldown: float | None = None) -> dict[str, Any]:
    props: dict[str, Any] = {"min_size": min_size, "max_size": max_size,
                             "cooldown": cooldown,
                             "resource": member or {"type": "OS::Heat::Value",
                                                    "properties": {"value": "hello"}}}
    if desired is not None:
        props["desired_capacity"] = desired
    policy: dict[str, Any] = {"auto_scaling_group_id": {"get_resource": "g"},
                              "adjustment_type": kind, "scaling_adjustment": adjustment}
    if policy_cooldown is not None:
        policy["cooldown"] = policy_cooldown
    return {
        "heat_template_version": "2021-04-16",
        "resources": {"g": {"type": "OS::Heat::AutoScalingGroup", "properties": props},
                      "p": {"type": "OS::Heat::ScalingPolicy", "properties": policy}},
        "outputs": {
            "size": {"value": {"get_attr": ["g", "current_size"]}},
            "refs": {"value": {"get_attr": ["g", "refs"]}},
            "refs_map": {"value": {"get_attr": ["g", "refs_map"]}},
            "values": {"value": {"get_attr": ["g", "outputs", "value"]}},
            "values_list": {"value": {"get_attr": ["g", "outputs_list", "value"]}},
            "first": {"value": {"get_attr": ["g", "resource.0"]}},
            "first_value": {"value": {"get_attr": ["g", "resource.0.value"]}},
            "alarm_url": {"value": {"get_attr": ["p", "alarm_url"]}},
            "signal_url": {"value": {"get_attr": ["p", "signal_url"]}},
        },
    }


async def settled(service: EngineService, ident: dict[str, Any]) -> dict[str, Any]:
    await service.wait_for_stack(ident["stack_id"])
    stack = await service.show_stack(CTX, ident)
    stack = stack[0] if isinstance(stack, list) else stack
    stack["out"] = {o["output_key"]: o.get("output_value") for o in stack["outputs"]}
    return dict(stack)


async def create(service: EngineService, template: dict[str, Any], name: str = "s",
                 files: dict[str, str] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    ident = await service.create_stack(CTX, name, template, {}, files or {}, {})
    stack = await settled(service, ident)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    return ident, stack


async def members(service: EngineService, ident: dict[str, Any]) -> list[dict[str, Any]]:
    rows = await service.list_stack_resources(CTX, ident, nested_depth=1)
    return [r for r in rows if r.get("parent_resource") == "g"]


async def signal(service: EngineService, ident: dict[str, Any], name: str = "p") -> None:
    await service.resource_signal(CTX, ident, name, None)


async def events_of(service: EngineService, ident: dict[str, Any], name: str) -> list[str]:
    events = await service.list_events(CTX, ident, filters={"resource_name": name})
    return [str(e["resource_status"]) for e in events]


async def test_group_starts_at_its_desired_capacity_with_every_attribute(
        service: EngineService) -> None:
    ident, stack = await create(service, group_template(desired=2))
    out = stack["out"]
    assert out["size"] == 2
    assert len(out["refs"]) == 2 and sorted(out["refs"]) == sorted(out["refs_map"].values())
    assert list(out["values"].values()) == ["hello", "hello"]
    assert set(out["values"]) == set(out["refs_map"])
    assert out["values_list"] == ["hello", "hello"]
    assert out["first"] in out["refs"] and out["first_value"] == "hello"
    assert out["signal_url"].endswith(f"/v1/demo/stacks/s/{ident['stack_id']}"
                                      "/resources/p/signal")
    assert "/v1/signal/" in out["alarm_url"]
    assert len(await members(service, ident)) == 2
    group = await service.describe_stack_resource(CTX, ident, "g", with_attr=None)
    assert group["metadata"]["scaling_in_progress"] is False
    assert list(group["metadata"]["cooldown_end"].values()) == ["ExactCapacity : 2"]


async def test_min_size_is_the_start_without_desired_capacity(service: EngineService) -> None:
    _, stack = await create(service, group_template(min_size=3, max_size=5))
    assert stack["out"]["size"] == 3


async def test_signal_grows_the_group_and_records_it(service: EngineService,
                                                     sqlite_url: str) -> None:
    ident, _ = await create(service, group_template())
    await signal(service, ident)
    stack = await settled(service, ident)
    assert stack["out"]["size"] == 2
    assert stack["out"]["values_list"] == ["hello", "hello"]
    assert len(await members(service, ident)) == 2
    assert "SIGNAL_COMPLETE" in await events_of(service, ident, "p")
    group = await service.describe_stack_resource(CTX, ident, "g", with_attr=None)
    assert list(group["metadata"]["cooldown_end"].values()) == ["change_in_capacity : 1"]
    # the state is in the database: another engine on the same file sees it
    again = EngineService(db_url=sqlite_url)
    await again.start()
    try:
        stack = await settled(again, ident)
        assert stack["out"]["size"] == 2
        group = await again.describe_stack_resource(CTX, ident, "g", with_attr=None)
        assert group["metadata"]["scaling_in_progress"] is False
    finally:
        await again.stop()


async def test_cooldown_refuses_a_second_signal_without_an_event(
        service: EngineService) -> None:
    ident, _ = await create(service, group_template(cooldown=3600))
    # the create itself started the cooldown, as in Heat
    await signal(service, ident)
    stack = await settled(service, ident)
    assert stack["out"]["size"] == 1
    assert "SIGNAL_COMPLETE" not in await events_of(service, ident, "p")


async def test_the_policy_cooldown_overrides_the_groups(service: EngineService) -> None:
    ident, _ = await create(service, group_template(cooldown=3600, policy_cooldown=0))
    # a zero policy cooldown still waits for the group's recorded end
    await signal(service, ident)
    assert (await settled(service, ident))["out"]["size"] == 1
    ident2, _ = await create(service, group_template(cooldown=0, policy_cooldown=3600),
                             name="s2")
    await signal(service, ident2)
    assert (await settled(service, ident2))["out"]["size"] == 2
    await signal(service, ident2)   # now the policy's hour-long cooldown holds
    assert (await settled(service, ident2))["out"]["size"] == 2


async def test_bounds_hold_and_no_change_leaves_no_event(service: EngineService) -> None:
    ident, _ = await create(service, group_template(max_size=2, adjustment=5))
    await signal(service, ident)
    assert (await settled(service, ident))["out"]["size"] == 2
    await signal(service, ident)
    assert (await settled(service, ident))["out"]["size"] == 2
    assert (await events_of(service, ident, "p")).count("SIGNAL_COMPLETE") == 1


async def test_percent_change_rounds_as_heat(service: EngineService) -> None:
    ident, _ = await create(service, group_template(min_size=2, max_size=10,
                                                    kind="percent_change_in_capacity",
                                                    adjustment=10))
    await signal(service, ident)   # 10% of 2 is 0.2 of a member: still one more
    assert (await settled(service, ident))["out"]["size"] == 3


async def test_scale_down_removes_the_oldest_member(service: EngineService) -> None:
    template = group_template(max_size=3)
    template["resources"]["down"] = {"type": "OS::Heat::ScalingPolicy", "properties": {
        "auto_scaling_group_id": {"get_resource": "g"},
        "adjustment_type": "change_in_capacity", "scaling_adjustment": -1}}
    ident, stack = await create(service, template)
    oldest = stack["out"]["refs"][0]
    await signal(service, ident)
    grown = (await settled(service, ident))["out"]["refs"]
    assert len(grown) == 2 and grown[0] == oldest
    newest = grown[1]
    await signal(service, ident, "down")
    assert (await settled(service, ident))["out"]["refs"] == [newest]


async def test_update_resizes_and_rolls_out_a_new_definition(service: EngineService) -> None:
    template = group_template(desired=2)
    ident, stack = await create(service, template)
    new = copy.deepcopy(template)
    new["resources"]["g"]["properties"]["desired_capacity"] = 3
    new["resources"]["g"]["properties"]["resource"]["properties"]["value"] = "bye"
    await service.update_stack(CTX, ident, new, {}, {}, {})
    stack = await settled(service, ident)
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    assert stack["out"]["values_list"] == ["bye", "bye", "bye"]


async def test_a_failing_member_leaves_the_group_consistent_and_scalable(
        service: EngineService) -> None:
    failing = {"type": "OS::Heat::TestResource", "properties": {"fail": True}}
    ident, _ = await create(service, group_template(min_size=0, desired=0, member=failing))
    await signal(service, ident)
    stack = await settled(service, ident)
    assert stack["out"]["size"] == 0
    group = await service.describe_stack_resource(CTX, ident, "g", with_attr=None)
    assert group["metadata"]["scaling_in_progress"] is False
    assert group["resource_status"] == "CREATE_COMPLETE"
    fixed = group_template(min_size=0, desired=None,
                           member={"type": "OS::Heat::TestResource",
                                   "properties": {"fail": False}})
    await service.update_stack(CTX, ident, fixed, {}, {}, {})
    stack = await settled(service, ident)
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    # the update replaced the failed member and sized the group to its live members
    assert (await settled(service, ident))["out"]["size"] == 0
    await signal(service, ident)   # the next signal scales
    assert (await settled(service, ident))["out"]["size"] == 1


async def test_provider_template_members(service: EngineService) -> None:
    member = {"type": "member.yaml", "properties": {"word": "hi"}}
    files = {"member.yaml": (
        "heat_template_version: 2021-04-16\n"
        "parameters: {word: {type: string}}\n"
        "resources: {v: {type: OS::Heat::Value, properties: {value: {get_param: word}}}}\n"
        "outputs: {said: {value: {get_attr: [v, value]}}}\n")}
    template = group_template(desired=2, member=member)
    template["outputs"]["said"] = {"value": {"get_attr": ["g", "outputs_list", "said"]}}
    ident, stack = await create(service, template, files=files)
    assert stack["out"]["said"] == ["hi", "hi"]
    await signal(service, ident)
    assert (await settled(service, ident))["out"]["said"] == ["hi", "hi", "hi"]


@pytest.mark.parametrize(("props", "message"), [
    ({"min_size": 3, "max_size": 1}, "MinSize can not be greater than MaxSize"),
    ({"min_size": 1, "max_size": 2, "desired_capacity": 5},
     "DesiredCapacity must be between MinSize and MaxSize"),
])
async def test_bad_sizes_are_refused(service: EngineService, props: dict[str, Any],
                                     message: str) -> None:
    from kiln.errors import StackValidationFailed

    template = {"heat_template_version": "2021-04-16", "resources": {"g": {
        "type": "OS::Heat::AutoScalingGroup",
        "properties": {**props, "resource": {"type": "OS::Heat::None"}}}}}
    with pytest.raises(StackValidationFailed, match=message):
        await service.create_stack(CTX, "bad", template, {}, {}, {})


async def test_min_adjustment_step_needs_percent(service: EngineService) -> None:
    from kiln.errors import StackValidationFailed

    template = group_template()
    template["resources"]["p"]["properties"].update(min_adjustment_step=2,
                                                    auto_scaling_group_id="literal")
    with pytest.raises(StackValidationFailed,
                       match="min_adjustment_step property should only be specified for "
                             "adjustment_type with value percent_change_in_capacity"):
        await service.create_stack(CTX, "bad", template, {}, {}, {})


# -- the AWS types ---------------------------------------------------------------------------

class _AnyValue:
    """Stands in for the cloud's image and flavor lookups (glance/nova are remote APIs
    that cannot run here): every name is valid."""

    def validate(self, value: Any, context: Any) -> bool:
        return True


@pytest.fixture
def cloud_names() -> Iterator[None]:
    from kiln.template import constraints

    saved = {n: constraints.get_custom_constraint(n) for n in ("glance.image", "nova.flavor")}
    for name in saved:
        register_custom_constraint(name, _AnyValue())
    yield
    for name, old in saved.items():
        if old is None:
            constraints.unregister_custom_constraint(name)
        else:
            register_custom_constraint(name, old)


INSTANCE = ("heat_template_version: 2013-05-23\n"
            "parameters:\n"
            "  ImageId: {type: string}\n"
            "  InstanceType: {type: string}\n"
            "  Tags: {type: comma_delimited_list, default: 'x,y'}\n"
            "resources: {v: {type: OS::Heat::Value, properties: {value: {get_param: ImageId}}}}\n"
            "outputs:\n"
            "  PublicIp: {value: 10.0.0.1}\n"
            "  tags: {value: {get_param: Tags}}\n")

AWS_TEMPLATE = {
    "HeatTemplateFormatVersion": "2012-12-12",
    "Resources": {
        "lc": {"Type": "AWS::AutoScaling::LaunchConfiguration",
               "Properties": {"ImageId": "img1", "InstanceType": "m1.small"}},
        "asg": {"Type": "AWS::AutoScaling::AutoScalingGroup",
                "Properties": {"AvailabilityZones": [], "LaunchConfigurationName": {"Ref": "lc"},
                               "MinSize": "1", "MaxSize": "3", "Cooldown": "0"}},
        "ig": {"Type": "OS::Heat::InstanceGroup",
               "Properties": {"AvailabilityZones": [], "LaunchConfigurationName": {"Ref": "lc"},
                              "Size": 2}},
        "up": {"Type": "AWS::AutoScaling::ScalingPolicy",
               "Properties": {"AutoScalingGroupName": {"Ref": "asg"},
                              "ScalingAdjustment": "1", "AdjustmentType": "ChangeInCapacity"}},
    },
    "Outputs": {
        "asg_list": {"Value": {"Fn::GetAtt": ["asg", "InstanceList"]}},
        "ig_list": {"Value": {"Fn::GetAtt": ["ig", "InstanceList"]}},
        "up": {"Value": {"Ref": "up"}},
    },
}


async def test_aws_group_policy_and_instance_group(service: EngineService,
                                                   cloud_names: None) -> None:
    env = {"resource_registry": {"AWS::EC2::Instance": "inst.yaml"}}
    ident = await service.create_stack(CTX, "aws", AWS_TEMPLATE, env,
                                       {"inst.yaml": INSTANCE}, {})
    stack = await settled(service, ident)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    assert stack["out"]["asg_list"] == "10.0.0.1"
    assert stack["out"]["ig_list"] == "10.0.0.1,10.0.0.1"
    assert "/v1/signal/" in stack["out"]["up"]
    await signal(service, ident, "up")
    assert (await settled(service, ident))["out"]["asg_list"] == "10.0.0.1,10.0.0.1"


async def test_a_signal_while_the_group_updates_is_refused(service: EngineService) -> None:
    import asyncio

    member = {"type": "OS::Heat::TestResource", "properties": {"value": "a"}}
    template = group_template(member=member)
    ident, _ = await create(service, template)
    slow = copy.deepcopy(template)
    slow["resources"]["g"]["properties"]["resource"] = {
        "type": "OS::Heat::TestResource", "properties": {"value": "b", "wait_secs": 1.5}}
    await service.update_stack(CTX, ident, slow, {}, {}, {})
    deadline = asyncio.get_running_loop().time() + 10
    while (await service.describe_stack_resource(CTX, ident, "g", with_attr=None))[
            "resource_status"] != "UPDATE_IN_PROGRESS":
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.02)  # poll the group's status, bounded by the deadline
    await signal(service, ident)
    stack = await settled(service, ident)
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    assert stack["out"]["size"] == 1
    assert "SIGNAL_COMPLETE" not in await events_of(service, ident, "p")


async def test_an_alarm_restarts_the_restarters_victim(service: EngineService) -> None:
    from kiln.alarms import rules
    from kiln.alarms.store import AlarmRecord
    from kiln.engine.service.alarm_actions import EngineActions

    template = {"heat_template_version": "2021-04-16", "resources": {
        "victim": {"type": "OS::Heat::TestResource", "properties": {"value": "v"}},
        "restarter": {"type": "OS::Heat::HARestarter",
                      "properties": {"InstanceId": {"get_resource": "victim"}}}},
        "outputs": {"url": {"value": {"get_attr": ["restarter", "AlarmUrl"]}}}}
    ident, stack = await create(service, template)
    before = (await service.describe_stack_resource(CTX, ident, "victim", with_attr=None))[
        "physical_resource_id"]
    alarm = AlarmRecord(id=1, project_id="demo", name="a", stack_id=None, resource_name=None,
                        rule=rules.make_rule(namespace="n", metric_name="m",
                                             statistic="Sum", period=60,
                                             evaluation_periods=1, threshold=1,
                                             comparison="GreaterThanThreshold"),
                        actions_enabled=True, state="ALARM", state_reason="",
                        state_reason_data=None, state_updated_at=0, last_evaluated=0,
                        updated_at=None)
    outcome = await EngineActions(service).run(alarm, stack["out"]["url"], "OK", "ALARM",
                                               "down")
    assert outcome == "restarting victim"
    stack = await settled(service, ident)
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    after = (await service.describe_stack_resource(CTX, ident, "victim", with_attr=None))[
        "physical_resource_id"]
    assert after != before


async def test_aodh_alarms_are_refused(service: EngineService) -> None:
    from kiln.errors import ResourceTypeUnavailable

    listed = {t["resource_type"] if isinstance(t, dict) else t
              for t in await service.list_resource_types(CTX)}
    # Kiln's own alarms are listed; Aodh's are not while no Aodh is reachable (as Heat)
    assert {"AWS::CloudWatch::Alarm", "OS::Heat::CWLiteAlarm"} <= listed
    assert "OS::Aodh::Alarm" not in listed
    template = {"heat_template_version": "2021-04-16", "resources": {
        "a": {"type": "OS::Aodh::Alarm", "properties": {"meter_name": "cpu_util",
                                                        "threshold": 50}}}}
    # Heat 27's answer: the missing service, before the resource's own checks
    with pytest.raises(ResourceTypeUnavailable,
                       match=r"Service aodh is not available for resource type "
                             r"OS::Aodh::Alarm, reason: aodh alarming endpoint is not in "
                             r"service catalog\."):
        await service.create_stack(CTX, "aodh", template, {}, {}, {})


async def reasons_of(service: EngineService, ident: dict[str, Any],
                     name: str) -> list[tuple[str, str]]:
    events = await service.list_events(CTX, ident, filters={"resource_name": name})
    return [(str(e["resource_status"]), str(e["resource_status_reason"])) for e in events]


async def test_a_signal_is_answered_before_the_resize_and_a_second_is_ignored(
        service: EngineService) -> None:
    """Heat answers a policy's signal at once and resizes in the background; a signal
    arriving while that resize runs is ignored without an event (scaling activity)."""
    slow = {"type": "OS::Heat::TestResource",
            "properties": {"value": "m", "action_wait_secs": {"create": 5}}}
    template = group_template(member=slow)
    template["resources"]["g"]["properties"]["desired_capacity"] = 1
    ident, _ = await create(service, template)
    before = await members(service, ident)
    await signal(service, ident)   # returns while the new member takes 5 s to create
    now = await members(service, ident)
    assert [m for m in now if m["resource_status"] == "CREATE_COMPLETE"] == [
        m for m in before if m["resource_status"] == "CREATE_COMPLETE"]
    await signal(service, ident)   # during the resize: ignored, as in Heat
    stack = await settled(service, ident)
    assert stack["out"]["size"] == 2
    assert (await events_of(service, ident, "p")).count("SIGNAL_COMPLETE") == 1
    group = await service.describe_stack_resource(CTX, ident, "g", with_attr=None)
    assert group["metadata"]["scaling_in_progress"] is False
    notes = await reasons_of(service, ident, "g")
    started = [r for s, r in notes if s == "SIGNAL_IN_PROGRESS"]
    ended = [r for s, r in notes if s == "SIGNAL_COMPLETE"]
    assert len(started) == len(ended) == 1
    assert started[0].startswith("Start resizing the group ") and " from 1 " in started[0]
    assert ended[0].startswith("End resizing the group ") and " to 2 " in ended[0]


async def test_a_failing_scale_up_is_an_error_event_of_the_group(
        service: EngineService) -> None:
    failing = {"type": "OS::Heat::TestResource", "properties": {"fail": True}}
    ident, _ = await create(service, group_template(min_size=0, desired=0, member=failing))
    await signal(service, ident)
    await settled(service, ident)
    notes = await reasons_of(service, ident, "g")
    failed = [r for s, r in notes if s == "SIGNAL_FAILED"]
    assert len(failed) == 1 and failed[0].endswith("(the group has 0 members)"), notes


async def test_an_alarm_state_change_is_an_event_of_its_resource(
        service: EngineService) -> None:
    from kiln.alarms import rules
    from kiln.alarms.store import AlarmRecord
    from kiln.engine.service.alarm_actions import EngineActions

    template = {"heat_template_version": "2021-04-16", "resources": {
        "cpu": {"type": "OS::Heat::CWLiteAlarm", "properties": {
            "MetricName": "cpu", "Namespace": "n", "Statistic": "Average", "Period": "60",
            "EvaluationPeriods": "1", "Threshold": "50",
            "ComparisonOperator": "GreaterThanThreshold"}}}}
    ident, _ = await create(service, template, name="al")
    alarm = AlarmRecord(id=1, project_id="demo", name="al-cpu",
                        stack_id=ident["stack_id"], resource_name="cpu",
                        rule=rules.make_rule(namespace="n", metric_name="cpu",
                                             statistic="Average", period=60,
                                             evaluation_periods=1, threshold=50,
                                             comparison="GreaterThanThreshold"),
                        actions_enabled=True, state="OK", state_reason="",
                        state_reason_data=None, state_updated_at=0, last_evaluated=0,
                        updated_at=None)
    actions = EngineActions(service)
    await actions.state_changed(alarm, "OK", "ALARM", "Threshold Crossed")
    assert ("SIGNAL_COMPLETE", "Alarm state changed from OK to ALARM: Threshold Crossed"
            ) in await reasons_of(service, ident, "cpu")
    await service.delete_stack(CTX, ident)
    await service.wait_for_stack(ident["stack_id"])
    await actions.state_changed(alarm, "ALARM", "OK", "gone")   # no error for a gone stack
