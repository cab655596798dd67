"""Parameter declarations: the :class:`ParameterSchema` type and the parsing of a
template's ``parameters`` / ``Parameters`` section with Heat's rules and messages.

Split from :mod:`kiln.template.parameters` (which binds values to a stack) because
parsing happens once per template and binding once per stack; everything here is
re-exported there.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from kiln import errors as _e
from kiln.template import constraints as c
from kiln.template.parser import MAX_DEPTH, flow_depth_ok, nesting_exceeds

Family = Literal["hot", "cfn"]

#: HOT type name -> abstract value type used by the constraints
HOT_TYPES = {"string": "string", "number": "number", "comma_delimited_list": "list",
             "json": "map", "boolean": "boolean"}
CFN_TYPES = {"String": "string", "Number": "number", "CommaDelimitedList": "list",
             "Json": "map", "Boolean": "boolean"}

_HOT_KEYS = ("type", "description", "default", "schema", "constraints", "hidden", "label",
             "immutable")
_CFN_KEYS = ("Type", "Default", "NoEcho", "AllowedValues", "AllowedPattern", "MaxLength",
             "MinLength", "MaxValue", "MinValue", "Description", "ConstraintDescription",
             "Label")
_CONSTRAINT_KEYS = ("description", "length", "range", "modulo", "allowed_values",
                    "allowed_pattern", "custom_constraint")

# -- schema ------------------------------------------------------------------------------

@dataclass(frozen=True)
class ParameterSchema:
    """One declared parameter. ``type`` is as written; ``value_type`` the abstract one."""

    name: str
    type: str
    value_type: str
    family: Family = "hot"
    description: str | None = None
    default: Any = None
    hidden: bool = False
    label: str | None = None
    immutable: bool = False
    tags: tuple[Any, ...] | None = None
    constraints: tuple[c.Constraint, ...] = ()
    #: CFN ConstraintDescription (also kept on each constraint as its description)
    constraint_description: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)
    #: set once check_schema passed (the schema is immutable, so once is enough)
    _checked: bool = field(default=False, compare=False, repr=False)

    @property
    def required(self) -> bool:
        return self.default is None

    def with_default(self, default: Any) -> ParameterSchema:
        return _replace(self, default=default, _checked=False)

    def check_schema(self) -> None:
        """Heat's schema check: constraints fit the type, the default satisfies them."""
        if self._checked:
            return
        c.check_applicable(self.constraints, self.value_type, self.type)
        if self.default is None:
            object.__setattr__(self, "_checked", True)
            return
        default = self.default
        if self.value_type == "list":
            if isinstance(default, list):
                default = [str(x) for x in default]
            elif isinstance(default, str):
                default = default.split(",")
            else:
                raise c.InvalidSchemaError(
                    "Default must be a comma-delimited list string: "
                    f"'{type(default).__name__}' object has no attribute 'split'")
        try:
            c.validate_all(self.constraints, default, value_type=self.value_type,
                           type_name=self.type, skip_custom=True)
        except (ValueError, TypeError) as exc:
            raise c.InvalidSchemaError(f"Invalid default {self.default} ({exc})") from None
        object.__setattr__(self, "_checked", True)

    def check_value(self, value: Any, context: Any = None) -> None:
        """Validate a supplied value (raises ValueError/TypeError with Heat's text)."""
        vt = self.value_type
        if vt == "number":
            c.str_to_num(value)
            checked = value
        elif vt == "boolean":
            c.str_to_bool(value)
            checked = value
        elif vt == "list":
            checked = parse_list(value)
        elif vt == "map":
            checked = parse_json(value)
        else:
            checked = value if isinstance(value, str) else _as_text(value)
        c.validate_all(self.constraints, checked, value_type=vt, type_name=self.type,
                       context=context)

    def coerce(self, value: Any) -> Any:
        """The typed value Heat hands to functions for a valid raw value."""
        vt = self.value_type
        if vt == "number":
            return c.str_to_num(value)
        if vt == "boolean":
            return c.str_to_bool(str(value) if not isinstance(value, bool) else value)
        if vt == "list":
            return parse_list(value)
        if vt == "map":
            return parse_json(value)
        return _as_text(value)


def _replace(schema: ParameterSchema, **changes: Any) -> ParameterSchema:
    from dataclasses import replace

    return replace(schema, **changes)


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return str(value)


