"""An update's plan: which resources are added, changed in place, replaced or deleted,
and which of their properties change, shown before anything is changed.

What happens to each resource is the server's word: its update preview (``PUT
.../preview``) decides in place against replace exactly as the update will. The preview
does not say *which* properties change, so that part compares the old template (``GET
.../template``) with the new one, resource by resource, flattening nested values into
dotted paths (``config.a.b``) so a change deep inside a map is one line. A property that
is just a parameter (``get_param: length``, CFN ``Ref: Length``) is shown with the
parameter's value, old (the stack's) and new (given, else the template default), since
the value is what changes; any other function is shown as written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.text import Text

#: preview lists in the order a plan shows them, with the plan's word and marker
KINDS = (("added", "create", "+", "green"),
         ("updated", "update in place", "~", "yellow"),
         ("replaced", "replace", "-/+", "magenta"),
         ("deleted", "delete", "-", "red"))

_MISSING = object()


@dataclass
class PropertyChange:
    path: str
    old: Any = _MISSING
    new: Any = _MISSING

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"path": self.path}
        if self.old is not _MISSING:
            body["old"] = self.old
        if self.new is not _MISSING:
            body["new"] = self.new
        return body


@dataclass
class ResourcePlan:
    name: str
    kind: str  # added / updated / replaced / deleted
    resource_type: str
    changes: list[PropertyChange] = field(default_factory=list)


@dataclass
class Plan:
    stack_name: str
    resources: list[ResourcePlan]
    unchanged: list[str]

    def count(self, kind: str) -> int:
        return sum(1 for r in self.resources if r.kind == kind)

    @property
    def names(self) -> set[str]:
        return {r.name for r in self.resources}

    def as_json(self) -> dict[str, Any]:
        changes: dict[str, list[str]] = {kind: [] for kind, *_ in KINDS}
        for resource in self.resources:
            changes[resource.kind].append(resource.name)
        changes["unchanged"] = list(self.unchanged)
        return {"resource_changes": changes,
                "resources": [{"resource_name": r.name, "resource_type": r.resource_type,
                               "action": r.kind,
                               "properties": [c.as_json() for c in r.changes]}
                              for r in self.resources]}


def _section(template: Mapping[str, Any] | None, *names: str) -> dict[str, Any]:
    for name in names:
        value = (template or {}).get(name)
        if isinstance(value, dict):
            return value
    return {}


def _resources(template: Mapping[str, Any] | None) -> dict[str, Any]:
    return _section(template, "resources", "Resources")


def _field(definition: Any, *names: str) -> Any:
    if isinstance(definition, dict):
        for name in names:
            if name in definition:
                return definition[name]
    return None


def _typed(value: Any, schema: Any) -> Any:
    """A parameter value as its declared type (the API shows every value as a string)."""
    if not isinstance(value, str):
        return value
    declared = str(_field(schema, "type", "Type") or "").lower()
    try:
        if declared == "number":
            return int(value) if value.lstrip("-").isdigit() else float(value)
        if declared == "boolean":
            return value.lower() in ("true", "1", "yes", "on", "y", "t")
        if declared == "json":
            return json.loads(value) if value else {}
        if declared in ("comma_delimited_list", "commadelimitedlist"):
            return [item.strip() for item in value.split(",")] if value else []
    except ValueError:
        return value
    return value


def parameter_values(template: Mapping[str, Any] | None,
                     given: Mapping[str, Any]) -> dict[str, Any]:
    """The template's parameter values: given ones, else the declared defaults."""
    values: dict[str, Any] = {}
    for name, schema in _section(template, "parameters", "Parameters").items():
        if name in given:
            values[name] = _typed(given[name], schema)
        else:
            default = _field(schema, "default", "Default")
            if default is not None:
                values[name] = default
    return values


def _substitute(value: Any, params: Mapping[str, Any]) -> Any:
    """A value with plain parameter references replaced by the parameter's value."""
    if isinstance(value, dict):
        if len(value) == 1:
            (key, arg), = value.items()
            if key in ("get_param", "Ref") and isinstance(arg, str) and arg in params:
                return params[arg]
        return {k: _substitute(v, params) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, params) for v in value]
    return value


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested maps as dotted paths; lists, functions and scalars are leaves."""
    if isinstance(value, dict) and value and not _is_function(value):
        flat: dict[str, Any] = {}
        for key, item in value.items():
            flat.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return flat
    return {prefix: value} if prefix else {}


def _is_function(value: Mapping[str, Any]) -> bool:
    if len(value) != 1:
        return False
    key = next(iter(value))
    return isinstance(key, str) and (key.startswith(("get_", "Fn::")) or key in (
        "Ref", "list_join", "str_replace", "str_split", "repeat", "digest", "resource_facade",
        "map_merge", "map_replace", "yaql", "if", "equals", "not", "and", "or", "filter",
        "make_url", "list_concat", "list_concat_unique", "contains", "str_replace_strict",
        "str_replace_vstrict"))


def _same(old: Any, new: Any) -> bool:
    """Equal, counting a parameter's string form ("12") as its value (12)."""
    if old == new:
        return True
    scalar = (str, int, float, bool)
    return (isinstance(old, scalar) and isinstance(new, scalar)
            and json.dumps(old) .strip('"') == json.dumps(new).strip('"'))


