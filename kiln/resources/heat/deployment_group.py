"""OS::Heat::SoftwareDeploymentGroup and OS::Heat::StructuredDeploymentGroup: one
deployment of a config per server of a ``servers`` map.

As in Heat, the group is a ResourceGroup whose members are named by the map's keys (each
an OS::Heat::SoftwareDeployment, or StructuredDeployment, of ``servers[name]`` with the
group's other properties), in a child stack. Each member is an ordinary deployment: its
server's agent finds it in its metadata and signals it, and the member's
``deploy_stack_id`` / ``deploy_resource_name`` name the child stack and the key.

``deploy_stdouts``, ``deploy_stderrs`` and ``deploy_status_codes`` are maps of member name
to that member's ``deploy_stdout``, ... ; any other attribute name is a config output
(``{get_attr: [group, result]}`` is ``{server1: ..., server2: ...}``), as in Heat. The child
template carries an output per standard attribute and per output the config declares
(looked up before the child is made, since the config is only known by id).

``update_policy`` works as in Heat 27, with the ResourceGroup's machinery: ``batch_create``
creates the deployments ``max_batch_size`` at a time, and ``rolling_update`` applies any
property change ``max_batch_size`` deployments at a time (Heat rolls on every change, not
only the member definition's; ``min_in_service`` is 0), ``pause_time`` seconds between
batches. Members are the ``servers`` keys in the map's order; an update changes the last
ones first, as Heat's rolling update does.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from typing import Any, ClassVar

from kiln.errors import EntityNotFound, InvalidTemplateAttribute
from kiln.resources.base import (
    Attribute,
    Properties,
    Property,
    SupportStatus,
    Token,
    select_path,
)
from kiln.resources.heat.resource_group import ResourceGroup
from kiln.resources.heat.software_deployment import (
    STANDARD_ATTRIBUTES,
    SoftwareDeployment,
    StructuredDeployment,
)
from kiln.template.constraints import Range
from kiln.template.definitions import ResourceDefinition

#: the group's map attributes and the member attribute each one collects
MAP_ATTRIBUTES = {"deploy_stdouts": "deploy_stdout", "deploy_stderrs": "deploy_stderr",
                  "deploy_status_codes": "deploy_status_code"}
OUTPUT_NAMES_KEY = "config_output_names"
#: what Heat's properties give for an unset property that has no default
_EMPTY: dict[str, Callable[[], Any]] = {"string": str, "map": dict, "list": list}


def _update_policy_schema() -> dict[str, Property]:
    rolling = {
        "max_batch_size": Property("integer",
                                   "The maximum number of deployments to replace at once.",
                                   default=1, constraints=[Range(min=1)]),
        "pause_time": Property("number",
                               "The number of seconds to wait between batches of updates.",
                               default=0, constraints=[Range(min=0)]),
    }
    batch_create = ResourceGroup.update_policy_schema["batch_create"]
    return {"rolling_update": Property("map", "", schema=rolling,
                                       support_status=SupportStatus(version="7.0.0")),
            "batch_create": Property("map", batch_create.description,
                                     schema=batch_create.schema,
                                     support_status=SupportStatus(version="7.0.0"))}


class SoftwareDeploymentGroup(ResourceGroup):
    type_name = "OS::Heat::SoftwareDeploymentGroup"
    member_type: ClassVar[str] = "OS::Heat::SoftwareDeployment"
    support_status = SupportStatus(version="5.0.0")
    description = (
        "This resource associates a group of servers with some configuration.\n\n"
        "The configuration is to be deployed to all servers in the group.\n\n"
        "The properties work in a similar way to OS::Heat::SoftwareDeployment,\n"
        "and in addition to the attributes documented, you may pass any\n"
        "attribute supported by OS::Heat::SoftwareDeployment, including those\n"
        "exposing arbitrary outputs, and return a map of deployment names to\n"
        "the specified attribute.")
    update_policy_schema: ClassVar[Mapping[str, Property]] = _update_policy_schema()
    properties_schema = {
        "servers": Property(
            "map",
            "A map of names and server IDs to apply configuration to. The name is arbitrary "
            "and is used as the Heat resource name for the corresponding deployment.",
            required=True, update_allowed=True),
        **{k: SoftwareDeployment.properties_schema[k]
           for k in ("config", "input_values", "actions", "name", "signal_transport")},
    }
    attributes_schema = {
        "deploy_stdouts": Attribute(
            "A map of Nova names and captured stdouts from the configuration execution to "
            "each server.", "map"),
        "deploy_stderrs": Attribute(
            "A map of Nova names and captured stderrs from the configuration execution to "
            "each server.", "map"),
        "deploy_status_codes": Attribute(
            "A map of Nova names and returned status code from the configuration "
            "execution.", "map"),
    }

    # -- the child template ----------------------------------------------------------------
    def _count(self, props: Properties) -> int:
        return len(props["servers"] or {})

    def _update_skiplist(self, props: Properties) -> list[str]:
        return []       # no removal policies: members are the servers map's keys

    def _shared(self, props: Properties) -> dict[str, Any]:
        """Every member's properties but its ``server``: each of the group's properties,
        an unset one as its type's empty value (Heat 27 passes the group's ``config`` and
        ``name`` as ``""`` and ``input_values`` as ``{}``, as its preview shows)."""
        empty = {k: _EMPTY.get(p.type, lambda: None) for k, p in self.properties_schema.items()}
        return {k: empty[k]() if v is None else v for k, v in props.items() if k != "servers"}

    def _target(self, props: Properties) -> dict[str, Any]:
        servers = dict(props["servers"] or {})
        return {"count": len(servers), "servers": servers, "shared": self._shared(props)}

    def _member(self, target: Mapping[str, Any], name: str) -> dict[str, Any]:
        return {"type": self.member_type,
                "properties": {**target["shared"], "server": target["servers"][name]}}

    def _names(self, target: Mapping[str, Any], capacity: int,
               skipped: Collection[str]) -> list[str]:
        return [str(name) for name in target["servers"]][:capacity]

    def _member_type(self, target: Mapping[str, Any]) -> str:
        return self.member_type

    def _rolls(self, old: Properties, new: Properties, prop_diff: Mapping[str, Any]) -> bool:
        return bool(prop_diff)

    def _member_attribute_names(self, member_type: str) -> list[str]:
        return [*STANDARD_ATTRIBUTES, *json.loads(self.data.get(OUTPUT_NAMES_KEY) or "[]")]

    async def _remember_outputs(self, props: Properties) -> None:
        """The config's declared outputs, which become member attributes to collect."""
        names: list[str] = []
        if props["config"]:
            try:
                config = await self.runtime.software_configs.get(props["config"])
            except EntityNotFound:
                config = {}
            names = [o["name"] for o in config.get("outputs") or []
                     if o.get("name") not in STANDARD_ATTRIBUTES]
        self.data[OUTPUT_NAMES_KEY] = json.dumps(names)

    async def handle_create(self) -> Token:
        await self._remember_outputs(self.properties)
        return await super().handle_create()

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        await self._remember_outputs(new_properties)
        return await super().handle_update(new_definition, new_properties, prop_diff)

    # -- attributes ---------------------------------------------------------------------
    def get_attribute(self, name: str, *path: Any) -> Any:
        member_attr = MAP_ATTRIBUTES.get(name, name)
        if name == "show":
            return None
        if member_attr not in self._member_attribute_names(self.member_type):
            raise InvalidTemplateAttribute(
                f"The Referenced Attribute ({self.name} {name}) is incorrect.")
        values = self._member_values(member_attr) if self.nested_outputs() else []
        by_name = dict(zip(self.member_names(), values, strict=False))
        return select_path(by_name, path)

    def all_attributes(self) -> dict[str, Any]:
        return {name: self.get_attribute(name) for name in MAP_ATTRIBUTES}


