"""AWS::AutoScaling::AutoScalingGroup, AWS::AutoScaling::LaunchConfiguration and
AWS::AutoScaling::ScalingPolicy, as Heat 27 has them.

The AWS group is an OS::Heat::InstanceGroup with bounds (``MinSize``, ``MaxSize``,
``DesiredCapacity``), a ``Cooldown`` and the ``AutoScalingRollingUpdate`` update
policy; its members carry the tag ``metering.AutoScalingGroupName`` so metrics pushed
from them (cfn-push-stats) name the group. The launch configuration only holds the
members' properties and metadata (``ImageId`` and ``InstanceType`` are checked by the
cloud's custom constraints, as in Heat). The AWS policy's reference is its pre-signed
alarm URL, which is what an AWS::CloudWatch::Alarm's ``AlarmActions`` name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from kiln.errors import NotSupported, StackValidationFailed
from kiln.resources.base import (
    Attribute,
    Properties,
    Property,
    Resource,
    ResourceFailure,
    SupportStatus,
    Token,
)
from kiln.resources.common.autoscaling_group import AutoScalingGroupBase
from kiln.resources.common.instance_group import InstanceGroupBase, rolling_update_schema
from kiln.resources.common.scaling_policy import ALARM_URL, ScalingPolicyBase
from kiln.scaling import capacity
from kiln.template.constraints import AllowedValues, CustomConstraint, Range


class LaunchConfiguration(Resource):
    type_name = "AWS::AutoScaling::LaunchConfiguration"
    support_status = SupportStatus()
    side_effect_free = True
    properties_schema = {
        "ImageId": Property("string", "Glance image ID or name.",
                            constraints=[CustomConstraint("glance.image")]),
        "InstanceType": Property("string", "Nova instance type (flavor).",
                                 constraints=[CustomConstraint("nova.flavor")]),
        "InstanceId": Property("string", "The ID of an existing instance you want to use "
                               "to create the launch configuration. All properties are "
                               "derived from the instance with the exception of "
                               "BlockDeviceMapping.",
                               constraints=[CustomConstraint("nova.server")]),
        "KeyName": Property("string", "Optional Nova keypair name.",
                            constraints=[CustomConstraint("nova.keypair")]),
        "UserData": Property("string", "User data to pass to instance."),
        "SecurityGroups": Property("list", "Security group names to assign."),
        "KernelId": Property("string", "Not Implemented.", implemented=False),
        "RamDiskId": Property("string", "Not Implemented.", implemented=False),
        "BlockDeviceMappings": Property(
            "list", "Block device mappings to attach to instance.", schema=Property(
                "map", schema={
                    "DeviceName": Property("string", "A device name where the volume will "
                                           "be attached in the system at "
                                           "/dev/device_name.e.g. vdb", required=True),
                    "Ebs": Property("map", "The ebs volume to attach to the instance.",
                                    schema={
                                        "DeleteOnTermination": Property(
                                            "boolean", "Indicate whether the volume should "
                                            "be deleted when the instance is terminated.",
                                            default=True),
                                        "Iops": Property("number", "The number of I/O "
                                                         "operations per second that the "
                                                         "volume supports.",
                                                         implemented=False),
                                        "SnapshotId": Property(
                                            "string", "The ID of the snapshot to create "
                                            "a volume from.",
                                            constraints=[CustomConstraint(
                                                "cinder.snapshot")]),
                                        "VolumeSize": Property(
                                            "string", "The size of the volume, in GB. "
                                            "Must be equal or greater than the size of the "
                                            "snapshot. It is safe to leave this blank and "
                                            "have the Compute service infer the size."),
                                        "VolumeType": Property("string", "The volume type.",
                                                               implemented=False),
                                    }),
                    "NoDevice": Property("map", "The can be used to unmap a defined "
                                         "device.", implemented=False),
                    "VirtualName": Property("string", "The name of the virtual device. "
                                            "The name must be in the form ephemeralX where "
                                            "X is a number starting from zero (0); for "
                                            "example, ephemeral0.", implemented=False),
                })),
        "NovaSchedulerHints": Property(
            "list", "Scheduler hints to pass to Nova (Heat extension).", schema=Property(
                "map", schema={"Key": Property("string", required=True),
                               "Value": Property("string", required=True)})),
    }

    def validate(self) -> None:
        super().validate()
        for mapping in self.properties["BlockDeviceMappings"] or []:
            ebs = mapping.get("Ebs")
            if not ebs:
                raise StackValidationFailed("Ebs is missing, this is required when "
                                            "specifying BlockDeviceMappings.")
            if not ebs.get("SnapshotId"):
                raise StackValidationFailed("SnapshotId is missing, this is required when "
                                            "specifying BlockDeviceMappings.")
        if not self.properties["InstanceId"] and not (self.properties["ImageId"]
                                                      and self.properties["InstanceType"]):
            raise StackValidationFailed("If without InstanceId, ImageId and InstanceType "
                                        "are required.")

    async def handle_create(self) -> Token:
        if self.properties["InstanceId"]:
            raise ResourceFailure("InstanceId needs the compute service, which Kiln does "
                                  "not reach here", exc_type="NotSupported")
        self.resource_id = self.physical_resource_name()
        return None


class AWSAutoScalingGroup(AutoScalingGroupBase, InstanceGroupBase):
    type_name = "AWS::AutoScaling::AutoScalingGroup"
    support_status = SupportStatus(version="2014.1")
    description = ""
    MIN, MAX, DESIRED, COOLDOWN = "MinSize", "MaxSize", "DesiredCapacity", "Cooldown"
    ROLLING_UPDATE: ClassVar[str] = "AutoScalingRollingUpdate"
    update_policy_schema: ClassVar[Mapping[str, Property]] = rolling_update_schema(
        "AutoScalingRollingUpdate")
    properties_schema = {
        "AvailabilityZones": Property("list", "Not Implemented.", required=True),
        "LaunchConfigurationName": Property("string", "The reference to a "
                                            "LaunchConfiguration resource.",
                                            update_allowed=True),
        "InstanceId": Property("string", "The ID of an existing instance to use to create "
                               "the Auto Scaling group. If specify this property, will "
                               "create the group use an existing instance instead of a "
                               "launch configuration.",
                               constraints=[CustomConstraint("nova.server")]),
        "MaxSize": Property("integer", "Maximum number of instances in the group.",
                            required=True, update_allowed=True),
        "MinSize": Property("integer", "Minimum number of instances in the group.",
                            required=True, update_allowed=True),
        "Cooldown": Property("integer", "Cooldown period, in seconds.", update_allowed=True),
        "DesiredCapacity": Property("integer", "Desired initial number of instances.",
                                    update_allowed=True),
        "HealthCheckGracePeriod": Property("integer", "Not Implemented.", implemented=False),
        "HealthCheckType": Property("string", "Not Implemented.",
                                    constraints=[AllowedValues(("EC2", "ELB"))],
                                    implemented=False),
        "LoadBalancerNames": Property("list", "List of LoadBalancer resources."),
        "VPCZoneIdentifier": Property(
            "list", "Use only with Neutron, to list the internal subnet to which the "
            "instance will be attached; needed only if multiple exist; list length must be "
            "exactly 1.", schema=Property("string", "UUID of the internal subnet to which "
                                          "the instance will be attached.")),
        "Tags": Property("list", "Tags to attach to this group.", schema=Property(
            "map", schema={"Key": Property("string", required=True),
                           "Value": Property("string", required=True)})),
    }
    attributes_schema = {
        "InstanceList": Attribute("A comma-delimited list of server ip addresses. "
                                  "(Heat extension).", "string"),
    }

    def validate(self) -> None:
        super().validate()
        zones = self.properties["VPCZoneIdentifier"]
        if zones and len(zones) != 1:
            raise NotSupported("Anything other than one VPCZoneIdentifier is not supported")
        if bool(self.properties["InstanceId"]) == bool(
                self.properties["LaunchConfigurationName"]):
            raise StackValidationFailed("Either 'InstanceId' or 'LaunchConfigurationName' "
                                        "must be provided.")

    def group_tags(self, properties: Properties) -> list[dict[str, str]]:
        tag = {"Key": "metering.AutoScalingGroupName", "Value": self.reference_id()}
        return [*super().group_tags(properties), tag]

    def member_snippet(self, properties: Properties) -> dict[str, Any]:
        snippet = super().member_snippet(properties)
        zones = properties["VPCZoneIdentifier"]
        if zones:
            snippet["properties"]["SubnetId"] = zones[0]
        return snippet


class AWSScalingPolicy(ScalingPolicyBase):
    type_name = "AWS::AutoScaling::ScalingPolicy"
    support_status = SupportStatus()
    GROUP, ADJUSTMENT, TYPE, COOLDOWN, MIN_STEP = (
        "AutoScalingGroupName", "ScalingAdjustment", "AdjustmentType", "Cooldown",
        "MinAdjustmentStep")
    PERCENT: ClassVar[str] = capacity.CFN_PERCENT_CHANGE_IN_CAPACITY
    properties_schema = {
        "AutoScalingGroupName": Property("string", "AutoScaling group name to apply policy "
                                         "to.", required=True),
        "ScalingAdjustment": Property("integer", "Size of adjustment.", required=True,
                                      update_allowed=True),
        "AdjustmentType": Property(
            "string", "Type of adjustment (absolute or percentage).", required=True,
            constraints=[AllowedValues(capacity.CFN_ADJUSTMENT_TYPES)], update_allowed=True),
        "Cooldown": Property("integer", "Cooldown period, in seconds.", update_allowed=True),
        "MinAdjustmentStep": Property(
            "integer", "Minimum number of resources that are added or removed when the "
            "AutoScaling group scales up or down. This can be used only when specifying "
            "PercentChangeInCapacity for the AdjustmentType property.",
            constraints=[Range(min=0)], update_allowed=True),
    }
    attributes_schema = {
        "AlarmUrl": Attribute("A signed url to handle the alarm. (Heat extension).",
                              "string"),
    }

    def reference_id(self) -> str:
        return str(self.data.get(ALARM_URL) or self.name)
