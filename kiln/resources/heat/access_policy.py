"""OS::Heat::AccessPolicy: which resources an AWS::IAM::User's keys may describe (the
behaviour is :mod:`kiln.resources.common.access_policy`'s)."""

from __future__ import annotations

from kiln.resources.base import SupportStatus
from kiln.resources.common.access_policy import AccessPolicyBase


class AccessPolicy(AccessPolicyBase):
    type_name = "OS::Heat::AccessPolicy"
    support_status = SupportStatus()
    description = (
        "Resource for defining which resources can be accessed by users.\n\n"
        "NOTE: Now this resource is actually associated with an AWS user resource,\n"
        "not any OS:: resource though it is registered under the OS namespace below.\n\n"
        "Resource for defining resources that users are allowed to access by the\n"
        "DescribeStackResource API.")