class StructuredDeploymentGroup(SoftwareDeploymentGroup):
    type_name = "OS::Heat::StructuredDeploymentGroup"
    member_type = "OS::Heat::StructuredDeployment"
    description = (
        "This resource associates a group of servers with some configuration.\n\n"
        "This resource works similar as OS::Heat::SoftwareDeploymentGroup, but for\n"
        "structured resources.")
    properties_schema = {
        **SoftwareDeploymentGroup.properties_schema,
        "input_key": StructuredDeployment.properties_schema["input_key"],
        "input_values_validate":
            StructuredDeployment.properties_schema["input_values_validate"],
    }


class SoftwareDeployments(SoftwareDeploymentGroup):
    """Heat 27's hidden old name of SoftwareDeploymentGroup: templates (and
    heat-tempest-plugin's deployment tests) still use it; never listed."""

    type_name = "OS::Heat::SoftwareDeployments"
    support_status = SupportStatus(
        status="HIDDEN", message="Please use OS::Heat::SoftwareDeploymentGroup instead.",
        version="7.0.0", previous_status=SupportStatus(status="DEPRECATED",
                                                       version="2014.2"))


class StructuredDeployments(StructuredDeploymentGroup):
    """Heat 27's hidden old name of StructuredDeploymentGroup; never listed."""

    type_name = "OS::Heat::StructuredDeployments"
    support_status = SupportStatus(
        status="HIDDEN", message="Please use OS::Heat::StructuredDeploymentGroup instead.",
        version="7.0.0", previous_status=SupportStatus(status="DEPRECATED",
                                                       version="2014.2"))
