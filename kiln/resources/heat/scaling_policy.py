"""OS::Heat::ScalingPolicy: a signal target that resizes an autoscaling group.

A signal (from an alarm, the watcher, ``openstack stack resource signal``, or a POST to
``alarm_url`` / ``signal_url``) asks the group named by ``auto_scaling_group_id`` to
change by ``scaling_adjustment`` of ``adjustment_type``; the group applies its bounds
and cooldown (the policy's ``cooldown`` when set, else the group's). A refused request
(cooldown, scaling already running, no change in size) leaves no event, as in Heat.
The policy's reference is its stack user's id, as Heat's is. ``alarm_url`` is the CFN
API's ``/v1/signal/<ARN>`` pre-signed (EC2 SigV2, POST) with a keypair of the policy's
stack user, made at create and revoked at delete, so a POST to it needs no other
credentials (Heat's ``_get_ec2_signed_url``); ``signal_url`` is the native API's, which
needs a token. The signal is answered at once and the resize runs in the background
(:attr:`signals_in_background`), as Heat runs it in a thread of its own.
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
    SupportStatus,
    Token,
)
from kiln.resources.stack_user import StackUserResource
from kiln.scaling import capacity
from kiln.template.constraints import AllowedValues, Range
from kiln.template.definitions import ResourceDefinition

LOG = logging.getLogger(__name__)
#: the key of :attr:`Resource.data` holding the pre-signed alarm URL (Heat's name)
ALARM_URL = "ec2_signed_url"


class ScalingPolicyBase(StackUserResource):
    """The behaviour both policies share; subclasses name the properties."""

    #: the pre-signed alarm URL is a credential: whoever holds it scales the group
    secret_data = frozenset({ALARM_URL})

    GROUP, ADJUSTMENT, TYPE, COOLDOWN, MIN_STEP = (
        "auto_scaling_group_id", "scaling_adjustment", "adjustment_type", "cooldown",
        "min_adjustment_step")
    PERCENT: ClassVar[str] = capacity.PERCENT_CHANGE_IN_CAPACITY
    signals_in_background = True
    requires_deferred_auth = True  # Heat's SignalResponder

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
        await self._sign_alarm_url()
        return None

    async def _sign_alarm_url(self) -> None:
        """Issue the stack user's keypair and keep the URL pre-signed with it (once: a
        policy made before Kiln signed it gets one at its next update)."""
        if self.data.get(ALARM_URL):
            return
        keypair = await self.runtime.issue_ec2_keypair(self.name)
        self.data["access_key"] = keypair["access_key"]
        self.data[ALARM_URL] = self.runtime.presigned_signal_url(self.name, "cfn_signal",
                                                                 keypair)

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        self.definition = new_definition
        self.properties = new_properties
        await self._sign_alarm_url()
        return None

    async def handle_delete(self) -> Token:
        access_key = self.data.pop("access_key", None)
        self.data.pop(ALARM_URL, None)
        if access_key is not None:
            await self.runtime.delete_ec2_keypair(access_key)
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
            return self.data.get(ALARM_URL)
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
