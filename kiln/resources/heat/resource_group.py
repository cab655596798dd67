"""OS::Heat::ResourceGroup: ``count`` copies of one resource definition, in a child stack.

Members are named "0", "1", ... as in Heat; names removed by ``removal_policies`` are
never reused (``removed_rsrc_list``), and shrinking ``count`` removes the highest
names. ``index_var`` (default ``%index%``) in the member properties becomes each
member's name. The child template carries outputs for every member's reference and
attributes, so ``refs``, ``refs_map``, ``attributes``, ``resource.N[.attr]`` and
plain member attribute names (a list over members) are answered from stored outputs.

``update_policy``: ``batch_create.max_batch_size`` and ``rolling_update.max_batch_size``
make each batch of members wait for the previous batch (dependencies in the child
template); ``pause_time`` and ``min_in_service`` are not applied.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kiln.errors import InvalidTemplateAttribute
from kiln.resources.base import Attribute, Properties, Property, SupportStatus, select_path
from kiln.resources.nested import NestedStackResource
from kiln.template.constraints import AllowedValues, Length, Range

NAMES_KEY = "member_names"
BLACKLIST_KEY = "name_blacklist"
REF_OUTPUT = "refs"


def _replace_index(value: Any, index_var: str, index: str) -> Any:
    if isinstance(value, str):
        return value.replace(index_var, index)
    if isinstance(value, list):
        return [_replace_index(v, index_var, index) for v in value]
    if isinstance(value, dict):
        return {k: _replace_index(v, index_var, index) for k, v in value.items()}
    return value


class ResourceGroup(NestedStackResource):
    type_name = "OS::Heat::ResourceGroup"
    support_status = SupportStatus(version="2014.1")
    description = ("Creates one or more identically configured nested resources.\n\n"
                   "In addition to the `refs` attribute, this resource implements "
                   "synthetic attributes that mirror those of the resources in the group.")
    properties_schema = {
        "count": Property("integer", "The number of resources to create.", default=1,
                          constraints=[Range(min=0)], update_allowed=True),
        "index_var": Property(
            "string", "A variable that this resource will use to replace with the current "
            "index of a given resource in the group. Can be used, for example, to customize "
            "the name property of grouped servers in order to differentiate them when "
            "listed with nova client.", default="%index%", constraints=[Length(min=3)],
            support_status=SupportStatus(version="2014.2")),
        "resource_def": Property(
            "map", "Resource definition for the resources in the group. The value of this "
            "property is the definition of a resource just as if it had been declared in "
            "the template itself.", required=True, update_allowed=True, schema={
                "type": Property("string", "The type of the resources in the group.",
                                 required=True),
                "properties": Property("map", "Property values for the resources in the "
                                       "group."),
                "metadata": Property("map", "Supplied metadata for the resources in the "
                                     "group.", support_status=SupportStatus(version="5.0.0")),
            }),
        "removal_policies": Property(
            "list", "Policies for removal of resources on update.", default=[],
            update_allowed=True, support_status=SupportStatus(version="2015.1"),
            schema=Property("map", "Policy to be processed when doing an update which "
                            "requires removal of specific resources.", schema={
                                "resource_list": Property(
                                    "list", "List of resources to be removed when doing an "
                                    "update which requires removal of specific resources.",
                                    default=[]),
                            })),
        "removal_policies_mode": Property(
            "string", 'How to handle changes to removal_policies on update. The default '
            '"append" mode appends to the internal list, "update" replaces it on update.',
            default="append", constraints=[AllowedValues(("append", "update"))],
            update_allowed=True, support_status=SupportStatus(version="10.0.0")),
    }
    attributes_schema = {
        "refs": Attribute("A list of resource IDs for the resources in the group.", "list"),
        "refs_map": Attribute("A map of resource names to IDs for the resources in the "
                              "group.", "map", SupportStatus(version="7.0.0")),
        "attributes": Attribute("A map of resource names to the specified attribute of each "
                                "individual resource. Requires heat_template_version: "
                                "2014-10-16.", "map", SupportStatus(version="2014.2")),
        "removed_rsrc_list": Attribute("A list of removed resource names.", "list",
                                       SupportStatus(version="7.0.0")),
    }

    # -- members ----------------------------------------------------------------------
    def _stored_list(self, key: str) -> list[str]:
        raw = self.data.get(key)
        return list(json.loads(raw)) if raw else []

    def member_names(self) -> list[str]:
        return self._stored_list(NAMES_KEY)

    def _plan_names(self, props: Properties) -> list[str]:
        """Member names after applying removal policies and the count."""
        current = self.member_names()
        refs = self._refs_by_name()
        blacklist = [] if props["removal_policies_mode"] == "update" \
            else self._stored_list(BLACKLIST_KEY)
        for policy in props["removal_policies"] or []:
            for item in policy.get("resource_list") or []:
                item = str(item)
                name = item if item in current else next(
                    (n for n, r in refs.items() if r == item), item)
                if name not in blacklist:
                    blacklist.append(name)
        self.data[BLACKLIST_KEY] = json.dumps(blacklist)
        names = [n for n in current if n not in blacklist]
        count = int(props["count"])
        candidate = 0
        while len(names) < count:
            name = str(candidate)
            if name not in names and name not in blacklist:
                names.append(name)
            candidate += 1
        names = sorted(names, key=lambda n: (int(n) if n.isdigit() else 1 << 62, n))[:count]
        self.data[NAMES_KEY] = json.dumps(names)
        return names

    def _member_attribute_names(self, member_type: str) -> list[str]:
        try:
            from kiln.resources.registry import global_registry

            cls = global_registry().get(member_type)
            return list(cls.attributes_schema)
        except Exception:
            return self._provider_attribute_names(member_type)

    def _provider_attribute_names(self, member_type: str) -> list[str]:
        stack = getattr(self.runtime, "stack", None)
        if stack is None:
            return []
        try:
            from kiln.resources.provider import provider_class

            resolved = stack.environment.registry.resolve(member_type, None)
            return list(provider_class(resolved, stack.files).attributes_schema)
        except Exception:
            return []

    def _batch_size(self, key: str) -> int:
        policy = self.definition.update_policy
        try:
            policy = self.runtime.resolve(policy) if policy else {}
            size = int(((policy or {}).get(key) or {}).get("max_batch_size") or 0)
        except (TypeError, ValueError, AttributeError):
            size = 0
        return size

    def child_template(self, properties: Properties) -> Mapping[str, Any]:
        names = self._plan_names(properties)
        rdef = properties["resource_def"]
        member_type = rdef["type"]
        index_var = properties["index_var"]
        batch = self._batch_size("rolling_update" if self.resource_id else "batch_create")
        resources: dict[str, Any] = {}
        for pos, name in enumerate(names):
            member: dict[str, Any] = {"type": member_type}
            if rdef.get("properties"):
                member["properties"] = _replace_index(rdef["properties"], index_var, name)
            if rdef.get("metadata"):
                member["metadata"] = rdef["metadata"]
            if batch > 0 and pos >= batch:
                start = (pos // batch - 1) * batch
                member["depends_on"] = names[start:start + batch]
            resources[name] = member
        outputs: dict[str, Any] = {REF_OUTPUT: {"value": [{"get_resource": n} for n in names]}}
        for attr in self._member_attribute_names(member_type):
            outputs[f"attr.{attr}"] = {"value": [{"get_attr": [n, attr]} for n in names]}
        return {"heat_template_version": "2015-04-30", "resources": resources,
                "outputs": outputs}

    # -- attributes -------------------------------------------------------------------
    def _refs(self) -> list[Any]:
        return list(self.nested_outputs().get(REF_OUTPUT) or [])

    def _refs_by_name(self) -> dict[str, Any]:
        return dict(zip(self.member_names(), self._refs(), strict=False))

    def _member_values(self, attr: str) -> list[Any]:
        outputs = self.nested_outputs()
        key = f"attr.{attr}"
        if not outputs:
            return []  # no child stack yet: nothing to report, as Heat's None values
        if key not in outputs:
            raise InvalidTemplateAttribute(
                f"The Referenced Attribute ({self.name} {attr}) is incorrect.")
        return list(outputs[key] or [])

    def get_attribute(self, name: str, *path: Any) -> Any:
        names = self.member_names()
        if name == "refs":
            return select_path(self._refs(), path)
        if name == "refs_map":
            return select_path(self._refs_by_name(), path)
        if name == "removed_rsrc_list":
            return select_path(self._stored_list(BLACKLIST_KEY), path)
        if name == "attributes":
            if not path:
                raise InvalidTemplateAttribute(
                    f"The Referenced Attribute ({self.name} attributes) is incorrect.")
            by_name = dict(zip(names, self._member_values(str(path[0])), strict=False))
            return select_path(by_name, path[1:]) if len(path) > 1 else by_name
        if name == "show":
            return None
        if name.startswith("resource."):
            member, _, attr = name[len("resource."):].partition(".")
            if member not in names:
                raise InvalidTemplateAttribute(
                    f"Member '{member}' not found in group resource '{self.name}'.")
            index = names.index(member)
            if not attr and path:
                attr, path = str(path[0]), path[1:]
            if not attr:
                return self._refs()[index] if index < len(self._refs()) else None
            values = self._member_values(attr)
            return select_path(values[index] if index < len(values) else None, path)
        values = self._member_values(name)
        return [select_path(v, path) for v in values] if path else values

    def all_attributes(self) -> dict[str, Any]:
        return {"refs": self._refs(), "refs_map": self._refs_by_name(),
                "removed_rsrc_list": self._stored_list(BLACKLIST_KEY)}
