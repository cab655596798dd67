"""Declarations a plugin makes about its properties and attributes.

One declaration serves three purposes: validating a template's property values, typing
them for the plugin, and producing the ``resource_types`` API bodies. Keeping all three on
the same objects is what stops the documentation and the behaviour from drifting apart.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from kiln.errors import PathElement, StackValidationFailed, did_you_mean
from kiln.template.constraints import Constraint, check_applicable, expected_hint

PropertyType = Literal["string", "integer", "number", "boolean", "list", "map", "any"]
AttributeType = Literal["string", "integer", "number", "boolean", "list", "map"]

SUPPORT_STATUSES = ("UNKNOWN", "SUPPORTED", "DEPRECATED", "UNSUPPORTED", "HIDDEN")


@dataclass(frozen=True)
class SupportStatus:
    """Whether a type or property is supported, deprecated, hidden ... since a version."""

    status: str = "SUPPORTED"
    message: str | None = None
    version: str | None = None
    previous_status: SupportStatus | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "message": self.message,
            "version": self.version,
            "previous_status": (
                self.previous_status.to_dict() if self.previous_status is not None else None
            ),
        }


@dataclass(frozen=True)
class Property:
    """The schema of one property (or of one item of a list/map property)."""

    type: PropertyType
    description: str | None = None
    default: Any = None
    required: bool = False
    constraints: Sequence[Constraint] = ()
    update_allowed: bool = False
    immutable: bool = False
    #: for a map: the schema of each known key; for a list: ``{"*": item_schema}`` or
    #: the item schema itself (normalised by :attr:`item_schema`).
    schema: Mapping[str, Property] | Property | None = None
    support_status: SupportStatus = field(default_factory=SupportStatus)
    implemented: bool = True
    #: a provider template's list or map property, made from a comma_delimited_list or
    #: json parameter, also takes the parameter's text forms as Heat does: a list a
    #: comma-separated string, a map a JSON string (kept as text) or a list (JSON text)
    allow_conversion: bool = False

    def __post_init__(self) -> None:
        if self.update_allowed and self.immutable:
            raise ValueError("Options update_allowed and immutable cannot both be True")
        check_applicable(self.constraints, self.type, self.type)

    # cached (a schema never changes): each value stored or validated asks, and the
    # Mapping checks are ABC instance checks
    @functools.cached_property
    def item_schema(self) -> Property | None:
        """The schema every list item must satisfy, if the list declares one."""
        if isinstance(self.schema, Property):
            return self.schema
        if isinstance(self.schema, Mapping) and "*" in self.schema:
            return self.schema["*"]
        return None

    @functools.cached_property
    def key_schemas(self) -> Mapping[str, Property] | None:
        """The schema of each known key of a map, if the map declares them."""
        if self.type == "map" and isinstance(self.schema, Mapping):
            return self.schema
        return None

    def to_dict(self) -> dict[str, Any]:
        """The schema as Heat's ``resource_types/{type}`` body shows it."""
        out: dict[str, Any] = {"type": self.type}
        if self.description is not None:
            out["description"] = self.description
        if self.default is not None:
            out["default"] = self.default
        if self.type == "list" and self.item_schema is not None:
            out["schema"] = {"*": self.item_schema.to_dict()}
        elif self.key_schemas is not None:
            out["schema"] = {k: v.to_dict() for k, v in self.key_schemas.items()}
        out["required"] = self.required
        if self.constraints:
            out["constraints"] = [c.to_dict() for c in self.constraints]
        out["update_allowed"] = self.update_allowed
        out["immutable"] = self.immutable
        return out

    @functools.cached_property
    def typed_default(self) -> Any:
        """The default, converted and checked once (callers get a fresh copy)."""
        return self.coerce(None, ())

    def convert(self, value: Any, path: tuple[PathElement, ...]) -> Any:
        """:meth:`coerce` without this property's own constraints: what Heat's plugin
        code gets when it reads a property whose values were not validated."""
        if value is None:
            value = self.default
        converter = _CONVERTERS[self.type]
        try:
            return converter(self, value, path)
        except (TypeError, ValueError) as exc:
            raise StackValidationFailed(str(exc), path=path,
                                        hint=expected_hint(exc, self.type, value)) from None

    def coerce(self, value: Any, path: tuple[PathElement, ...]) -> Any:
        """Turn a resolved template value into this property's Python type.

        ``None`` means "not given" and yields the default (or the type's empty value).
        Raises StackValidationFailed with the path of the offending element.
        """
        result = self.convert(value, path)
        for constraint in self.constraints:
            try:
                constraint.validate(result, value_type=self.type, type_name=self.type)
            except ValueError as exc:
                raise StackValidationFailed(str(exc), path=path) from None
        return result


