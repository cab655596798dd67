"""What OS::Heat::InstanceGroup and AWS::AutoScaling::AutoScalingGroup share: ``Size``
members built from an AWS::AutoScaling::LaunchConfiguration, each an
``OS::Heat::ScaledResource``, which the child stack's registry maps to
``AWS::EC2::Instance`` (map either type in your environment, e.g. to a provider
template, to scale something else).

As in Heat 27, a member's properties are the launch configuration's given properties
plus ``Tags`` (with ``metering.groupname`` added), and its metadata is the launch
configuration's. A new launch configuration reaches existing members only through the
``RollingUpdate`` update policy (``MinInstancesInService``, ``MaxBatchSize``,
``PauseTime`` as an ISO 8601 duration of at most an hour); without it, only members
added later get it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from kiln.errors import InvalidTemplateAttribute, StackValidationFailed
from kiln.resources.base import Attribute, Properties, Property
from kiln.resources.common.scaling_group import ScalingGroup
from kiln.scaling import duration

SCALED_RESOURCE_TYPE = "OS::Heat::ScaledResource"
LAUNCH_CONFIG_TYPE = "AWS::AutoScaling::LaunchConfiguration"


def _tags_schema() -> Property:
    return Property("list", "Tags to attach to this group.", schema=Property("map", schema={
        "Key": Property("string", "Tag key.", required=True),
        "Value": Property("string", "Tag value.", required=True)}))


def rolling_update_schema(name: str) -> dict[str, Property]:
    return {name: Property("map", schema={
        "MinInstancesInService": Property("integer", default=0),
        "MaxBatchSize": Property("integer", default=1),
        "PauseTime": Property("string", default="PT0S")})}


class InstanceGroupBase(ScalingGroup):
    """A group of ``Size`` members built from a launch configuration."""

    ROLLING_UPDATE: ClassVar[str] = "RollingUpdate"
    update_policy_schema: ClassVar[Mapping[str, Property]] = rolling_update_schema(
        "RollingUpdate")
    properties_schema = {
        "AvailabilityZones": Property("list", "Not Implemented.", required=True),
        "LaunchConfigurationName": Property("string", "The reference to a "
                                            "LaunchConfiguration resource.", required=True,
                                            update_allowed=True),
        "Size": Property("integer", "Desired number of instances.", required=True,
                         update_allowed=True),
        "LoadBalancerNames": Property("list", "List of LoadBalancer resources. Currently "
                                      "only the AWS::ElasticLoadBalancing::LoadBalancer "
                                      "resource type is supported."),
        "Tags": _tags_schema(),
    }
    attributes_schema = {
        "InstanceList": Attribute("A comma-delimited list of server ip addresses. "
                                  "(Heat extension).", "string"),
    }

    # -- validation -----------------------------------------------------------------------
    def validate(self) -> None:
        self.validate_launch_config()
        super().validate()
        policy = self.rolling_update()
        if policy is not None:
            try:
                pause = duration.seconds(policy["PauseTime"])
            except ValueError as exc:
                raise StackValidationFailed(str(exc)) from None
            if pause > 3600:
                raise StackValidationFailed("Maximum PauseTime is 1 hour.")

    def validate_launch_config(self) -> None:
        refid = self.properties.get("LaunchConfigurationName")
        if not refid:
            return
        conf = self.runtime.resource_by_refid(str(refid))
        if conf is None:
            raise StackValidationFailed(
                f"LaunchConfigurationName ({refid}) reference can not be found.")
        if conf.name not in self.definition.depends_on:
            raise StackValidationFailed(
                f"LaunchConfigurationName ({refid}) requires a reference to the "
                "configuration not just the name of the resource.")

    def rolling_update(self) -> Mapping[str, Any] | None:
        raw = self.definition.update_policy
        if not raw:
            return None
        resolved = self.runtime.resolve(raw)
        if not isinstance(resolved, Mapping) or resolved.get(self.ROLLING_UPDATE) is None:
            return None
        policy: Mapping[str, Any] = Properties(type(self).update_policy_schema,
                                               resolved)[self.ROLLING_UPDATE]
        return policy

    # -- members -------------------------------------------------------------------------
    def group_tags(self, properties: Properties) -> list[dict[str, str]]:
        tags = [dict(t) for t in properties.get("Tags") or []]
        if any(str(t["Key"]).startswith("metering.") for t in tags):
            return tags
        return [*tags, {"Key": "metering.groupname", "Value": self.reference_id()}]

    def member_snippet(self, properties: Properties) -> dict[str, Any]:
        refid = str(properties["LaunchConfigurationName"] or "")
        conf = self.runtime.resource_by_refid(refid) if refid else None
        props: dict[str, Any] = {}
        metadata: Any = None
        if conf is not None:
            given = self.runtime.resolve(conf.definition.properties) or {}
            props = {k: v for k, v in dict(given).items() if v is not None}
            metadata = self.runtime.resolve(conf.definition.metadata)
        props.pop("InstanceId", None)
        props["Tags"] = self.group_tags(properties)
        snippet: dict[str, Any] = {"type": SCALED_RESOURCE_TYPE, "properties": props}
        if metadata:
            snippet["metadata"] = metadata
        return snippet

    def child_parameters(self, properties: Properties) -> Mapping[str, Any]:
        return {"parameters": {},
                "resource_registry": {SCALED_RESOURCE_TYPE: "AWS::EC2::Instance"}}

    def initial_size(self, properties: Properties) -> int:
        return int(properties["Size"])

    def target_size(self, properties: Properties, current: int) -> int:
        size = properties["Size"]
        return current if size is None else int(size)

    def rolling_policy(self, properties: Properties) -> tuple[int, int, float] | None:
        policy = self.rolling_update()
        if policy is None:
            return None
        return (int(policy["MinInstancesInService"]), int(policy["MaxBatchSize"]),
                float(duration.seconds(policy["PauseTime"])))

    def _definition_changed(self, prop_diff: Any) -> bool:
        return "LaunchConfigurationName" in prop_diff

    # -- attributes ----------------------------------------------------------------------
    def resolve_attribute(self, name: str) -> Any:
        if name == "InstanceList":
            try:
                ips = self.member_values("PublicIp")
            except InvalidTemplateAttribute:  # members without PublicIp: none listed
                ips = {}
            values = [str(ips.get(n) or "0.0.0.0") for n in self.member_names()]
            return ",".join(values) or None
        return None
