"""IMPORT change sets: existing objects brought under a stack (new or existing) through
Kiln's ``external_id`` adoption, checked as CloudFormation checks ``ResourcesToImport``.

The template a user gives names each resource to import; the change set stores it with
each such resource's ``external_id`` (``ExternalId`` in a CFN template) set to the
identifier given, so executing it adopts the object (Heat's ADOPT then CHECK) instead
of creating one. An import changes nothing else: a plan that would add, modify or
remove any other resource is refused, as CloudFormation refuses it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import yaml

from kiln.errors import InvalidInput
from kiln.resources.registry import global_registry
from kiln.template.environment import ResourceRegistry
from kiln.template.template import internal_keys


class ImportRefused(InvalidInput):
    """A request CloudFormation refuses outright (a ValidationError), rather than a
    change set stored FAILED."""


def _resources(template: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    for section in ("Resources", "resources"):
        if isinstance(template.get(section), Mapping):
            return section, template[section]
    raise ImportRefused("The template has no resources to import")


def _identifier(item: Mapping[str, Any]) -> str:
    ident = item.get("identifier") or {}
    values = [str(v) for v in ident.values() if v not in (None, "")]
    if len(values) != 1:
        raise ImportRefused(
            f"ResourceIdentifier of [{item.get('logical_id')}] must hold exactly one "
            "identifier: the id of the object to import"
        )
    return values[0]


def importable(type_name: str) -> bool:
    """Whether a resource of this type can adopt an existing object: a type of the
    registry whose resource is one object, not a nested stack (a provider template, a
    group, ``OS::Heat::Stack``)."""
    if ResourceRegistry.is_template(type_name):
        return False
    registry = global_registry()
    if type_name not in registry:
        return True  # the plan judges it (a type the environment maps, or none at all)
    return not registry.get(type_name).is_nested_stack


def mark(
    template: Mapping[str, Any] | str | None,
    imports: Sequence[Mapping[str, Any]],
    new_stack: bool,
) -> dict[str, Any]:
    """The template with each imported resource's ``external_id`` set. Raises :class:`ImportRefused`
    with CloudFormation's reasons."""
    if not imports:
        raise ImportRefused("ResourcesToImport must be given for ChangeSetType IMPORT")
    if isinstance(template, str):
        template = yaml.safe_load(template)
    if not isinstance(template, Mapping):
        raise ImportRefused("An IMPORT change set needs a template")
    body = copy.deepcopy(dict(template))
    section, resources = _resources(body)
    names = [str(item.get("logical_id")) for item in imports]
    if len(set(names)) != len(names):
        raise ImportRefused(f"ResourcesToImport names a resource twice: {names}")
    for item, n in zip(imports, names, strict=True):
        if item.get("field") and n not in resources:  # the native API's place
            raise ImportRefused(f"{item['field']}.logical_resource_id: {n!r} is not a "
                                "resource of the template")
    missing = [n for n in names if n not in resources]
    if missing:
        raise ImportRefused(
            f"Resources {missing} in ResourcesToImport are missing from the template"
        )
    wrong = []
    for item, n in zip(imports, names, strict=True):
        kind = str((resources[n] or {}).get("Type") or (resources[n] or {}).get("type"))
        given = item.get("resource_type")
        if given is not None and str(given) != kind:
            if item.get("field"):
                raise ImportRefused(f"{item['field']}.resource_type: {given!r} is not the "
                                    f"type of {n!r} in the template ({kind!r})")
            wrong.append(n)
        if not importable(kind):
            where = f"{item['field']}: " if item.get("field") else ""
            raise ImportRefused(f"{where}Resource {n!r} of type {kind!r} cannot be imported: "
                                "only a resource of one object can (not a nested stack)")
    if wrong:
        raise ImportRefused(
            f"ResourceType of {wrong} in ResourcesToImport does not match the template"
        )
    unpolicied = [
        n
        for n in names
        if not (resources[n] or {}).get("DeletionPolicy")
        and not (resources[n] or {}).get("deletion_policy")
    ]
    if unpolicied:
        raise ImportRefused(
            f"The following resources to import [{', '.join(unpolicied)}] must have "
            "DeletionPolicy attribute specified in the template."
        )
    if new_stack:
        extra = sorted(set(resources) - set(names))
        if extra:
            raise ImportRefused(
                "As part of the import operation, you cannot create resources: "
                f"{extra} are not in ResourcesToImport"
            )
    out_resources = dict(resources)
    for item, n in zip(imports, names, strict=True):
        key = "ExternalId" if section == "Resources" else "external_id"
        out_resources[n] = {**dict(resources[n]), key: _identifier(item)}
    body[section] = out_resources
    return body


def relabel(changes: Sequence[Mapping[str, Any]], imports: Sequence[Mapping[str, Any]]
            ) -> list[dict[str, Any]]:
    """The plan's changes with each imported resource's Add shown as an Import of its
    object; any other change is refused (an import changes nothing else)."""
    wanted = {str(i.get("logical_id")): _identifier(i) for i in imports}
    out, other = [], []
    for change in changes:
        name = str(change.get("logical_resource_id"))
        if name in wanted and change.get("action") == "Add":
            out.append({**dict(change), "action": "Import", "physical_resource_id": wanted[name],
                        "replacement": None, "details": []})
        else:
            other.append(name)
    taken = sorted(set(wanted) - {str(c["logical_resource_id"]) for c in out})
    if taken:
        raise ImportRefused(f"Resources {taken} already exist in the stack")
    if other:
        raise ImportRefused(
            "As part of the import operation, you cannot modify or add [Resources]: "
            f"{sorted(other)} would change"
        )
    return out


def shown(changes: list[dict[str, Any]], request: Mapping[str, Any]) -> list[dict[str, Any]]:
    """An IMPORT's plan shows its resources as Import (and refuses any other change)."""
    imports = request.get("imports")
    return relabel(changes, imports) if imports else changes


def parsing(request: Mapping[str, Any]) -> AbstractContextManager[None]:
    """Where a change set's template is parsed: an IMPORT's is one Kiln marked, whose CFN
    ``ExternalId`` is honoured (:data:`kiln.template.template.INTERNAL_KEYS`)."""
    return internal_keys() if request.get("imports") else nullcontext()
