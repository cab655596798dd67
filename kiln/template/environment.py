"""Stack environments: the user's parameters, defaults and resource registry.

An environment reaches Heat in up to three pieces, and the way they combine is part of
the wire contract that python-heatclient relies on:

* ``environment`` — one mapping (or YAML text) in the request body;
* ``parameters`` — the caller's ``-P`` values, laid over ``environment.parameters``;
* ``environment_files`` — names of entries in ``files``. When present, Heat's API
  *ignores* the ``environment`` body (the client also sends a client-side merge of the
  same files there, for old servers) and the engine merges the files in order on top
  of the caller's parameters: later files override earlier ones, ``parameter_merge_strategies``
  decide per parameter (``overwrite``/``merge``/``deep_merge``), names the template
  does not declare are dropped once something is already there, and the other
  sections merge one level deep (so a later ``resource_registry.resources`` replaces
  an earlier one wholesale). :func:`build_environment` does exactly that (the parsing
  and merge rules themselves are in :mod:`kiln.template.env_format`).

The resource registry maps type names to other type names (``OS::Thing: OS::Heat::
None``), ``*`` globs (``OS::Net::*: OS::Neutron::*``), provider templates (a value or
key ending in ``.yaml``/``.template``, served from ``files``), per-resource overrides
under ``resources: {name: {Type: ...}}`` and breakpoint ``hooks`` (``resources:
{name-glob: {hooks: [pre-create, ...]}}``). Only user mappings live here; the engine
resolves what is left against the plugin registry.
"""

from __future__ import annotations

import copy
import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kiln import errors as _e
from kiln.template.definitions import NO_NAMES
from kiln.template.env_format import (
    SECTIONS,
    ConflictingMergeStrategyForParam,
    EnvironmentFormatError,
    InvalidMergeStrategyForParam,
    merge_environment_files,
    parse_environment,
)
from kiln.template.parameters import ParameterSchema

__all__ = [
    "HOOK_TYPES",
    "SECTIONS",
    "ConflictingMergeStrategyForParam",
    "Environment",
    "EnvironmentFormatError",
    "InvalidBreakPointHook",
    "InvalidMergeStrategyForParam",
    "ResourceRegistry",
    "build_environment",
    "merge_environment_files",
    "parse_environment",
]

HOOK_TYPES = ("pre-create", "pre-update", "pre-delete", "post-create", "post-update",
              "post-delete")
RESTRICTED_ACTIONS = ("update", "replace")
TEMPLATE_SUFFIXES = (".yaml", ".template")
_MAX_ALIAS_DEPTH = 64

class InvalidBreakPointHook(_e.InvalidBreakPointHook):
    pass


class InvalidRestrictedAction(_e.InvalidInput):
    heat_type = "InvalidRestrictedAction"


# -- resource registry -------------------------------------------------------------------

def _one_or_all_of(value: Any, allowed: Sequence[str]) -> bool:
    """A registry entry names one allowed word or a list of them."""
    if isinstance(value, str):
        return value in allowed
    if isinstance(value, Sequence):
        return all(v in allowed for v in value)
    return False


def _check_hooks(value: Any) -> None:
    if not _one_or_all_of(value, HOOK_TYPES):
        raise InvalidBreakPointHook(
            f'Invalid hook type "{value}" for resource breakpoint, acceptable hook '
            f"types are: {HOOK_TYPES}")


def _check_restricted(value: Any) -> None:
    if not _one_or_all_of(value, RESTRICTED_ACTIONS):
        raise InvalidRestrictedAction(
            f'Invalid restricted_action type "{value}" for resource, acceptable '
            f"restricted_action types are: {RESTRICTED_ACTIONS}")


def _as_set(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, Sequence):
        return set(value)
    return set()


