"""Environment documents: parsing them with Heat's checks, and merging several
``environment_files`` the way Heat's engine does (its ``environment_util``).

Kept apart from :mod:`kiln.template.environment` (the registry and the Environment
object) because this is the part that follows Heat's wire rules line by line: which
sections exist, which errors a bad document gives, and how ``parameter_merge_strategies``
combine values from several files.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from kiln import errors as _e
from kiln.template.constraints import str_to_num
from kiln.template.parameters import ParameterSchema
from kiln.template.parser import load_yaml_document

SECTIONS = ("parameters", "resource_registry", "parameter_defaults",
            "encrypted_param_names", "event_sinks", "parameter_merge_strategies")
MERGE_STRATEGIES = ("overwrite", "merge", "deep_merge")

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class EnvironmentFormatError(_e.HTTPBadRequest):
    """An environment that is not a valid mapping of known sections."""

    heat_type = "HTTPBadRequest"


class InvalidMergeStrategyForParam(_e.InvalidMerge):
    heat_type = "InvalidMergeStrategyForParam"


class ConflictingMergeStrategyForParam(_e.InvalidMerge):
    heat_type = "ConflictingMergeStrategyForParam"


# -- parsing -----------------------------------------------------------------------------

def _yaml_load(text: str) -> Any:
    try:
        return load_yaml_document(text)
    except yaml.YAMLError:
        # the pure-Python loader words the error with a snippet, as Heat shows it
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ValueError(str(exc)) from None


def _check_sections(env: Mapping[str, Any]) -> dict[str, Any]:
    for name in env:
        if name not in SECTIONS:
            raise ValueError(f'environment has wrong section "{name}"')
        if env[name] is None:
            raise ValueError(f'environment has empty section "{name}"')
        # Heat does not check the section types and fails later with a Python error;
        # say which section is wrong instead.
        want_list = name in ("encrypted_param_names", "event_sinks")
        if want_list and not isinstance(env[name], list):
            raise ValueError(f'environment section "{name}" must be a list')
        if not want_list and not isinstance(env[name], dict):
            raise ValueError(f'environment section "{name}" must be a mapping')
    return dict(env)


def parse_environment(data: Mapping[str, Any] | str | bytes | None) -> dict[str, Any]:
    """A request's environment as a dict of known sections (Heat's checks and wording)."""
    try:
        if data is None:
            return {}
        if isinstance(data, Mapping):
            return _check_sections(data)
        text = data.decode() if isinstance(data, bytes) else data
        env = _yaml_load(text)
        if env is None:
            env = {}
        if not isinstance(env, dict):
            raise ValueError("The environment is not a valid YAML mapping data type.")
        return _check_sections(env)
    except ValueError as exc:
        raise EnvironmentFormatError(f"Environment not in valid format: {exc}") from None


# -- merging several environment files (Heat's environment_util) ------------------------

def _merge_list(old: Any, new: Any) -> Any:
    if not old:
        return new
    if isinstance(new, list):
        return list(old) + new if isinstance(old, list) else new
    return ",".join([str(old), str(new)])


def _merge_map(old: Any, new: Mapping[str, Any], deep: bool = False) -> Any:
    if not old:
        return new
    if not isinstance(old, dict):
        return new
    for key, value in new.items():
        if value is None:
            continue
        if not deep:
            old[key] = value
        elif isinstance(value, Mapping):
            old[key] = _merge_map(old.get(key), value, True) if old.get(key) else value
        elif isinstance(value, Sequence) and not isinstance(value, str):
            old[key] = _merge_list(old.get(key), value) if old.get(key) else value
        elif isinstance(value, str):
            old[key] = str(old.get(key, "")) + value
        else:
            old[key] = value
    return old


def _parse_for_merge(value: Any, schema: ParameterSchema) -> Any:
    try:
        if schema.value_type == "map":
            text = value if isinstance(value, str) else json.dumps(value)
            if text:
                return json.loads(text)
        elif not isinstance(value, Sequence) and schema.value_type != "number":
            raise ValueError()
    except (ValueError, TypeError) as exc:
        raise _e.StackValidationFailed(f"Invalid parameter in environment {exc}.") from None
    return value


def _merge_parameters(old: dict[str, Any], new: Mapping[str, Any],
                      schemas: Mapping[str, ParameterSchema],
                      strategies: Mapping[str, Any], chosen: dict[str, str],
                      env_file: str) -> dict[str, Any]:
    for key, value in new.items():
        if key not in schemas or value is None:
            continue
        default = strategies.get("default", "overwrite")
        strategy = strategies.get(key, chosen.get(key, default))
        if strategy not in MERGE_STRATEGIES:
            strategy = default
        if key not in chosen:
            chosen[key] = strategy
        elif strategy != chosen[key]:
            raise ConflictingMergeStrategyForParam(
                f"Conflicting merge strategy '{strategy}' for parameter '{key}' in file "
                f"'{env_file}'.")
    if not old:
        return dict(new)
    for key, value in new.items():
        if key not in schemas or value is None:
            continue
        strategy = chosen[key]
        if strategy == "overwrite":
            old[key] = value
            continue
        schema = schemas[key]
        parsed = _parse_for_merge(value, schema)
        vt = schema.value_type
        if vt == "map":
            old[key] = _merge_map(old.get(key, {}), parsed, strategy == "deep_merge")
        elif vt == "list":
            old[key] = _merge_list(old.get(key), parsed)
        elif vt == "string":
            old[key] = str(old.get(key, "")) + str(parsed)
        elif vt == "number":
            old[key] = str_to_num(old.get(key, 0)) + str_to_num(parsed)
        else:
            raise InvalidMergeStrategyForParam(
                f"Invalid merge strategy 'merge' for parameter '{key}'.")
    return old


def merge_environment_files(base: dict[str, Any], environment_files: Sequence[str],
                            files: Mapping[str, str],
                            schemas: Mapping[str, ParameterSchema]) -> dict[str, Any]:
    """Merge the named files, in order, into ``base`` (a parsed environment)."""
    chosen: dict[str, str] = {}
    for name in environment_files:
        if name not in files:
            raise EnvironmentFormatError(
                f"Environment not in valid format: environment file {name} is not in files")
        parsed = parse_environment(files[name])
        strategies = parsed.pop("parameter_merge_strategies", {}) or {}
        for section, value in parsed.items():
            if not value:
                continue
            if section in ("parameters", "parameter_defaults"):
                base[section] = _merge_parameters(base.get(section) or {}, value, schemas,
                                                  strategies, chosen, name)
            elif section in ("event_sinks", "encrypted_param_names"):
                base[section] = list(base.get(section) or []) + list(value)
            else:
                base[section] = _merge_map(base.get(section), value)
    return base