def _to_string(prop: Property, value: Any, path: tuple[PathElement, ...]) -> Any:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int):
        return str(value)
    raise ValueError(f"Value must be a string; got {value!r}")


def _to_integer(prop: Property, value: Any, path: tuple[PathElement, ...]) -> Any:
    if value is None:
        return 0
    try:
        return int(value)
    except ValueError:
        raise TypeError(f"Value '{value}' is not an integer") from None


def _to_number(prop: Property, value: Any, path: tuple[PathElement, ...]) -> Any:
    if value is None:
        return 0
    if isinstance(value, int | float):
        return value
    try:
        return int(value)
    except ValueError:
        return float(value)


def _to_boolean(prop: Property, value: Any, path: tuple[PathElement, ...]) -> Any:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        lowered = value.lower()
        if lowered not in ("true", "false"):
            raise ValueError(f'"{lowered}" is not a valid boolean')
        return lowered == "true"
    raise TypeError(f'"{value}" is not a valid boolean')


def _to_list(prop: Property, value: Any, path: tuple[PathElement, ...]) -> Any:
    if value is None:
        return []
    if prop.allow_conversion and isinstance(value, str):
        value = value.split(",") if value else []
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise TypeError(f'"{value!r}" is not a list')
    item = prop.item_schema
    if item is None:
        return list(value)
    return [item.coerce(v, (*path, i)) for i, v in enumerate(value)]


def _to_map(prop: Property, value: Any, path: tuple[PathElement, ...]) -> Any:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        if prop.allow_conversion and isinstance(value, str):
            return value
        if prop.allow_conversion and isinstance(value, Sequence):
            return json.dumps(value)
        raise TypeError(f'"{value}" is not a map')
    keys = prop.key_schemas
    if keys is None:
        return dict(value)
    return Properties(keys, value, path=path).as_dict()


def _to_any(prop: Property, value: Any, path: tuple[PathElement, ...]) -> Any:
    return value


_CONVERTERS = {
    "any": _to_any,
    "string": _to_string,
    "integer": _to_integer,
    "number": _to_number,
    "boolean": _to_boolean,
    "list": _to_list,
    "map": _to_map,
}


@dataclass(frozen=True)
class Attribute:
    """The schema of one attribute a resource offers to get_attr / Fn::GetAtt."""

    description: str | None = None
    type: AttributeType | None = None
    support_status: SupportStatus = field(default_factory=SupportStatus)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.description is not None:
            out["description"] = self.description
        if self.type is not None:
            out["type"] = self.type
        return out


def _fresh(value: Any) -> Any:
    """A copy of a JSON-like value, so plugins may change what they were given."""
    if type(value) is list:
        return [_fresh(v) for v in value]
    if type(value) is dict:
        return {k: _fresh(v) for k, v in value.items()}
    return value


#: Every resource offers ``show``; the base answers it, plugins never declare it.
SHOW_ATTRIBUTE = Attribute("Detailed information about resource.", "map")


