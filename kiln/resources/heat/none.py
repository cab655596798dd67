"""OS::Heat::None: a placeholder that can stand in for any resource type (the
behaviour is :mod:`kiln.resources.common.placeholder`'s)."""

from __future__ import annotations

from kiln.resources.base import SupportStatus
from kiln.resources.common.placeholder import Placeholder


class NoneResource(Placeholder):
    type_name = "OS::Heat::None"
    support_status = SupportStatus(version="5.0.0")
    description = (
        "Enables easily disabling certain resources via the resource_registry.\n"
        "\n"
        "It does nothing, but can effectively stub out any other resource because it\n"
        "will accept any properties and return any attribute (as None). Note this\n"
        "resource always does nothing on update (e.g it is not replaced even if a\n"
        "change to the stubbed resource properties would cause replacement).")
