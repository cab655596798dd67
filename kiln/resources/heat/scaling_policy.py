"""OS::Heat::ScalingPolicy: a signal target that resizes an autoscaling group.

A signal (from an alarm, the watcher, ``openstack stack resource signal``, or a POST to
``alarm_url`` / ``signal_url``) asks the group named by ``auto_scaling_group_id`` to
change by ``scaling_adjustment`` of ``adjustment_type``; the group applies its bounds
and cooldown (the policy's ``cooldown`` when set, else the group's). A refused request
(cooldown, scaling already running, no change in size) leaves no event, as in Heat.
The policy's reference is its stack user's id, as Heat's is; ``alarm_url`` is the
pre-signed CFN signal URL, ``signal_url`` the native API's.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, ClassVar

from kiln.errors import EntityNotFound, StackValidationFailed
from kiln.resources.base import (
    Attribute,
    Properties,
    Property,
    Resource,
    SupportStatus,
    Token,
)
from kiln.scaling import capacity
from kiln.template.constraints import AllowedValues, Range
from kiln.template.definitions import ResourceDefinition

LOG = logging.getLogger(__name__)


class ScalingPolicyBase(Resource):
    """The behaviour both policies share; subclasses name the properties."""

    GROUP, ADJUSTMENT, TYPE, COOLDOWN, MIN_STEP = (
        "auto_scaling_group_id", "scaling_adjustment", "adjustment_type", "cooldown",
        "min_adjustment_step")
    PERCENT: ClassVar[str] = capacity.PERCENT_CHANGE_IN_CAPACITY

    def validate(self) -> None:
        super().validate()
        props = self.properties
        if props[self.TYPE] != self.PERCENT and props[self.MIN_STEP] is not None:
            raise StackValidationFailed(
                f"{self.MIN_STEP} property should only be specified for {self.TYPE} with "
                f"value {self.PERCENT}.")

    async def handle_create(self) -> Token:
        user = await self.runtime.stack_user(self.name)
        self.resource_id = str(user.get("user_id") or self.name)
        return None

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        self.definition = new_definition
        self.properties = new_properties
        return None

    async def handle_signal(self, details: Any) -> str | None:
        from kiln.resources.heat.autoscaling_group import AutoScalingGroupBase

        state = "alarm"
        if isinstance(details, Mapping):
            state = str(details.get("current", details.get("state", "alarm"))).lower()
        props = self.properties
        group_id = str(props[self.GROUP])
        group = self.runtime.resource_by_refid(group_id)
        if not isinstance(group, AutoScalingGroupBase):
            raise EntityNotFound(f'Alarm {self.name} could not find scaling group named '
                                 f'"{group_id}"')
        LOG.info("alarm %s (state %s): adjusting group %s by %s", self.name, state,
                 group.name, props[self.ADJUSTMENT])
        cooldown = props[self.COOLDOWN]
        await group.adjust(props[self.ADJUSTMENT], props[self.TYPE],
                           min_adjustment_step=props[self.MIN_STEP],
                           cooldown_secs=None if cooldown is None else float(cooldown))
        return None

    def resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        if name in ("alarm_url", "AlarmUrl"):
            return self.runtime.signal_url(self.name, "cfn_signal")
        if name == "signal_url":
            return self.runtime.signal_url(self.name, "heat")
        return None


class ScalingPolicy(ScalingPolicyBase):
    type_name = "OS::Heat::ScalingPolicy"
    support_status = SupportStatus()
    description = ("A resource to manage scaling of `OS::Heat::AutoScalingGroup`.\n\n"
                   "Defines the scaling adjustment applied to the group when the policy "
                   "is signalled, and its cooldown.")
    properties_schema = {
        "auto_scaling_group_id": Property("string", "AutoScaling group ID to apply policy "
                                          "to.", required=True),
        "scaling_adjustment": Property("number", "Size of adjustment.", required=True,
                                       update_allowed=True),
        "adjustment_type": Property(
            "string", "Type of adjustment (absolute or percentage).", required=True,
            constraints=[AllowedValues(capacity.ADJUSTMENT_TYPES)], update_allowed=True),
        "cooldown": Property("number", "Cooldown period, in seconds.", update_allowed=True),
        "min_adjustment_step": Property(
            "integer", "Minimum number of resources that are added or removed when the "
            "AutoScaling group scales up or down. This can be used only when specifying "
            "percent_change_in_capacity for the adjustment_type property.",
            constraints=[Range(min=0)], update_allowed=True),
    }
    attributes_schema = {
        "alarm_url": Attribute("A signed url to handle the alarm.", "string"),
        "signal_url": Attribute("A url to handle the alarm using native API.", "string",
                                SupportStatus(version="5.0.0")),
    }
