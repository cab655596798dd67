"""OS::Heat::TestResource: a resource with knobs for exercising the engine.

Waiting is a deadline carried in the token, never a sleep: ``check_*_complete`` answers
"not yet" until the deadline passes and :meth:`TestResource.poll_delay` tells the scheduler
exactly how long that is, so a hundred resources waiting one second finish together.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.resources.base import (
    Attribute,
    Properties,
    Property,
    Resource,
    ResourceFailure,
    SupportStatus,
    Token,
)
from kiln.template.constraints import CustomConstraint, register_custom_constraint
from kiln.template.definitions import ResourceDefinition

# Heat's test_constr sleeps while validating; Kiln accepts the value without the delay.
register_custom_constraint("test_constr", lambda value, context: True)


def _action_wait(description: str) -> Property:
    return Property("number", description, update_allowed=True)


class TestResource(Resource):
    __test__ = False  # not a pytest test class, whatever its name says

    type_name = "OS::Heat::TestResource"
    #: the stored value is often a hidden parameter's (Heat keeps it in plain text)
    secret_data = frozenset({"value"})
    side_effect_free = True
    support_status = SupportStatus(version="5.0.0")
    description = (
        "A resource which stores the string value that was provided.\n"
        "\n"
        "This resource is to be used only for testing.\n"
        "It has control knobs such as 'update_replace', 'fail', 'wait_secs'.")
    properties_schema = {
        "constraint_prop_secs": Property(
            "number", "Number value for delay during resolve constraint.", default=0,
            update_allowed=True, constraints=[CustomConstraint(name="test_constr")],
            support_status=SupportStatus(version="6.0.0")),
        "attr_wait_secs": Property(
            "number", "Number value for timeout during resolving output value.", default=0,
            update_allowed=True, support_status=SupportStatus(version="6.0.0")),
        "value": Property("string", "The input string to be stored.", default="test_string",
                          update_allowed=True),
        "update_replace_value": Property(
            "string", "Some value that can be stored but can not be updated.",
            support_status=SupportStatus(version="7.0.0")),
        "fail": Property(
            "boolean", "Value which can be set to fail the resource operation to test "
            "failure scenarios.", default=False, update_allowed=True),
        "update_replace": Property(
            "boolean", "Value which can be set to trigger update replace for the particular "
            "resource.", default=False, update_allowed=True),
        "wait_secs": Property("number", "Seconds to wait after an action (-1 is infinite).",
                              default=0, update_allowed=True),
        "action_wait_secs": Property(
            "map", "Options for simulating waiting.", update_allowed=True, schema={
                "create": _action_wait(
                    "Seconds to wait after a create. Defaults to the global wait_secs."),
                "update": _action_wait(
                    "Seconds to wait after an update. Defaults to the global wait_secs."),
                "delete": _action_wait(
                    "Seconds to wait after a delete. Defaults to the global wait_secs."),
            }),
        "client_name": Property("string", "Client to poll.", default="", update_allowed=True),
        "entity_name": Property("string", "Client entity to poll.", default="",
                                update_allowed=True),
    }
    attributes_schema = {
        "output": Attribute("The string that was stored. This value is also available by "
                            "referencing the resource."),
    }

    @staticmethod
    def _wait_secs(props: Properties, action: str) -> float:
        per_action = props["action_wait_secs"]
        secs = per_action.get(action) if per_action else None
        return float(props["wait_secs"] if secs is None else secs)

    def _start(self, props: Properties, action: str, wait: float | None = None) -> Token:
        return {"started": self.runtime.now(),
                "wait": self._wait_secs(props, action) if wait is None else wait,
                "fail": bool(props["fail"]) and action != "delete"}

    def _done(self, token: Token) -> bool:
        wait = float(token["wait"])
        # a hair of tolerance: sleeping exactly poll_delay() must be enough
        if wait < 0 or self.runtime.now() < float(token["started"]) + wait - 1e-6:
            return False
        if token["fail"]:
            raise ResourceFailure(f"Test Resource failed {self.name}", exc_type="ValueError")
        return True

    def poll_delay(self, token: Token) -> float | None:
        if not isinstance(token, Mapping) or float(token["wait"]) < 0:
            return None
        return max(0.0, float(token["started"]) + float(token["wait"]) - self.runtime.now())

    async def handle_create(self) -> Token:
        if not self.properties["fail"]:
            self.data["value"] = self.properties["value"]
            self.resource_id = self.physical_resource_name()
        return self._start(self.properties, "create")

    async def check_create_complete(self, token: Token) -> bool:
        return self._done(token)

    def needs_replace(self, prop_diff: Mapping[str, Any]) -> bool:
        if "value" in prop_diff:
            replace = prop_diff.get("update_replace", self.properties["update_replace"])
            if replace:
                return True
        return super().needs_replace(prop_diff)

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        if prop_diff.get("value"):
            if not new_properties["fail"]:
                self.data["value"] = prop_diff["value"]
            return self._start(new_properties, "update")
        return self._start(new_properties, "update", wait=0.0)

    async def check_update_complete(self, token: Token) -> bool:
        return self._done(token)

    async def handle_delete(self) -> Token:
        return self._start(self.properties, "delete")

    async def check_delete_complete(self, token: Token) -> bool:
        return self._done(token)

    async def handle_check(self) -> Token:
        if not self.resource_id:
            raise ResourceFailure("Resource not created", exc_type="Exception")
        return None

    def resolve_attribute(self, name: str) -> Any:
        return self.data.get("value")