#: The aliases of Heat's stock global environment (etc/heat/environment.d/default.yaml);
#: user mappings take precedence. (Its two ``file:///etc/heat/templates/...`` entries
#: need files a Kiln host does not have and are left out.)
GLOBAL_ALIASES: dict[str, str] = {
    "OS::Quantum*": "OS::Neutron*",
    "OS::Metering::Alarm": "OS::Aodh::Alarm",
    "OS::Ceilometer::Alarm": "OS::Aodh::Alarm",
    "OS::Ceilometer::GnocchiResourcesAlarm": "OS::Aodh::GnocchiResourcesAlarm",
    "OS::Ceilometer::GnocchiAggregationByMetricsAlarm":
        "OS::Aodh::GnocchiAggregationByMetricsAlarm",
    "OS::Ceilometer::GnocchiAggregationByResourcesAlarm":
        "OS::Aodh::GnocchiAggregationByResourcesAlarm",
    "OS::Ceilometer::CombinationAlarm": "OS::Aodh::CombinationAlarm",
}


def _global_candidates(type_name: str) -> list[tuple[tuple[str, ...], str, Any]]:
    found: list[tuple[tuple[str, ...], str, Any]] = []
    if type_name in GLOBAL_ALIASES:
        found.append(((type_name,), type_name, GLOBAL_ALIASES[type_name]))
    for key, value in GLOBAL_ALIASES.items():
        if key.endswith("*") and type_name != value and type_name.startswith(key[:-1]):
            found.append(((key,), key, value))
    found.sort(key=lambda item: item[0])
    return found