def parse_list(value: Any) -> list[str]:
    """comma_delimited_list: a list's items as text, or a string split on commas."""
    if isinstance(value, list):
        return [str(x) for x in value]
    if not isinstance(value, str):
        raise ValueError("Value must be a comma-delimited list string: "
                         f"'{type(value).__name__}' object has no attribute 'split'")
    return [] if value == "" else value.split(",")


def parse_json(value: Any) -> Any:
    """json: text parsed; maps and lists kept (round-tripped, as Heat does).

    Nesting is bounded like a template's (:data:`MAX_DEPTH`), checked before the text is
    parsed and again on the result: a value nested hundreds deep parses, but every later
    recursive walk of it (serialising, copying, resolving) would overflow the stack."""
    too_deep = ValueError(f"Value must be valid JSON: nested more than {MAX_DEPTH} levels "
                          "of maps or lists")
    if isinstance(value, str) and not flow_depth_ok(value):
        raise too_deep
    if not isinstance(value, str) and nesting_exceeds(value, MAX_DEPTH):
        raise too_deep
    try:
        text = value if isinstance(value, str) else json.dumps(value)
        if text:
            return json.loads(text)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"Value must be valid JSON: {exc}") from None
    except RecursionError:
        raise too_deep from None
    return value


# -- parsing a section -------------------------------------------------------------------

def _check_dict(data: Any, allowed: tuple[str, ...], entity: str) -> Mapping[str, Any]:
    if not isinstance(data, dict):
        raise c.InvalidSchemaError(f"Invalid {entity}, expected a mapping")
    for key in data:
        if key not in allowed:
            raise c.InvalidSchemaError(f"Invalid key '{key}' for {entity}",
                                       hint=_e.did_you_mean(key, allowed))
    return data


def _num(data: Mapping[str, Any], key: str) -> Any:
    value = data.get(key)
    if value is None:
        return None
    try:
        return c.str_to_num(value)
    except (ValueError, TypeError):
        # Heat lets the Python error escape (a bare 400 "ValueError"); say what is wrong.
        raise c.InvalidSchemaError(f"{key} must be a number, not {value!r}") from None


def _hot_constraint(cdef: Mapping[str, Any], with_modulo: bool) -> c.Constraint:
    desc = cdef.get("description")
    if with_modulo and "modulo" in cdef:
        body = _check_dict(cdef["modulo"], ("step", "offset"), "modulo constraint")
        return c.Modulo(_num(body, "step"), _num(body, "offset"), description=desc)
    if "range" in cdef:
        body = _check_dict(cdef["range"], ("min", "max"), "range constraint")
        return c.Range(_num(body, "min"), _num(body, "max"), description=desc)
    if "length" in cdef:
        body = _check_dict(cdef["length"], ("min", "max"), "length constraint")
        return c.Length(_num(body, "min"), _num(body, "max"), description=desc)
    if "allowed_values" in cdef:
        return c.AllowedValues.of(cdef["allowed_values"], desc)
    if "allowed_pattern" in cdef:
        return c.AllowedPattern.of(cdef["allowed_pattern"], desc)
    if "custom_constraint" in cdef:
        return c.CustomConstraint(name=cdef["custom_constraint"], description=desc)
    raise c.InvalidSchemaError("No constraint expressed")


def _hot_schema(name: str, data: Any, version: str) -> ParameterSchema:
    with_tags = version >= "2018-03-02"
    keys = _HOT_KEYS + (("tags",) if with_tags else ())
    data = _check_dict(data, keys, f"parameter ({name})")
    if "type" not in data:
        raise c.InvalidSchemaError(f"Missing parameter type for parameter: {name}")
    tags_key = "tags" if with_tags else "Tags"
    if not isinstance(data.get(tags_key, []), list):
        raise c.InvalidSchemaError(f"Tags property should be a list for parameter: {name}")
    found: list[c.Constraint] = []
    raw_constraints = data.get("constraints")
    if raw_constraints is not None:
        if not isinstance(raw_constraints, list):
            raise c.InvalidSchemaError(
                f"Invalid parameter constraints for parameter {name}, expected a list")
        for cdef in raw_constraints:
            _check_dict(cdef, _CONSTRAINT_KEYS, "parameter constraints")
            found.append(_hot_constraint(cdef, version >= "2017-02-24"))
    ptype = data["type"]
    if not isinstance(ptype, str) or ptype not in HOT_TYPES:
        raise c.InvalidSchemaError(f"Invalid type ({ptype})")
    tags = data.get("tags") if with_tags else None
    return ParameterSchema(
        name=name, type=ptype, value_type=HOT_TYPES[ptype], family="hot",
        description=data.get("description"), default=data.get("default"),
        hidden=bool(data.get("hidden", False)), label=data.get("label"),
        immutable=bool(data.get("immutable", False)),
        tags=tuple(tags) if tags is not None else None,
        constraints=tuple(found), raw=data)


