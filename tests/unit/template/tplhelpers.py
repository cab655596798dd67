"""Helpers for the template-core tests: building templates and a fake resource world."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kiln.template import BoundTemplate, StackIdentity, Template, load_template

IDENTITY = StackIdentity(stack_name="teststack", stack_id="1234", project_id="proj")

ALL_HOT = ["2013-05-23", "2014-10-16", "2015-04-30", "2015-10-15", "2016-04-08",
           "2016-10-14", "2017-02-24", "2017-09-01", "2018-03-02", "2018-08-31",
           "2021-04-16"]
ALIASES = {"newton": "2016-10-14", "ocata": "2017-02-24", "pike": "2017-09-01",
           "queens": "2018-03-02", "rocky": "2018-08-31", "wallaby": "2021-04-16"}


class FakeResolver:
    """Resources that exist with fixed reference ids and attributes."""

    def __init__(self, attrs: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self.attrs = dict(attrs or {})
        self.calls: list[tuple[str, ...]] = []

    def reference(self, name: str) -> Any:
        self.calls.append(("reference", name))
        return f"{name}-id"

    def attribute(self, name: str, attr: str, path: Sequence[Any]) -> Any:
        self.calls.append(("attribute", name, attr))
        value = self.attrs.get(name, {}).get(attr)
        for key in path:  # the resource layer's selection, simplified
            if isinstance(value, dict):
                value = value.get(key)
            elif isinstance(value, list) and isinstance(key, int) and key < len(value):
                value = value[key]
            else:
                return None
        return value

    def all_attributes(self, name: str) -> Mapping[str, Any]:
        return dict(self.attrs.get(name, {}))

    def resource_type(self, name: str) -> str:
        return "OS::Heat::None"

    def facade(self, kind: str) -> Any:
        return {"metadata": {"m": 1}, "deletion_policy": "Retain",
                "update_policy": {}}[kind]

    def availability_zones(self) -> list[str]:
        return ["nova"]


def hot(version: str = "2021-04-16", **sections: Any) -> dict[str, Any]:
    return {"heat_template_version": version, **sections}


def load(data: Mapping[str, Any] | str, files: Mapping[str, str] | None = None) -> Template:
    return load_template(data, files=files)


def bind(data: Mapping[str, Any] | str, *, params: Mapping[str, Any] | None = None,
         resolver: Any = None, files: Mapping[str, str] | None = None,
         yaql_limits: tuple[int, int] = (200, 10000)) -> BoundTemplate:
    return load(data, files).bind(user_params=params or {}, identity=IDENTITY,
                                  resolver=resolver or FakeResolver(),
                                  yaql_limits=yaql_limits)


def value(fn: Any, version: str = "2021-04-16", *, params: Mapping[str, Any] | None = None,
          parameters: Mapping[str, Any] | None = None, resolver: Any = None,
          files: Mapping[str, str] | None = None, resources: Mapping[str, Any] | None = None,
          conditions: Mapping[str, Any] | None = None) -> Any:
    """Resolve ``fn`` as the value of an output of a small template, after the checks a
    create makes (so a malformed function raises its error here)."""
    sections: dict[str, Any] = {"outputs": {"o": {"value": fn}}}
    if parameters:
        sections["parameters"] = parameters
    if resources:
        sections["resources"] = resources
    if conditions is not None:
        sections["conditions"] = conditions
    bound = bind(hot(version, **sections), params=params, resolver=resolver, files=files)
    bound.resource_definitions()  # what a create checks before anything is resolved
    snippet = bound.template.outputs["o"].value
    return bound.resolve(snippet)