class ResourceRegistry:
    """The user's type mappings, per-resource overrides and hooks."""

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        self._reg: dict[str, Any] = {"resources": {}}
        if data:
            self.load(data)

    def load(self, data: Mapping[str, Any]) -> None:
        """Layer another registry snippet on top (``null`` removes an entry)."""
        self._load([], data)

    def _load(self, path: list[str], data: Mapping[str, Any]) -> None:
        for key, value in data.items():
            key = str(key)
            if not path and key == "resources":
                if value is None:
                    continue
                if not isinstance(value, dict):
                    # Heat fails later with a Python error; reject it up front.
                    raise EnvironmentFormatError(
                        'Environment not in valid format: "resources" in resource_registry '
                        "must be a mapping")
            if value is None:
                self._remove([*path, key])
            elif key == "hooks":
                _check_hooks(value)
                self._place([*path, key], value)
            elif key == "restricted_actions":
                _check_restricted(value)
                self._place([*path, key], value)
            elif isinstance(value, dict):
                self._load([*path, key], value)
            else:
                if key.endswith(TEMPLATE_SUFFIXES):
                    value = key
                self._place([*path, key], value)

    def _level(self, path: list[str]) -> dict[str, Any]:
        level = self._reg
        for key in path:
            nxt = level.get(key)
            if not isinstance(nxt, dict):
                nxt = level[key] = {}
            level = nxt
        return level

    def _place(self, path: list[str], value: Any) -> None:
        self._level(path[:-1])[path[-1]] = value

    def _remove(self, path: list[str]) -> None:
        level = self._level(path[:-1])
        name = path[-1]
        if name.endswith("*"):
            for key in [k for k, v in level.items()
                        if not isinstance(v, dict) and k.startswith(name[:-1])]:
                del level[key]
        else:
            level.pop(name, None)

    # -- lookups -------------------------------------------------------------------------

    def _candidates(self, type_name: str, resource_name: str | None,
                    ) -> list[tuple[tuple[str, ...], str, Any]]:
        """(path, key, value) of every user entry that applies, best first (Heat's order:
        longer paths, i.e. per-resource overrides, before top-level ones; then by path)."""
        found: list[tuple[tuple[str, ...], str, Any]] = []
        if resource_name:
            impl = self._reg["resources"].get(resource_name)
            if isinstance(impl, dict) and type_name in impl and \
                    not isinstance(impl[type_name], dict):
                found.append((("resources", resource_name, type_name), type_name,
                              impl[type_name]))
        own = self._reg.get(type_name)
        if own is not None and not isinstance(own, dict):
            found.append(((type_name,), type_name, own))
        for key, value in self._reg.items():
            if key.endswith("*") and isinstance(value, str) and \
                    type_name != value and type_name.startswith(key[:-1]):
                found.append(((key,), key, value))
        found.sort(key=lambda item: (-len(item[0]), item[0]))
        return found

    def resolve(self, type_name: str, resource_name: str | None = None) -> str:
        """The type (or provider template file name) ``type_name`` finally maps to."""
        return self._resolve(type_name, resource_name)[0]

    def template_entry(self, type_name: str,
                       resource_name: str | None = None) -> tuple[str, ...] | None:
        """Where the user entry that makes ``type_name`` a provider template sits
        (``("OS::Nova::Server",)``, ``("resources", "web", "OS::Nova::Server")``), or
        None if it does not resolve to a template through the user's registry."""
        resolved, path = self._resolve(type_name, resource_name)
        return path if self.is_template(resolved) else None

    def _resolve(self, type_name: str, resource_name: str | None,
                 ) -> tuple[str, tuple[str, ...] | None]:
        if type_name.endswith(TEMPLATE_SUFFIXES) and type_name not in self._reg:
            # Heat records a template used directly as a type in the stack's registry
            # (GET .../environment then shows "file.yaml": "file.yaml").
            self._reg[type_name] = type_name
        current = type_name
        last: tuple[str, ...] | None = None
        for _ in range(_MAX_ALIAS_DEPTH):
            if current.endswith(TEMPLATE_SUFFIXES):
                return current, (current,) if current in self._reg else last
            user = self._candidates(current, resource_name)
            candidates = user or _global_candidates(current)
            if not candidates:
                return current, last
            path, key, value = candidates[0]
            if not isinstance(value, str):
                return current, last
            last = path if user else None
            if value.endswith(TEMPLATE_SUFFIXES):
                return value, last
            if key.endswith("*"):
                value = value[:-1] + current[len(key) - 1:] if value.endswith("*") else value
            if value == current:
                return current, last
            current = value
        raise _e.StackValidationFailed(
            f"Resource type {type_name} is mapped in a loop in resource_registry")

    def remove_entry(self, path: Sequence[str]) -> None:
        """Drop one entry (Heat's remove_item: a provider template's own mapping is
        removed from its nested stack's registry, so the template can use the type it
        implements without recursing into itself)."""
        level: Any = self._reg
        for key in path[:-1]:
            level = level.get(key) if isinstance(level, dict) else None
            if level is None:
                return
        if isinstance(level, dict):
            level.pop(path[-1], None)

    @staticmethod
    def is_template(resolved: str) -> bool:
        return resolved.endswith(TEMPLATE_SUFFIXES)

    def _resource_entries(self, resource_name: str) -> list[Mapping[str, Any]]:
        return [entry for pattern, entry in self._reg["resources"].items()
                if isinstance(entry, dict) and fnmatch.fnmatchcase(resource_name, pattern)]

    def hooks_for(self, resource_name: str) -> frozenset[str]:
        """Breakpoints set on this resource (glob patterns match the name)."""
        hooks: set[str] = set()
        for entry in self._resource_entries(resource_name):
            hooks |= _as_set(entry.get("hooks"))
        return frozenset(hooks & set(HOOK_TYPES)) if hooks else NO_NAMES

    def matches_hook(self, resource_name: str, hook: str) -> bool:
        return hook in self.hooks_for(resource_name)

    def restricted_actions_for(self, resource_name: str) -> frozenset[str]:
        actions: set[str] = set()
        for entry in self._resource_entries(resource_name):
            actions |= _as_set(entry.get("restricted_actions"))
        return frozenset(actions) if actions else NO_NAMES

    def child(self, resource_name: str) -> ResourceRegistry:
        """The registry a nested stack of ``resource_name`` sees: every mapping, but
        under ``resources`` only what the parent's entries for that name held."""
        out = ResourceRegistry()
        out._reg = copy.deepcopy(self._reg)
        merged: dict[str, Any] = {}
        for pattern, entry in self._reg["resources"].items():
            if isinstance(entry, dict) and fnmatch.fnmatchcase(resource_name, pattern):
                merged.update(copy.deepcopy(entry))
        exact = self._reg["resources"].get(resource_name)
        if isinstance(exact, dict):
            merged.update(copy.deepcopy(exact))
        out._reg["resources"] = merged
        return out

    def as_dict(self) -> dict[str, Any]:
        return copy.deepcopy(self._reg)


# -- environment -------------------------------------------------------------------------

