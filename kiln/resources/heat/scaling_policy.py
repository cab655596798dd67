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

from kiln.resources.base import (
    Attribute,
    Property,
    SupportStatus,
)
from kiln.resources.common.scaling_policy import ScalingPolicyBase
from kiln.scaling import capacity
from kiln.template.constraints import AllowedValues, Range


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
