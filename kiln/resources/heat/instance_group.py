"""OS::Heat::InstanceGroup: ``Size`` members built from an
AWS::AutoScaling::LaunchConfiguration (the behaviour, shared with
AWS::AutoScaling::AutoScalingGroup, is :mod:`kiln.resources.common.instance_group`'s).
"""

from __future__ import annotations

from kiln.resources.base import SupportStatus
from kiln.resources.common.instance_group import InstanceGroupBase


class InstanceGroup(InstanceGroupBase):
    type_name = "OS::Heat::InstanceGroup"
    support_status = SupportStatus()
    description = ("An instance group that can scale arbitrary instances.\n\n"
                   "A resource allowing for the creating number of defined with "
                   "AWS::AutoScaling::LaunchConfiguration instances.")