class Environment:
    """One stack's environment."""

    def __init__(self, env: Mapping[str, Any] | None = None) -> None:
        env = env or {}
        self.parameters: dict[str, Any] = dict(env.get("parameters") or {})
        self.parameter_defaults: dict[str, Any] = dict(env.get("parameter_defaults") or {})
        self.encrypted_param_names: list[str] = list(env.get("encrypted_param_names") or [])
        self.event_sinks: list[Any] = list(env.get("event_sinks") or [])
        self.registry = ResourceRegistry(env.get("resource_registry") or {})

    def load(self, snippet: Mapping[str, Any]) -> None:
        """Layer another environment on top (Heat's Environment.load)."""
        self.registry.load(snippet.get("resource_registry") or {})
        self.parameters.update(snippet.get("parameters") or {})
        self.parameter_defaults.update(snippet.get("parameter_defaults") or {})
        self.event_sinks.extend(snippet.get("event_sinks") or [])

    def to_dict(self) -> dict[str, Any]:
        """What GET .../environment and POST /validate's ``Environment`` show."""
        return {"resource_registry": self.registry.as_dict(),
                "parameters": copy.deepcopy(self.parameters),
                "parameter_defaults": copy.deepcopy(self.parameter_defaults),
                "event_sinks": copy.deepcopy(self.event_sinks)}

    def env_as_dict(self) -> dict[str, Any]:
        """Everything, for storage (adds ``encrypted_param_names``)."""
        out = self.to_dict()
        out["encrypted_param_names"] = list(self.encrypted_param_names)
        return out

    def shown(self, hidden: Iterable[str] = ()) -> dict[str, Any]:
        """GET .../environment: everything, with hidden parameters' values (in
        ``parameters`` and ``parameter_defaults``) replaced by ``******``."""
        out = self.env_as_dict()
        names = set(hidden)
        for section in ("parameters", "parameter_defaults"):
            for name in out[section]:
                if name in names:
                    out[section][name] = "******"
        return out

    def child(self, child_params: Mapping[str, Any] | None = None,
              resource_name: str | None = None,
              resource_type: str | None = None) -> Environment:
        """The environment of a nested stack (Heat's get_child_environment): the
        parent's registry and parameter_defaults, and the child's own parameters.

        ``resource_type`` is the parent resource's type: if the user's registry maps it
        to a provider template, that mapping is left out of the child's registry."""
        entry = (self.registry.template_entry(resource_type, resource_name)
                 if resource_type else None)
        base = self.to_dict()
        base["parameters"] = {}
        flat = child_params is not None and not any(s in child_params for s in SECTIONS)
        if flat and child_params is not None:
            base["parameters"] = dict(child_params)
        env = Environment()
        env.load(base)
        if not flat and child_params is not None:
            env.load(child_params)
        if entry is not None:
            env.registry.remove_entry(entry)
        if resource_name:
            env.registry = env.registry.child(resource_name)
        return env


def build_environment(environment: Mapping[str, Any] | str | None = None, *,
                      environment_files: Sequence[str] | None = (),
                      files: Mapping[str, str] | None = None,
                      user_params: Mapping[str, Any] | None = None,
                      param_schemas: Mapping[str, ParameterSchema] | None = None,
                      ) -> Environment:
    """The environment Heat's engine builds for a create/update/validate request.

    ``environment`` is what the API hands over: as in Heat, the API has already dropped
    the request's ``environment`` body when ``environment_files`` is given and laid the
    request's ``parameters`` over it (``user_params`` does that last step here for
    callers that have not). ``param_schemas`` are the template's (and its provider
    templates') declarations, which the merge of ``environment_files`` needs to decide
    what to keep and how to merge.
    """
    env = parse_environment(environment)
    env.setdefault("parameters", {})
    env["parameters"] = dict(env["parameters"])
    env["parameters"].update(user_params or {})
    for section in ("resource_registry", "parameter_defaults"):
        env.setdefault(section, {})
    for section in ("encrypted_param_names", "event_sinks"):
        env.setdefault(section, [])
    env.pop("parameter_merge_strategies", None)
    if environment_files:
        env = merge_environment_files(env, environment_files, files or {},
                                      param_schemas or {})
    return Environment(env)