def _diff(old_def: Any, new_def: Any, old_params: Mapping[str, Any],
          new_params: Mapping[str, Any]) -> list[PropertyChange]:
    old_props = _flatten(_substitute(_field(old_def, "properties", "Properties") or {},
                                     old_params))
    new_props = _flatten(_substitute(_field(new_def, "properties", "Properties") or {},
                                     new_params))
    changes = [PropertyChange(path, old_props.get(path, _MISSING),
                              new_props.get(path, _MISSING))
               for path in [*old_props, *(p for p in new_props if p not in old_props)]
               if not (path in old_props and path in new_props
                       and _same(old_props[path], new_props[path]))]
    old_type, new_type = _field(old_def, "type", "Type"), _field(new_def, "type", "Type")
    if old_def is not None and new_def is not None and old_type != new_type:
        changes.insert(0, PropertyChange("(type)", old_type, new_type))
    return changes


def build(stack_name: str, preview: Mapping[str, Any], old_template: Mapping[str, Any] | None,
          new_template: Mapping[str, Any] | None, old_params: Mapping[str, Any],
          new_params: Mapping[str, Any]) -> Plan:
    """The plan from the server's preview plus the two templates."""
    old_resources, new_resources = _resources(old_template), _resources(new_template)
    old_values = parameter_values(old_template, old_params)
    new_values = parameter_values(new_template, new_params)
    plans: list[ResourcePlan] = []
    for kind, *_ in KINDS:
        for entry in preview.get(kind) or []:
            name = str(entry.get("resource_name"))
            old_def = old_resources.get(name) if kind != "added" else None
            new_def = new_resources.get(name) if kind != "deleted" else None
            rtype = str(entry.get("resource_type") or _field(new_def or old_def, "type", "Type")
                        or "")
            plans.append(ResourcePlan(name, kind, rtype,
                                      _diff(old_def, new_def, old_values, new_values)))
    unchanged = [str(e.get("resource_name")) for e in preview.get("unchanged") or []]
    return Plan(stack_name, plans, unchanged)


def _show(value: Any) -> str:
    if value is _MISSING:
        return "(none)"
    return json.dumps(value, sort_keys=True, default=str)


def render(plan: Plan, console: Console) -> None:
    """Print the plan, terraform-style: one block per resource, one line per property."""
    summary = ", ".join(f"{plan.count(kind)} to {word}" for kind, word, *_ in KINDS)
    console.print(Text(f"Plan for stack {plan.stack_name}: ", style="bold") + Text(summary)
                  + Text(f" ({len(plan.unchanged)} unchanged)", style="dim"), soft_wrap=True)
    if not plan.resources:
        console.print("No changes.")
        return
    for kind, word, marker, colour in KINDS:
        for resource in (r for r in plan.resources if r.kind == kind):
            console.print(
                Text(f"  {marker:>3} ", style=f"bold {colour}") + Text(resource.name,
                                                                       style="bold")
                + Text(f"  ({resource.resource_type})  will be ", style="dim")
                + Text({"create": "created", "update in place": "updated in place",
                        "replace": "replaced", "delete": "deleted"}[word], style=colour),
                soft_wrap=True)
            for change in resource.changes:
                console.print(_change_line(change, kind), soft_wrap=True)
            if kind in ("updated", "replaced") and not resource.changes:
                console.print(Text("        (no property changes in the template: an "
                                   "input it reads changes)", style="dim"), soft_wrap=True)


def _change_line(change: PropertyChange, kind: str) -> Text:
    if change.old is _MISSING or kind == "added":
        return Text("        + ", style="green") + Text(f"{change.path}: {_show(change.new)}")
    if change.new is _MISSING or kind == "deleted":
        return Text("        - ", style="red") + Text(f"{change.path}: {_show(change.old)}")
    return (Text("        ~ ", style="yellow") + Text(f"{change.path}: ")
            + Text(_show(change.old), style="red") + Text(" → ")
            + Text(_show(change.new), style="green"))
