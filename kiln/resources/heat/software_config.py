"""OS::Heat::SoftwareConfig and its variants: immutable configs kept by the engine.

The config itself lives in the engine's software_config table (reached through
``runtime.software_configs``), the resource only holds its id. Any change to the
definition replaces the resource, because stored configs never change.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import yaml

from kiln.errors import EntityNotFound, StackValidationFailed
from kiln.resources.base import Attribute, Property, Resource, SupportStatus, Token
from kiln.template.constraints import AllowedValues, Length, str_to_bool, str_to_num

IO_TYPES = ("String", "Number", "CommaDelimitedList", "Json", "Boolean")

INPUT_SCHEMA = {
    "name": Property("string", "Name of the input.", required=True),
    "description": Property("string", "Description of the input."),
    "type": Property("string", "Type of the value of the input.", default="String",
                     constraints=[AllowedValues(IO_TYPES)]),
    "default": Property("any", "Default value for the input if none is specified."),
    "replace_on_change": Property(
        "boolean",
        "Replace the deployment instead of updating it when the input value changes.",
        default=False),
}
OUTPUT_SCHEMA = {
    "name": Property("string", "Name of the output.", required=True),
    "description": Property("string", "Description of the output."),
    "type": Property("string", "Type of the value of the output.", default="String",
                     constraints=[AllowedValues(IO_TYPES)]),
    "error_output": Property(
        "boolean",
        "Denotes that the deployment is in an error state if this output has a value.",
        default=False),
}

GROUP = Property(
    "string",
    "Namespace to group this software config by when delivered to a server. This may imply "
    "what configuration tool is going to perform the configuration.",
    default="Heat::Ungrouped")
OPTIONS = Property(
    "map",
    "Map containing options specific to the configuration management tool used by this "
    "resource.")
INPUTS = Property(
    "list", "Schema representing the inputs that this software config is expecting.",
    schema=Property("map", schema=INPUT_SCHEMA))
OUTPUTS = Property(
    "list", "Schema representing the outputs that this software config will produce.",
    schema=Property("map", schema=OUTPUT_SCHEMA))
CONFIG_STRING = Property(
    "string",
    "Configuration script or manifest which specifies what actual configuration is "
    "performed.")


_EMPTY_DEFAULTS: dict[str, Any] = {"String": "", "Number": 0, "CommaDelimitedList": [],
                                   "Json": {}, "Boolean": False}


def typed_default(io_type: str, value: Any) -> Any:
    """An input's default as Heat stores it: converted to the input's type, and the
    type's empty value when none was given."""
    if value is None:
        return _fresh_empty(io_type)
    try:
        if io_type == "Number":
            return str_to_num(value)
        if io_type == "Boolean":
            return str_to_bool(value)
        if io_type == "CommaDelimitedList" and isinstance(value, str):
            return [v.strip() for v in value.split(",")] if value else []
    except ValueError:
        return value
    return value


def _fresh_empty(io_type: str) -> Any:
    empty = _EMPTY_DEFAULTS.get(io_type)
    return list(empty) if isinstance(empty, list) else dict(empty) if isinstance(
        empty, dict) else empty


def stored_inputs(items: Any) -> list[dict[str, Any]]:
    """Inputs as Heat keeps them for a config resource: every key present (a missing
    description is ``""``, a missing default the type's empty value), and
    ``replace_on_change`` only when true."""
    out = []
    for item in items or []:
        entry = {"name": item["name"], "description": item.get("description") or "",
                 "type": item["type"],
                 "default": typed_default(item["type"], item.get("default"))}
        if item.get("replace_on_change"):
            entry["replace_on_change"] = True
        out.append(entry)
    return out


def stored_outputs(items: Any) -> list[dict[str, Any]]:
    return [{"name": item["name"], "description": item.get("description") or "",
             "type": item["type"], "error_output": bool(item.get("error_output"))}
            for item in items or []]


class SoftwareConfig(Resource):
    type_name = "OS::Heat::SoftwareConfig"
    support_status = SupportStatus(version="2014.1")
    description = (
        "A resource for describing and storing software configuration.\n\n"
        "The software_configs API which backs this resource creates immutable\n"
        "configs, so any change to the template resource definition will result\n"
        "in a new config being created, and the old one being deleted.\n\n"
        "Configs can be defined in the same template which uses them, or they can\n"
        "be created in one stack, and passed to another stack via a parameter.\n\n"
        "A config resource can be referenced in other resource properties which\n"
        "are config-aware. This includes the properties OS::Nova::Server user_data,\n"
        "OS::Heat::SoftwareDeployment config and OS::Heat::MultipartMime parts\n"
        "config.\n\n"
        "Along with the config script itself, this resource can define schemas for\n"
        "inputs and outputs which the config script is expected to consume and\n"
        "produce. Inputs and outputs are optional and will map to concepts which\n"
        "are specific to the configuration tool being used.")
    properties_schema = {
        "group": GROUP, "config": CONFIG_STRING, "options": OPTIONS,
        "inputs": INPUTS, "outputs": OUTPUTS,
    }
    attributes_schema = {
        "config": Attribute("The config value of the software config.", "string"),
    }

    def config_to_store(self) -> dict[str, Any]:
        """The software-config fields this resource stores (name is added by create)."""
        props = self.properties
        return {"group": props["group"], "config": props["config"],
                "options": props["options"] or {}, "inputs": stored_inputs(props["inputs"]),
                "outputs": stored_outputs(props["outputs"])}

    async def handle_create(self) -> Token:
        fields = {"group": "Heat::Ungrouped", "config": None, "options": {}, "inputs": [],
                  "outputs": [], **self.config_to_store()}
        stored = await self.runtime.software_configs.create(
            name=self.physical_resource_name(), **fields)
        self.resource_id = str(stored["id"])
        # attributes are read synchronously; the stored config never changes, so keep it
        self.data["config"] = json.dumps(stored.get("config", fields["config"]))
        return None

    async def handle_delete(self) -> Token:
        if self.resource_id is not None:
            with contextlib.suppress(EntityNotFound):
                await self.runtime.software_configs.delete(self.resource_id)
        return None

    def stored_config(self) -> Any:
        raw = self.data.get("config")
        return None if raw is None or not self.resource_id else json.loads(raw)

    def resolve_attribute(self, name: str) -> Any:
        return self.stored_config() if name == "config" else None


