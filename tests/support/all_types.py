"""One small template per built-in resource type, for the tests that drive every type
through every stack action (tests/unit/engine/test_every_type.py through EngineService,
tests/functional/test_server_engine_wiring.py through kiln serve and python-heatclient).

The types come from the registry, so a new built-in type without a sample here makes
those tests fail until one is written. Each sample is the resource ``r`` under test (plus
the helpers it needs) in three versions: as created, changed in place (None when the type
has no update_allowed property) and changed so that it is replaced (None when no property
triggers a replacement). ``signal`` names a wait-condition handle that must be signalled
(once its create completed) for the stack to complete.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from kiln.resources.registry import build_registry

CHILD = {"heat_template_version": "2018-08-31",
         "parameters": {"v": {"type": "string", "default": "one"}},
         "resources": {"n": {"type": "OS::Heat::Value",
                             "properties": {"value": {"get_param": "v"}}}},
         "outputs": {"v": {"value": {"get_attr": ["n", "value"]}}}}
CFN_CHILD = {"AWSTemplateFormatVersion": "2010-09-09",
             "Parameters": {"V": {"Type": "String", "Default": "one"}},
             "Resources": {"N": {"Type": "OS::Heat::None"}}}
FILES = {"child.json": json.dumps(CFN_CHILD)}


@dataclass(frozen=True)
class Sample:
    created: dict[str, Any]
    in_place: dict[str, Any] | None = None
    replaced: dict[str, Any] | None = None
    helpers: dict[str, Any] = field(default_factory=dict)
    signal: str | None = None
    signal_data: dict[str, Any] = field(default_factory=lambda: {"status": "SUCCESS"})

    def template(self, props: dict[str, Any], type_name: str) -> dict[str, Any]:
        resources = {**self.helpers, "r": {"type": type_name, "properties": props}}
        return {"heat_template_version": "2018-08-31", "resources": resources}


_HANDLE = {"h": {"type": "OS::Heat::WaitConditionHandle"}}
_CFN_HANDLE = {"h": {"type": "AWS::CloudFormation::WaitConditionHandle"}}
_SERVERS = {"s1": {"type": "OS::Heat::DeployedServer"},
            "s2": {"type": "OS::Heat::DeployedServer"},
            "cfg": {"type": "OS::Heat::SoftwareConfig",
                    "properties": {"group": "script", "config": "echo hi",
                                   "inputs": [{"name": "x"}]}}}


def _deployment(server: str, x: str) -> dict[str, Any]:
    return {"config": {"get_resource": "cfg"}, "server": {"get_resource": server},
            "signal_transport": "NO_SIGNAL", "input_values": {"x": x}}


def _group(*servers: str) -> dict[str, Any]:
    return {"config": {"get_resource": "cfg"}, "signal_transport": "NO_SIGNAL",
            "servers": {s: {"get_resource": s} for s in servers}, "input_values": {"x": "a"}}
_LAUNCH = {"lc": {"type": "AWS::AutoScaling::LaunchConfiguration",
                  "properties": {"ImageId": "image", "InstanceType": "m1.small"}},
           "lc2": {"type": "AWS::AutoScaling::LaunchConfiguration",
                   "properties": {"ImageId": "image2", "InstanceType": "m1.small"}}}
_GROUPS = {g: {"type": "OS::Heat::AutoScalingGroup",
               "properties": {"min_size": 1, "max_size": 2,
                              "resource": {"type": "OS::Heat::None"}}} for g in ("g", "g2")}


def _aws_group(lc: str, zones: list[str], **sizes: int) -> dict[str, Any]:
    return {"AvailabilityZones": zones, "LaunchConfigurationName": {"get_resource": lc},
            **sizes}


def _policy(group: str, adjustment: int, *, aws: bool = False) -> dict[str, Any]:
    if aws:
        return {"AutoScalingGroupName": {"get_resource": group},
                "AdjustmentType": "ChangeInCapacity", "ScalingAdjustment": adjustment}
    return {"auto_scaling_group_id": {"get_resource": group},
            "adjustment_type": "change_in_capacity", "scaling_adjustment": adjustment}


def _alarm(metric: str, threshold: str) -> dict[str, Any]:
    return {"MetricName": metric, "Namespace": "test", "Statistic": "Average",
            "Period": "60", "EvaluationPeriods": "1", "Threshold": threshold,
            "ComparisonOperator": "GreaterThanThreshold"}


SAMPLES: dict[str, Sample] = {
    # members of the AWS groups are AWS::EC2::Instance (Nova): their samples hold none
    "AWS::AutoScaling::AutoScalingGroup": Sample(
        _aws_group("lc", [], MinSize=0, MaxSize=2), _aws_group("lc2", [], MinSize=0,
                                                               MaxSize=3),
        _aws_group("lc", ["nova"], MinSize=0, MaxSize=2), _LAUNCH),
    "AWS::EC2::InternetGateway": Sample({}),
    "AWS::AutoScaling::LaunchConfiguration": Sample(
        {"ImageId": "image", "InstanceType": "m1.small"}, None,
        {"ImageId": "image2", "InstanceType": "m1.small"}),
    "AWS::AutoScaling::ScalingPolicy": Sample(
        _policy("g", 1, aws=True), _policy("g", 2, aws=True), _policy("g2", 1, aws=True),
        _GROUPS),
    "AWS::CloudWatch::Alarm": Sample(_alarm("cpu", "1"), _alarm("cpu", "2"),
                                     _alarm("mem", "2")),
    "OS::Heat::AutoScalingGroup": Sample(
        {"min_size": 1, "max_size": 2, "resource": {"type": "OS::Heat::None"}},
        {"min_size": 1, "max_size": 3, "resource": {"type": "OS::Heat::None"}}),
    "OS::Heat::CWLiteAlarm": Sample(_alarm("cpu", "1"), _alarm("cpu", "2"),
                                    _alarm("mem", "2")),
    "OS::Heat::InstanceGroup": Sample(
        _aws_group("lc", [], Size=0), _aws_group("lc2", [], Size=0),
        _aws_group("lc", ["nova"], Size=0), _LAUNCH),
    "OS::Heat::ScalingPolicy": Sample(_policy("g", 1), _policy("g", 2), _policy("g2", 1),
                                      _GROUPS),
    "AWS::CloudFormation::Stack": Sample(
        {"TemplateURL": "child.json"}, {"TemplateURL": "child.json",
                                        "Parameters": {"V": "two"}}),
    "AWS::CloudFormation::WaitCondition": Sample(
        {"Handle": {"get_resource": "h"}, "Timeout": 60}, None,
        {"Handle": {"get_resource": "h"}, "Timeout": 120}, _CFN_HANDLE, signal="h",
        signal_data={"Status": "SUCCESS", "Reason": "ready", "UniqueId": "1", "Data": "d"}),
    "AWS::CloudFormation::WaitConditionHandle": Sample({}),
    "AWS::IAM::AccessKey": Sample({"UserName": {"get_resource": "u"}}, None,
                                  {"UserName": {"get_resource": "u2"}},
                                  {"u": {"type": "AWS::IAM::User"},
                                   "u2": {"type": "AWS::IAM::User"}}),
    "AWS::IAM::User": Sample({}, None, {"Policies": [{"get_resource": "p"}]},
                             {"p": {"type": "OS::Heat::AccessPolicy",
                                    "properties": {"AllowedResources": ["p"]}}}),
    "OS::Heat::AccessPolicy": Sample({"AllowedResources": ["x"]}, None,
                                     {"AllowedResources": ["y"]},
                                     {"x": {"type": "OS::Heat::None"},
                                      "y": {"type": "OS::Heat::None"}}),
    "OS::Heat::CloudConfig": Sample({"cloud_config": {"a": 1}}, None,
                                    {"cloud_config": {"a": 2}}),
    "OS::Heat::Delay": Sample({"min_wait": 0}, {"min_wait": 0, "max_jitter": 0}),
    "OS::Heat::DeployedServer": Sample({"name": "one"}, {"name": "two"}),
    "OS::Heat::MultipartMime": Sample({"parts": [{"config": "a"}]}, None,
                                      {"parts": [{"config": "b"}]}),
    "OS::Heat::None": Sample({"a": 1}),
    "OS::Heat::RandomString": Sample({"length": 8}, None, {"length": 9}),
    "OS::Heat::Stack": Sample({"template": json.dumps(CHILD)},
                              {"template": json.dumps(CHILD), "parameters": {"v": "two"}}),
    "OS::Heat::ResourceChain": Sample(
        {"resources": ["OS::Heat::None"]}, {"resources": ["OS::Heat::None"] * 2},
        {"resources": ["OS::Heat::None"], "concurrent": True}),
    "OS::Heat::ResourceGroup": Sample(
        {"count": 1, "resource_def": {"type": "OS::Heat::None"}},
        {"count": 2, "resource_def": {"type": "OS::Heat::None"}},
        {"count": 1, "resource_def": {"type": "OS::Heat::None"}, "index_var": "%i%"}),
    "OS::Heat::SoftwareComponent": Sample(
        {"configs": [{"actions": ["CREATE"], "config": "a", "tool": "script"}]}, None,
        {"configs": [{"actions": ["CREATE"], "config": "b", "tool": "script"}]}),
    "OS::Heat::SoftwareConfig": Sample({"config": "a"}, None, {"config": "b"}),
    "OS::Heat::SoftwareDeployment": Sample(
        _deployment("s1", "a"), _deployment("s1", "b"), _deployment("s2", "b"), _SERVERS),
    "OS::Heat::SoftwareDeploymentGroup": Sample(_group("s1"), _group("s1", "s2"), None,
                                                _SERVERS),
    "OS::Heat::StructuredConfig": Sample({"config": {"a": 1}}, None,
                                         {"config": {"a": 2}}),
    "OS::Heat::StructuredDeployment": Sample(
        _deployment("s1", "a"), _deployment("s1", "b"), _deployment("s2", "b"),
        {**_SERVERS, "cfg": {"type": "OS::Heat::StructuredConfig",
                             "properties": {"config": {"x": {"get_input": "x"}}}}}),
    "OS::Heat::StructuredDeploymentGroup": Sample(
        _group("s1"), _group("s1", "s2"), None,
        {**_SERVERS, "cfg": {"type": "OS::Heat::StructuredConfig",
                             "properties": {"config": {"x": {"get_input": "x"}}}}}),
    "OS::Heat::TestResource": Sample({"value": "a"}, {"value": "b"},
                                     {"value": "b", "update_replace_value": "c"}),
    "OS::Heat::Value": Sample({"value": "a"}, {"value": "b"}),
    "OS::Heat::WaitCondition": Sample(
        {"handle": {"get_resource": "h"}, "timeout": 60}, None,
        {"handle": {"get_resource": "h"}, "timeout": 120}, _HANDLE, signal="h"),
    "OS::Heat::WaitConditionHandle": Sample({}, None, {"signal_transport": "NO_SIGNAL"}),
    "OS::Heat::UpdateWaitConditionHandle": Sample({}),
}


def builtin_types() -> list[str]:
    """Every type the built-in plugin packages register (not operator plugins), except
    the ones that need an OpenStack service, themselves or in the nested stack they make
    (the load balancer's server): tests/cloud drives those against real ones."""
    registry = build_registry((), use_entry_points=False)
    return sorted(name for name in registry.list_types()
                  if not registry.get(name).client_name
                  and not getattr(registry.get(name), "checks_child_services", False))
