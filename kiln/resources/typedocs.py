"""The ``resource_types`` API bodies, generated from a plugin's declarations.

Heat derives the schema body and the "initial template" of a type from the same schemas
that validate templates; so does this module, so the documentation cannot drift from what
Kiln accepts. Shapes (key names, order, quirks such as ``[{}]`` for a constraint HOT
parameters cannot express) follow Heat 27's responses.
"""

from __future__ import annotations

import inspect
from typing import Any

from kiln.errors import HTTPBadRequest
from kiln.resources.base import Resource
from kiln.resources.schema import Attribute, Property
from kiln.template.constraints import AllowedPattern, AllowedValues, Length, Range

NO_DESCRIPTION = "No description available"

_HOT_PARAM_TYPES = {"integer": "number", "number": "number", "string": "string",
                    "boolean": "boolean", "map": "json", "list": "comma_delimited_list",
                    # Heat fails (500) on an ``any`` property; a json parameter accepts it
                    "any": "json"}
_CFN_PARAM_TYPES = {"integer": "Number", "number": "Number", "string": "String",
                    "boolean": "Boolean", "map": "Json", "list": "CommaDelimitedList",
                    "any": "Json"}


def _visible(status_holder: Property | Attribute) -> bool:
    return status_holder.support_status.status != "HIDDEN"


def type_description(cls: type[Resource]) -> str:
    """The type's description as ``with_description`` shows it."""
    text = cls.description or inspect.cleandoc(cls.__doc__ or "")
    return text or NO_DESCRIPTION


def schema_body(type_name: str, cls: type[Resource], *,
                with_description: bool = False) -> dict[str, Any]:
    """Body of ``GET /resource_types/{type}``."""
    props = {name: prop.to_dict() for name, prop in cls.properties_schema.items()
             if prop.implemented and _visible(prop)}
    attrs = {name: attr.to_dict() for name, attr in cls.full_attributes_schema().items()
             if _visible(attr)}
    body: dict[str, Any] = {
        "resource_type": type_name,
        "properties": props,
        "attributes": attrs,
        "support_status": cls.support_status.to_dict(),
    }
    if with_description:
        body["description"] = type_description(cls)
    return body


def template_body(type_name: str, cls: type[Resource], template_type: str = "cfn"
                  ) -> dict[str, Any]:
    """Body of ``GET /resource_types/{type}/template``: a provider template that mirrors
    the type, properties as parameters and attributes as outputs."""
    if template_type not in ("cfn", "hot"):
        raise HTTPBadRequest(f'Template type is not supported: Invalid template type '
                             f'"{template_type}", valid types are: cfn, hot.')
    hot = template_type == "hot"
    res_name = cls.__name__
    schema = {n: p for n, p in cls.properties_schema.items() if _visible(p) and p.implemented}
    params = {n: (_hot_param(p) if hot else _cfn_param(p)) for n, p in schema.items()}
    props: dict[str, Any] = {n: _prop_ref(n, p, hot) for n, p in schema.items()}
    outputs: dict[str, Any] = {}
    for name, attr in cls.full_attributes_schema().items():
        if not _visible(attr):
            continue
        if hot:
            outputs[name] = {"value": {"get_attr": [res_name, name]},
                             "description": attr.description}
        else:
            outputs[name] = {"Value": {"Fn::GetAtt": [res_name, name]},
                             "Description": attr.description}
    description = f"Initial template of {res_name}"
    if hot:
        outputs["OS::stack_id"] = {"value": {"get_resource": res_name}}
        return {"heat_template_version": "2016-10-14", "description": description,
                "parameters": params, "outputs": outputs,
                "resources": {res_name: {"type": type_name, "properties": props}}}
    outputs["OS::stack_id"] = {"Value": {"Ref": res_name}}
    return {"HeatTemplateFormatVersion": "2012-12-12", "Description": description,
            "Parameters": params,
            "Resources": {res_name: {"Type": type_name, "Properties": props}},
            "Outputs": outputs}


def _prop_ref(name: str, prop: Property, hot: bool) -> Any:
    if hot:
        return {"get_param": name}
    if prop.type == "list":
        return {"Fn::Split": [",", {"Ref": name}]}
    return {"Ref": name}


def _hot_param(prop: Property) -> dict[str, Any]:
    out: dict[str, Any] = {"type": _HOT_PARAM_TYPES[prop.type]}
    if prop.description is not None:
        out["description"] = prop.description
    if prop.default is not None:
        out["default"] = prop.default
    if prop.constraints:
        rendered: list[dict[str, Any]] = []
        for c in prop.constraints:
            item: dict[str, Any] = {}
            if isinstance(c, Range):  # Length is a Range too
                bounds = {k: v for k, v in (("min", c.min), ("max", c.max)) if v is not None}
                item["length" if isinstance(c, Length) else "range"] = bounds
            elif isinstance(c, AllowedValues):
                item["allowed_values"] = list(c.allowed)
            elif isinstance(c, AllowedPattern):
                item["allowed_pattern"] = c.pattern
            rendered.append(item)
        out["constraints"] = rendered
    return out


def _cfn_param(prop: Property) -> dict[str, Any]:
    out: dict[str, Any] = {"Type": _CFN_PARAM_TYPES[prop.type]}
    if prop.description is not None:
        out["Description"] = prop.description
    if prop.default is not None:
        out["Default"] = prop.default
    for c in prop.constraints:
        if isinstance(c, Length):
            if c.min is not None:
                out["MinLength"] = c.min
            if c.max is not None:
                out["MaxLength"] = c.max
        elif isinstance(c, Range):
            if c.min is not None:
                out["MinValue"] = c.min
            if c.max is not None:
                out["MaxValue"] = c.max
        elif isinstance(c, AllowedValues):
            out["AllowedValues"] = list(c.allowed)
        elif isinstance(c, AllowedPattern):
            out["AllowedPattern"] = c.pattern
    if prop.type == "boolean":
        out["AllowedValues"] = ["True", "true", "False", "false"]
    return out