class StructuredConfig(SoftwareConfig):
    type_name = "OS::Heat::StructuredConfig"
    description = (
        "A resource which has same logic with OS::Heat::SoftwareConfig.\n\n"
        "This resource is like OS::Heat::SoftwareConfig except that the config\n"
        "property is represented by a Map rather than a String.\n\n"
        "This is useful for configuration tools which use YAML or JSON as their\n"
        "configuration syntax. The resulting configuration is transferred,\n"
        "stored and returned by the software_configs API as parsed JSON.")
    properties_schema = {
        "group": GROUP, "options": OPTIONS, "inputs": INPUTS, "outputs": OUTPUTS,
        "config": Property("map", "Map representing the configuration data structure which "
                                  "will be serialized to JSON format."),
    }


class CloudConfig(SoftwareConfig):
    type_name = "OS::Heat::CloudConfig"
    description = (
        "A configuration resource for representing cloud-init cloud-config.\n\n"
        "This resource allows cloud-config YAML to be defined and stored by the\n"
        "config API. Any intrinsic functions called in the config will be resolved\n"
        "before storing the result.\n\n"
        "This resource will generally be referenced by OS::Nova::Server user_data,\n"
        "or OS::Heat::MultipartMime parts config. Since cloud-config is boot-only\n"
        "configuration, any changes to the definition will result in the\n"
        "replacement of all servers which reference it.")
    properties_schema = {
        "cloud_config": Property("map", "Map representing the cloud-config data structure "
                                        "which will be formatted as YAML."),
    }

    def config_to_store(self) -> dict[str, Any]:
        body = yaml.safe_dump(self.properties["cloud_config"])
        return {"group": "Heat::Ungrouped", "config": "#cloud-config\n" + body}


class SoftwareComponent(SoftwareConfig):
    type_name = "OS::Heat::SoftwareComponent"
    support_status = SupportStatus(version="2014.2")
    description = (
        "A resource for describing and storing a software component.\n\n"
        "This resource is similar to OS::Heat::SoftwareConfig. In contrast to\n"
        "SoftwareConfig which allows for storing only one configuration (e.g. one\n"
        "script), SoftwareComponent allows for storing multiple configurations to\n"
        "address handling of all lifecycle hooks (CREATE, UPDATE, SUSPEND, RESUME,\n"
        "DELETE) for a software component in one place.\n\n"
        "This resource is backed by the persistence layer and the API of the\n"
        "SoftwareConfig resource, and only adds handling for the additional\n"
        "'configs' property and attribute.")
    properties_schema = {
        "configs": Property(
            "list",
            "The list of configurations for the different lifecycle actions of the "
            "represented software component.",
            required=True, constraints=[Length(min=1)],
            schema=Property("map", schema={
                "actions": Property(
                    "list",
                    "Lifecycle actions to which the configuration applies. The string "
                    "values provided for this property can include the standard resource "
                    "actions CREATE, DELETE, UPDATE, SUSPEND and RESUME supported by Heat.",
                    default=["CREATE", "UPDATE"], schema=Property("string"),
                    constraints=[Length(min=1)]),
                "config": CONFIG_STRING,
                "tool": Property(
                    "string",
                    "The configuration tool used to actually apply the configuration on a "
                    "server. This string property has to be understood by in-instance "
                    "tools running inside deployed servers.",
                    required=True),
            })),
        "inputs": INPUTS, "outputs": OUTPUTS, "options": OPTIONS,
    }

    def validate(self) -> None:
        super().validate()
        seen: set[str] = set()
        for config in self.properties["configs"]:
            actions = config["actions"]
            if any(action in seen for action in actions):
                raise StackValidationFailed(
                    "Defining more than one configuration for the same action in "
                    f'SoftwareComponent "{self.name}" is not allowed.')
            seen.update(actions)

    def config_to_store(self) -> dict[str, Any]:
        props = self.properties
        return {"group": "component", "config": {"configs": props["configs"]},
                "options": props["options"] or {}, "inputs": stored_inputs(props["inputs"]),
                "outputs": stored_outputs(props["outputs"])}

    def resolve_attribute(self, name: str) -> Any:
        # Heat declares only ``config`` but answers only ``configs``, so ``config`` is None
        return None