def _cfn_schema(name: str, data: Any) -> ParameterSchema:
    data = _check_dict(data, _CFN_KEYS, f"parameter ({name})")
    if "Type" not in data:
        raise c.InvalidSchemaError(f"Missing parameter type for parameter: {name}")
    desc = data.get("ConstraintDescription")
    found: list[c.Constraint] = []
    if "MinValue" in data or "MaxValue" in data:
        found.append(c.Range(_num(data, "MinValue"), _num(data, "MaxValue"),
                             description=desc))
    if "MinLength" in data or "MaxLength" in data:
        found.append(c.Length(_num(data, "MinLength"), _num(data, "MaxLength"),
                              description=desc))
    if "AllowedValues" in data:
        found.append(c.AllowedValues.of(data["AllowedValues"], desc))
    if "AllowedPattern" in data:
        found.append(c.AllowedPattern.of(data["AllowedPattern"], desc))
    ptype = data["Type"]
    if not isinstance(ptype, str) or ptype not in CFN_TYPES:
        raise c.InvalidSchemaError(f"Invalid type ({ptype})")
    return ParameterSchema(
        name=name, type=ptype, value_type=CFN_TYPES[ptype], family="cfn",
        description=data.get("Description"), default=data.get("Default"),
        hidden=str(data.get("NoEcho", "false")).lower() == "true",
        label=data.get("Label"), constraints=tuple(found),
        constraint_description=desc, raw=data)


def parse_parameter(name: str, data: Any, family: Family,
                    version: str | None = None) -> ParameterSchema:
    """One declaration; errors carry the path ``parameters.<name>``."""
    try:
        if family == "cfn":
            return _cfn_schema(name, data)
        return _hot_schema(name, data, version or "9999")
    except c.InvalidSchemaError as exc:
        raise c.InvalidSchemaError(exc.message, path=("parameters", name)) from None


def parse_parameters_section(section: Any, family: Family,
                             version: str | None = None) -> dict[str, ParameterSchema]:
    """All declarations of a section, in declaration order.

    ``version`` is the HOT date (``"2018-08-31"``); None means the newest rules.
    """
    if not section:
        return {}
    if not isinstance(section, Mapping):
        raise c.InvalidSchemaError(
            "Invalid parameters section, expected a mapping",
            path=("parameters" if family == "hot" else "Parameters",))
    return {str(name): parse_parameter(str(name), data, family, version)
            for name, data in section.items()}


_VERSION_KEYS = {"heat_template_version": "hot", "AWSTemplateFormatVersion": "cfn",
                 "HeatTemplateFormatVersion": "cfn"}


def all_parameter_schemas(schemas: Mapping[str, ParameterSchema],
                          files: Mapping[str, str] | None) -> dict[str, ParameterSchema]:
    """The declarations merging ``environment_files`` considers, as Heat's
    ``all_param_schemata``: every template among ``files`` (provider templates), then
    the stack's own on top. Files that are not templates are skipped."""
    from kiln.template.parser import load_data

    out: dict[str, ParameterSchema] = {}
    for text in (files or {}).values():
        try:
            data = load_data(text)
        except _e.KilnError:
            continue
        keys = [k for k in _VERSION_KEYS if isinstance(data.get(k), str)]
        if len(keys) != 1:
            continue
        family: Family = "hot" if _VERSION_KEYS[keys[0]] == "hot" else "cfn"
        section = data.get("parameters" if family == "hot" else "Parameters")
        version = str(data[keys[0]]) if family == "hot" else None
        # a bad declaration in any template among the files fails the request, as in Heat
        out.update(parse_parameters_section(section, family, version))
    out.update(schemas)
    return out
