"""What OS::Heat::ScalingPolicy and AWS::AutoScaling::ScalingPolicy share: a signal
target that asks its group (an
:class:`~kiln.resources.common.autoscaling_group.AutoScalingGroupBase`) to change
size, with a pre-signed alarm URL made at create and revoked at delete. Each type names
the properties in its own spelling.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, ClassVar

from kiln.errors import EntityNotFound, StackValidationFailed
from kiln.resources.base import Properties, Token
from kiln.resources.common.autoscaling_group import AutoScalingGroupBase
from kiln.resources.common.stack_user import StackUserResource
from kiln.scaling import capacity
from kiln.template.definitions import ResourceDefinition

LOG = logging.getLogger(__name__)
#: the key of :attr:`Resource.data` holding the pre-signed alarm URL (Heat's name)
ALARM_URL = "ec2_signed_url"


class ScalingPolicyBase(StackUserResource):
    """The behaviour both policies share; subclasses name the properties."""

    #: the pre-signed alarm URL is a credential: whoever holds it scales the group
    secret_data = frozenset({ALARM_URL})

    GROUP, ADJUSTMENT, TYPE, COOLDOWN, MIN_STEP = (
        "auto_scaling_group_id",
        "scaling_adjustment",
        "adjustment_type",
        "cooldown",
        "min_adjustment_step",
    )
    PERCENT: ClassVar[str] = capacity.PERCENT_CHANGE_IN_CAPACITY
    signals_in_background = True
    requires_deferred_auth = True  # Heat's SignalResponder

    def validate(self) -> None:
        super().validate()
        props = self.properties
        if props[self.TYPE] != self.PERCENT and props[self.MIN_STEP] is not None:
            raise StackValidationFailed(
                f"{self.MIN_STEP} property should only be specified for {self.TYPE} with "
                f"value {self.PERCENT}."
            )

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
        self.data[ALARM_URL] = self.runtime.presigned_signal_url(self.name, "cfn_signal", keypair)

    async def handle_update(
        self,
        new_definition: ResourceDefinition,
        new_properties: Properties,
        prop_diff: Mapping[str, Any],
    ) -> Token:
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
        state = "alarm"
        if isinstance(details, Mapping):
            state = str(details.get("current", details.get("state", "alarm"))).lower()
        props = self.properties
        group_id = str(props[self.GROUP])
        group = self.runtime.resource_by_refid(group_id)
        if not isinstance(group, AutoScalingGroupBase):
            raise EntityNotFound(
                f'Alarm {self.name} could not find scaling group named "{group_id}"'
            )
        LOG.info(
            "alarm %s (state %s): adjusting group %s by %s",
            self.name,
            state,
            group.name,
            props[self.ADJUSTMENT],
        )
        cooldown = props[self.COOLDOWN]
        await group.adjust(
            props[self.ADJUSTMENT],
            props[self.TYPE],
            min_adjustment_step=props[self.MIN_STEP],
            cooldown_secs=None if cooldown is None else float(cooldown),
        )
        return None

    def resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        if name in ("alarm_url", "AlarmUrl"):
            return self.data.get(ALARM_URL)
        if name == "signal_url":
            return self.runtime.signal_url(self.name, "heat")
        return None
