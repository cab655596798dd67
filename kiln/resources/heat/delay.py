"""OS::Heat::Delay: a pause during chosen actions, as a deadline in the token."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from kiln.resources.base import (
    Properties,
    Property,
    Resource,
    SupportStatus,
    Token,
    UpdateReplace,
)
from kiln.template.constraints import AllowedValues, Range
from kiln.template.definitions import ResourceDefinition

ACTIONS = ("CREATE", "DELETE", "SUSPEND", "RESUME")


class Delay(Resource):
    type_name = "OS::Heat::Delay"
    support_status = SupportStatus(version="11.0.0")
    description = (
        "A resource that pauses for a configurable delay.\n\n"
        "By manipulating the dependency relationships between resources in the\n"
        "template, a delay can be inserted at an arbitrary point during e.g. stack\n"
        "creation or deletion. They delay will occur after any resource that it\n"
        "depends on during CREATE or SUSPEND, and before any resource that it\n"
        "depends on during DELETE or RESUME. Similarly, it will occur before any\n"
        "resource that depends on it during CREATE or SUSPEND, and after any\n"
        "resource thet depends on it during DELETE or RESUME.\n\n"
        "If a non-zero maximum jitter is specified, a random amount of jitter -\n"
        "chosen with uniform probability in the range from 0 to the product of the\n"
        "maximum jitter value and the jitter multiplier (1s by default) - is added\n"
        "to the minimum delay time. This can be used, for example, in the scaled\n"
        "unit of a large scaling group to prevent 'thundering herd' issues.")
    properties_schema = {
        "min_wait": Property(
            "number", "Minimum time in seconds to wait during the specified actions.",
            default=0, update_allowed=True, constraints=[Range(min=0)]),
        "max_jitter": Property(
            "number", "Maximum jitter to add to the minimum wait time.",
            default=0, update_allowed=True, constraints=[Range(min=0)]),
        "jitter_multiplier": Property(
            "number", "Number of seconds to multiply the maximum jitter value by.",
            default=1.0, update_allowed=True, constraints=[Range(min=0)]),
        "actions": Property(
            "list", "Actions during which the delay will occur.", default=["CREATE"],
            update_allowed=True, constraints=[AllowedValues(ACTIONS)]),
    }

    def _start(self, action: str) -> Token:
        props = self.properties
        wait = 0.0
        if action in props["actions"]:
            jitter = float(props["max_jitter"]) * float(props["jitter_multiplier"])
            wait = float(props["min_wait"]) + jitter * random.random()
        return {"started": self.runtime.now(), "wait": wait}

    def _done(self, token: Token) -> bool:
        # a hair of tolerance: sleeping exactly poll_delay() must be enough
        deadline = float(token["started"]) + float(token["wait"])
        return bool(self.runtime.now() >= deadline - 1e-6)

    def poll_delay(self, token: Token) -> float | None:
        if not isinstance(token, dict):
            return None
        return max(0.0, float(token["started"]) + float(token["wait"]) - self.runtime.now())

    async def handle_create(self) -> Token:
        return self._start("CREATE")

    async def check_create_complete(self, token: Any) -> bool:
        return self._done(token)

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        """Heat 27's Delay has no update of its own: its properties say update_allowed
        (the preview shows "updated"), but a changed value replaces the resource, with
        Heat's words for it (seen on the peer). A template that only restates a value
        changes nothing and ends UPDATE_COMPLETE."""
        if prop_diff:
            raise UpdateReplace(status_reason=f"The Resource {self.name} requires replacement.")
        return None

    async def handle_delete(self) -> Token:
        return self._start("DELETE")

    async def check_delete_complete(self, token: Any) -> bool:
        return self._done(token)

    async def handle_suspend(self) -> Token:
        return self._start("SUSPEND")

    async def check_suspend_complete(self, token: Any) -> bool:
        return self._done(token)

    async def handle_resume(self) -> Token:
        return self._start("RESUME")

    async def check_resume_complete(self, token: Any) -> bool:
        return self._done(token)
