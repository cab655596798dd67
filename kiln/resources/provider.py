"""Provider templates: a resource type that the environment (or the type name itself)
maps to a template file runs that template as a nested stack.

The plugin class is made per template: its properties are the template's parameters
(every one update_allowed, so a property change updates the child in place), its
attributes the template's outputs plus ``OS::stack_id``. get_resource on it gives the
child stack's ARN, unless the template has an ``OS::stack_id`` output, whose value wins
(as in Heat).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, ClassVar, cast
from urllib.parse import urlsplit

from kiln.errors import (
    InvalidTemplateAttribute,
    KilnError,
    ResourceTypeNotFound,
    StackValidationFailed,
)
from kiln.resources.base import Attribute, Properties, Property, select_path
from kiln.resources.nested import MEMBER_ATTRIBUTES_KEY, NestedStackResource
from kiln.resources.schema import PropertyType
from kiln.template.definitions import ResourceDefinition
from kiln.template.parser import load_data

STACK_ID_OUTPUT = "OS::stack_id"

_PARAM_TO_PROPERTY: dict[str, PropertyType] = {
    "string": "string", "number": "number", "comma_delimited_list": "list", "json": "map",
    "boolean": "boolean", "String": "string", "Number": "number",
    "CommaDelimitedList": "list", "Json": "map", "Boolean": "boolean"}

_CACHE: dict[tuple[str, str], type[TemplateResource]] = {}


def _parse(text: str, name: str) -> Mapping[str, Any]:
    """Parse with the template layer's loader, so a provider template reads exactly as a
    top-level one (an unquoted ``heat_template_version`` date stays a version string);
    its errors name the file as Heat's do (``Error parsing template child.yaml ...``)."""
    try:
        return load_data(text, url=name)
    except KilnError as exc:
        raise StackValidationFailed(str(exc)) from None


def _schemas(template: Mapping[str, Any]) -> tuple[dict[str, Property], dict[str, Attribute]]:
    params = template.get("parameters") or template.get("Parameters") or {}
    outputs = template.get("outputs") or template.get("Outputs") or {}
    props: dict[str, Property] = {}
    for pname, pdef in params.items() if isinstance(params, Mapping) else ():
        pdef = pdef if isinstance(pdef, Mapping) else {}
        ptype = _PARAM_TO_PROPERTY.get(str(pdef.get("type", pdef.get("Type", "string"))),
                                       "string")
        default = pdef.get("default", pdef.get("Default"))
        desc = pdef.get("description", pdef.get("Description"))
        props[pname] = Property(ptype, None if desc is None else str(desc),
                                required=default is None, update_allowed=True,
                                allow_conversion=ptype in ("list", "map"))
    attrs: dict[str, Attribute] = {}
    for oname, odef in outputs.items() if isinstance(outputs, Mapping) else ():
        odef = odef if isinstance(odef, Mapping) else {}
        desc = odef.get("description", odef.get("Description"))
        attrs[oname] = Attribute(None if desc is None else str(desc))
    attrs.setdefault(STACK_ID_OUTPUT, Attribute("The stack id of the nested stack."))
    return props, attrs


class TemplateNotFetched(ResourceTypeNotFound):
    """A provider template the request's ``files`` do not hold, in Heat's words: Kiln
    reads provider templates only from ``files`` (the clients put every local template
    there), so a URL is never fetched, and Heat's text says why it was not."""

    def __init__(self, location: str) -> None:
        scheme = urlsplit(location).scheme
        reason = (f"Failed to retrieve template from {location}"
                  if scheme in ("http", "https") else f"Invalid URL scheme {scheme}")
        super().__init__(f'Could not fetch remote template "{location}": {reason}')


class TemplateResource(NestedStackResource):
    """Base of the per-template classes :func:`provider_class` makes."""

    template_name: ClassVar[str] = ""
    template_body: ClassVar[Mapping[str, Any]] = {}

    def child_template(self, properties: Properties) -> Mapping[str, Any]:
        return self.template_body

    def child_parameters(self, properties: Properties) -> Mapping[str, Any]:
        """Only the values the parent template set: the child applies its own defaults."""
        return {k: properties[k] for k in properties.user_keys if k in properties}

    def needs_update(self, new_definition: ResourceDefinition,
                     prop_diff: Mapping[str, Any]) -> bool:
        """Always (as Heat does): the child stack's own resources decide what changes,
        and the provider template itself may have changed."""
        return True

    def get_attribute(self, name: str, *path: Any) -> Any:
        """None for any name while there is no child stack (one whose create failed
        before the child was made, say), as Heat 27 answers before it looks the name
        up among the template's outputs; ``resource.<name>[.<attribute>]`` is a
        resource of the child stack (its reference, or that attribute), as in Heat."""
        if self.resource_id is None:
            return None
        if name.startswith("resource."):
            return self._member_attribute(name, path)
        return super().get_attribute(name, *path)

    def _member_attribute(self, name: str, path: tuple[Any, ...]) -> Any:
        raw = self.data.get(MEMBER_ATTRIBUTES_KEY)
        known = json.loads(raw) if raw else {"members": [], "values": {}}
        key = name[len("resource."):]
        member = key.partition(".")[0]
        if member not in known["members"]:
            raise InvalidTemplateAttribute(
                f"Member '{member}' not found in group resource '{self.name}'.")
        if "." not in key and path:  # [p, "resource.v", "value"]: the attribute is first
            key, path = f"{key}.{path[0]}", path[1:]
        if key not in known["values"]:
            raise InvalidTemplateAttribute(
                f"The Referenced Attribute ({self.name} {name}) is incorrect.")
        return select_path(known["values"][key], path)

    async def remember_members(self, child: str) -> None:
        values = await self.runtime.nested.member_attributes(self, child)
        if values:
            self.data[MEMBER_ATTRIBUTES_KEY] = json.dumps(values, sort_keys=True,
                                                          default=str)
        else:
            self.data.pop(MEMBER_ATTRIBUTES_KEY, None)

    def resolve_attribute(self, name: str) -> Any:
        if name == STACK_ID_OUTPUT and STACK_ID_OUTPUT not in self.nested_outputs():
            return self.stack_arn()
        return self.nested_output(name)

    def reference_id(self) -> str:
        if self.resource_id is None:
            return self.name
        outputs = self.nested_outputs()
        if STACK_ID_OUTPUT in outputs and outputs[STACK_ID_OUTPUT] is not None:
            return str(outputs[STACK_ID_OUTPUT])
        return self.stack_arn() or self.name


def provider_class(resolved: str, files: Mapping[str, str]) -> type[TemplateResource]:
    """The plugin class for template file ``resolved`` (made once per template text)."""
    text = files.get(resolved)
    if text is None:
        raise TemplateNotFetched(resolved)
    key = (resolved, hashlib.sha256(text.encode("utf-8")).hexdigest())
    cls = _CACHE.get(key)
    if cls is None:
        body = _parse(text, resolved)
        props, attrs = _schemas(body)
        cls = cast(type[TemplateResource], type(
            "TemplateResource", (TemplateResource,),
            {"type_name": resolved, "template_name": resolved, "template_body": body,
             "properties_schema": props, "attributes_schema": attrs}))
        _CACHE[key] = cls
    return cls
