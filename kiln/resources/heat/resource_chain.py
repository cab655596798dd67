"""OS::Heat::ResourceChain: a list of resource types, each (unless ``concurrent``)
depending on the one before it, in a child stack. Members are named "0", "1", ... and
all get ``resource_properties``; attributes as ResourceGroup's (``refs``,
``attributes``, ``resource.N[.attr]``), computed per member since the types differ.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from kiln.errors import InvalidTemplateAttribute
from kiln.resources.base import Attribute, Properties, Property, SupportStatus
from kiln.resources.heat.resource_group import NAMES_KEY, ResourceGroup


class ResourceChain(ResourceGroup):
    type_name = "OS::Heat::ResourceChain"
    support_status = SupportStatus(version="6.0.0")
    description = ("Creates one or more resources with the same configuration.\n\n"
                   "The resource types to create are given as a list; each resource is "
                   "treated as depending on the previous one unless concurrent is true.")
    #: unlike ResourceGroup, Heat's chain takes no update_policy keys
    update_policy_schema: ClassVar[Mapping[str, Property]] = {}
    properties_schema = {
        "resources": Property(
            "list", "The list of resource types to create. This list may contain type "
            "names or aliases defined in the resource registry. Specific template names "
            "are not supported.", required=True, update_allowed=True),
        "concurrent": Property(
            "boolean", "If true, the resources in the chain will be created concurrently. "
            "If false or omitted, each resource will be treated as having a dependency on "
            "the previous resource in the list.", default=False),
        "resource_properties": Property(
            "map", "Properties to pass to each resource being created in the chain."),
    }
    attributes_schema = {
        "refs": Attribute("A list of resource IDs for the resources in the chain.", "list"),
        "attributes": Attribute("A map of resource names to the specified attribute of each "
                                "individual resource.", "map"),
    }

    def child_template(self, properties: Properties) -> Mapping[str, Any]:
        types = [str(t) for t in properties["resources"] or []]
        names = [str(i) for i in range(len(types))]
        self.data[NAMES_KEY] = json.dumps(names)
        resources: dict[str, Any] = {}
        outputs: dict[str, Any] = {"refs": {"value": [{"get_resource": n} for n in names]}}
        for i, (name, rtype) in enumerate(zip(names, types, strict=True)):
            member: dict[str, Any] = {"type": rtype}
            if properties["resource_properties"]:
                member["properties"] = dict(properties["resource_properties"])
            if i and not properties["concurrent"]:
                member["depends_on"] = [names[i - 1]]
            resources[name] = member
            for attr in self._member_attribute_names(rtype):
                outputs[f"m.{name}.{attr}"] = {"value": {"get_attr": [name, attr]}}
        return {"heat_template_version": "2015-04-30", "resources": resources,
                "outputs": outputs}

    def _member_values(self, attr: str) -> list[Any]:
        outputs = self.nested_outputs()
        if not outputs:
            return []
        keys = [f"m.{n}.{attr}" for n in self.member_names()]
        if not any(k in outputs for k in keys):
            raise InvalidTemplateAttribute(
                f"The Referenced Attribute ({self.name} {attr}) is incorrect.")
        return [outputs.get(k) for k in keys]

    def get_attribute(self, name: str, *path: Any) -> Any:
        if name in ("refs_map", "removed_rsrc_list"):
            raise InvalidTemplateAttribute(
                f"The Referenced Attribute ({self.name} {name}) is incorrect.")
        return super().get_attribute(name, *path)

    def all_attributes(self) -> dict[str, Any]:
        return {"refs": self._refs()}