class Properties(Mapping[str, Any]):
    """A resource's property values, validated and typed, defaults applied.

    Construction validates everything at once, so a plugin never meets a half-checked
    value; the error carries the path below ``properties``, which the caller prefixes
    with ``resources.<name>.properties``.
    """

    def __init__(self, schema: Mapping[str, Property], data: Mapping[str, Any] | None,
                 *, path: tuple[PathElement, ...] = ()) -> None:
        self.schema = schema
        data = {} if data is None else data
        if not isinstance(data, Mapping):
            raise StackValidationFailed(f'"{data}" is not a map', path=path)
        for key in data:
            if key not in schema:
                raise StackValidationFailed(f"Unknown Property {key}", path=path,
                                            hint=did_you_mean(key, schema))
        values: dict[str, Any] = {}
        for key, prop in schema.items():
            if key not in data:
                if prop.default is not None:
                    try:
                        values[key] = _fresh(prop.typed_default)
                    except StackValidationFailed as exc:
                        raise StackValidationFailed(exc.message,
                                                    path=(*path, key, *exc.path)) from None
                elif prop.required:
                    raise StackValidationFailed(f"Property {key} not assigned", path=path)
                else:
                    values[key] = None
                continue
            if not prop.implemented:
                raise StackValidationFailed(f"Property {key} not implemented yet", path=path)
            # an explicit null is "given": it yields the default or the type's empty value
            values[key] = prop.coerce(data[key], (*path, key))
        self._values = values
        #: the keys the template gave a non-null value for (a tuple: a frozenset would
        #: cost each resource 216 bytes)
        self.user_keys = tuple(k for k, v in data.items() if v is not None)

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def as_dict(self) -> dict[str, Any]:
        return dict(self._values)

    def stored(self) -> dict[str, Any]:
        """The values to persist: without the unset (None) ones, inside maps that declare
        their keys too. Validating the result again then gives exactly these values back
        (a stored null would instead be "given" and become the type's empty value, and a
        reloaded resource would look changed to the next update)."""
        return _without_unset(self.schema, self._values)

    def unvalidated(self) -> Mapping[str, Any] | None:
        """The stored values these properties will be validated from when first read
        (:class:`kiln.engine.store.loader.StoredProperties`), None once they are real."""
        return None

    def __repr__(self) -> str:
        return f"Properties({self._values!r})"


def changed_from_stored(schema: Mapping[str, Property], stored: Mapping[str, Any],
                        new: Properties) -> dict[str, Any] | None:
    """The properties of ``new`` whose values differ from ``stored`` (what
    :meth:`Properties.stored` gave for the old values), without validating ``stored``
    again: a replace-all update would otherwise validate every old resource's values
    just to compare them. Since validating stored values gives the same values back,
    a value differs exactly when its stored form differs. None where the stored values
    may not be of this schema (a key it does not know, a default or a required value
    missing, a property not implemented): the caller then validates them as before."""
    if any(key not in schema for key in stored):
        return None
    changed: dict[str, Any] = {}
    for key, prop in schema.items():
        value = new[key]
        if key in stored:
            old = stored[key]
            if not prop.implemented:
                return None
        elif prop.default is not None or prop.required:
            return None   # stored values always hold these: older values, validate them
        else:
            old = None
        if (None if value is None else _stored_value(prop, value)) != old:
            changed[key] = value
    return changed


def _without_unset(schema: Mapping[str, Property], values: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        if value is None:
            continue
        prop = schema.get(key)
        if prop is not None:
            value = _stored_value(prop, value)
        out[key] = value
    return out


def _stored_value(prop: Property, value: Any) -> Any:
    keys = prop.key_schemas
    if keys is not None and isinstance(value, dict):
        return _without_unset(keys, value)
    item = prop.item_schema
    if item is not None and isinstance(value, list):
        return [_stored_value(item, v) for v in value]
    return value


def property_error(exc: StackValidationFailed, resource_name: str) -> StackValidationFailed:
    """Re-raise a properties validation error with Heat's prefix and full path."""
    path: tuple[PathElement, ...] = ("resources", resource_name, "properties", *exc.path)
    from kiln.errors import format_path

    err = StackValidationFailed(f"Property error: {format_path(path)}: {exc.message}",
                                path=path)
    return err
