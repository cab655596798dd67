"""What Kiln says about a template beyond Heat's one error: warnings, and the templates
that let every resource's errors be found.

Heat's POST /validate stops at the first error, and clients compare its answer, so the
API keeps it. Where Kiln speaks for itself (``kiln stack validate``, the dashboard) it
asks for more (``?all_errors=true``), and the API uses these helpers:

* :func:`function_typos`: a map whose only key is not a function of the template's
  version but is spelt like one (``{get_parm: size}``) is, for Heat as for Kiln, a
  literal map handed to the resource as it is; almost always a typo, so it is worth a
  warning (never an error: Heat accepts it).
* :func:`unknown_parameters`: a HOT ``get_param`` of a name the template does not
  declare. Heat's validate lets it pass (it does not resolve values), and the create
  then fails; a warning says so at validate, with the closest declared name.
* :func:`isolated`: the template with every resource but one made an ``OS::Heat::None``
  (no properties), so validating it reports that one resource's first error, and
  references to the others still resolve. :func:`stripped` makes them all ``None`` for
  the errors outside resources (parameters, outputs, conditions).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator, Mapping
from typing import Any

from kiln.errors import format_path
from kiln.template.errors import TemplateError
from kiln.template.parameters import HOT_PSEUDO
from kiln.template.versions import REGISTRY, TemplateVersion

#: how close a key must be to a function's name to be called a typo of it (``get_parm``
#: is 0.94 from ``get_param``; ordinary property names are far below)
TYPO_CUTOFF = 0.8
#: the sections whose values may hold functions
_SECTIONS = ("resources", "outputs", "conditions", "Resources", "Outputs", "Conditions")
#: a placeholder resource keeps only these keys (what references to it need)
_KEPT = ("depends_on", "condition", "DependsOn", "Condition")


def _version(data: Mapping[str, Any]) -> TemplateVersion | None:
    try:
        return REGISTRY.detect(data)
    except TemplateError:
        return None


def _maps(value: Any, path: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...],
                                                                     dict[Any, Any]]]:
    stack: list[tuple[tuple[str | int, ...], Any]] = [(path, value)]
    while stack:  # iterative: the parser bounds the depth, not the width
        where, item = stack.pop()
        if isinstance(item, dict):
            yield where, item
            stack.extend(((*where, str(k)), v) for k, v in reversed(list(item.items())))
        elif isinstance(item, list):
            stack.extend(((*where, i), v) for i, v in reversed(list(enumerate(item))))


def function_typos(data: Mapping[str, Any]) -> list[str]:
    """Warnings for maps whose only key looks like a misspelt function name:
    ``resources.vol.properties.size: {get_parm: "size"} is a map, not a function: did you
    mean get_param?``."""
    version = _version(data)
    if version is None:
        return []
    known = version.functions()
    usable = list(version.available_functions())
    warnings: list[str] = []
    for section in _SECTIONS:
        if section not in data:
            continue
        for path, node in _maps(data[section], (section,)):
            if len(node) != 1:
                continue
            key = next(iter(node))
            if not isinstance(key, str) or key in known:
                continue
            close = difflib.get_close_matches(key, usable, n=1, cutoff=TYPO_CUTOFF)
            if close:
                warnings.append(f"{format_path(path)}: {{{key}: {_brief(node[key])}}} is "
                                f"a map, not a function: did you mean {close[0]}?")
    return warnings


def unknown_parameters(data: Mapping[str, Any]) -> list[str]:
    """Warnings for HOT ``get_param`` calls naming a parameter the template does not
    declare: ``resources.r.properties.length.get_param: "lenght" is not a parameter of
    the template: did you mean length?``."""
    version = _version(data)
    if version is None or "heat_template_version" not in data:
        return []
    declared = data.get("parameters")
    if declared is None:
        declared = {}
    if not isinstance(declared, dict):
        return []
    names = [str(name) for name in declared]
    warnings: list[str] = []
    for section in _SECTIONS:
        if section not in data:
            continue
        for path, node in _maps(data[section], (section,)):
            if len(node) != 1 or "get_param" not in node:
                continue
            argument = node["get_param"]
            name = argument[0] if isinstance(argument, list) and argument else argument
            if not isinstance(name, str) or name in names or name in HOT_PSEUDO:
                continue
            close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
            suggestion = f": did you mean {close[0]}?" if close else ""
            warnings.append(f"{format_path((*path, 'get_param'))}: {json.dumps(name)} is not "
                            f"a parameter of the template{suggestion}")
    return warnings


def _brief(value: Any) -> str:
    """A value as a warning quotes it: short JSON, or ``...``."""
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else "..."


def _resources(data: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    for section, type_key in (("resources", "type"), ("Resources", "Type")):
        value = data.get(section)
        if isinstance(value, dict):
            return type_key, value
    return None


def _placeholder(definition: Any, type_key: str) -> dict[str, Any]:
    kept = {k: v for k, v in definition.items() if k in _KEPT} \
        if isinstance(definition, dict) else {}
    return {type_key: "OS::Heat::None", **kept}


def resource_names(data: Mapping[str, Any]) -> list[str]:
    found = _resources(data)
    return [] if found is None else [str(name) for name in found[1]]


def isolated(data: Mapping[str, Any], name: str) -> dict[str, Any]:
    """``data`` with every resource but ``name`` an ``OS::Heat::None``."""
    found = _resources(data)
    if found is None:
        return dict(data)
    type_key, resources = found
    section = "resources" if "resources" in data else "Resources"
    return {**data, section: {other: (definition if other == name
                                      else _placeholder(definition, type_key))
                              for other, definition in resources.items()}}


def stripped(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` with every resource an ``OS::Heat::None``."""
    return isolated(data, "\0")  # no resource has that name
