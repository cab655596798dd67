"""The template, environment and options of a stack create/update/preview/validate body.

Heat's API parses these before the engine sees them: the template as JSON or YAML
(timestamps kept as strings), the environment checked for known sections, user
``parameters`` merged into it, and ``template_url`` fetched with the operator's scheme,
size and timeout limits.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from kiln import errors, urlfetch
from kiln.api.faults import bad_request
from kiln.api.params import extract_int, extract_tags
from kiln.template.parser import load_yaml_document
from kiln.template.yaml_loader import describe_error

ENV_SECTIONS = ("parameters", "resource_registry", "parameter_defaults",
                "encrypted_param_names", "event_sinks", "parameter_merge_strategies")
VERSION_KEYS = ("HeatTemplateFormatVersion", "heat_template_version",
                "AWSTemplateFormatVersion")
STACK_NAME_RE = re.compile(r"[a-zA-Z][a-zA-Z0-9_.-]{0,254}$")
# body keys that are not passed on to the engine as ``args``
INSTANTIATION_KEYS = frozenset({"stack_name", "template", "template_url", "parameters",
                                "environment", "files", "environment_files",
                                "files_container"})


def check_template_size(text: str, limit: int) -> None:
    if len(text) > limit:
        raise errors.RequestLimitExceeded(
            f"Request limit exceeded: Template size ({len(text)} bytes) exceeds maximum "
            f"allowed size ({limit} bytes).")


def _yaml_load(text: str | bytes) -> Any:
    try:
        return load_yaml_document(text)
    except yaml.YAMLError:
        # the pure-Python loader's message quotes the offending snippet
        return yaml.load(text, Loader=yaml.SafeLoader)


class TemplateFormatError(ValueError):
    """Heat's message for a template that does not parse, and Kiln's pointer to the
    place (``template, line 5, column 27: ...``) for the fault's ``error.hint``."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


def simple_parse(text: str | bytes) -> dict[str, Any]:
    """JSON or YAML mapping; ValueError with Heat's message otherwise."""
    try:
        tpl = json.loads(text)
    except (ValueError, RecursionError):
        try:
            tpl = _yaml_load(text)
        except (yaml.YAMLError, RecursionError) as exc:
            hint = describe_error(exc, "template") if isinstance(exc, yaml.YAMLError) else None
            raise TemplateFormatError(f"Error parsing template [root stack] {exc}",
                                      hint) from None
        if tpl is None:
            tpl = {}
    if not isinstance(tpl, dict):
        raise ValueError("The template is not a JSON object or YAML mapping.")
    return tpl


def parse_template(text: str | bytes, limit: int) -> dict[str, Any]:
    check_template_size(text if isinstance(text, str) else text.decode("utf-8", "replace"),
                        limit)
    try:
        tpl = simple_parse(text)
        if not any(key in tpl for key in VERSION_KEYS):
            raise ValueError("Template format version not found.")
    except ValueError as exc:
        error = bad_request(f"Template not in valid format: {exc}")
        error.hint = exc.hint if isinstance(exc, TemplateFormatError) else None
        raise error from None
    return tpl


def validate_environment(env: Mapping[str, Any]) -> dict[str, Any]:
    for section, value in env.items():
        if section not in ENV_SECTIONS:
            raise ValueError(f'environment has wrong section "{section}"')
        if value is None:
            raise ValueError(f'environment has empty section "{section}"')
    return dict(env)


def parse_environment(data: Any) -> dict[str, Any]:
    """The request's ``environment``: a map, or YAML text of one. As Heat 27 answers: a
    null is no environment, and any other JSON value (a list, a number) is a 400 with
    the generic message (Heat's YAML parser fails on it with a TypeError)."""
    if data is None:
        return {}
    if not isinstance(data, Mapping | str | bytes):
        raise bad_request()
    try:
        if isinstance(data, Mapping):
            return validate_environment(data)
        try:
            env = _yaml_load(data)
        except (yaml.YAMLError, RecursionError) as exc:
            raise ValueError(str(exc)) from None
        if env is None:
            env = {}
        if not isinstance(env, dict):
            raise ValueError("The environment is not a valid YAML mapping data type.")
        return validate_environment(env)
    except ValueError as exc:
        raise bad_request(f"Environment not in valid format: {exc}") from None


def default_for_missing(env: dict[str, Any]) -> dict[str, Any]:
    for section in ENV_SECTIONS[:-1]:
        if section not in env:
            env[section] = [] if section in ("encrypted_param_names", "event_sinks") else {}
    return env


def check_stack_name(name: Any) -> str:
    if not isinstance(name, str):
        raise errors.StackValidationFailed(f"Invalid stack name {name}, must be a string")
    if not STACK_NAME_RE.match(name):
        raise errors.StackValidationFailed(
            f'Invalid stack name {name} must contain only alphanumeric or "_-." characters, '
            "must start with alpha and must be 255 characters or less.")
    return name


async def fetch_template(url: str, *, allowed_schemes: list[str],
                         timeout: float,  # httpx's per-request timeout  # noqa: ASYNC109
                         limit: int, allowed_hosts: Sequence[str] = ()) -> bytes:
    """The template at ``url``, every hop checked (see :mod:`kiln.urlfetch`)."""
    try:
        return await urlfetch.fetch(url, allowed_schemes=allowed_schemes,
                                    allowed_hosts=allowed_hosts, timeout=timeout,
                                    limit=limit)
    except urlfetch.Refused as exc:
        raise bad_request(f"Could not retrieve template: {exc}") from None
    except urlfetch.FetchError:
        raise bad_request("Could not retrieve template: Failed to retrieve template from "
                          f"{url}") from None


class Instantiation:
    """The parts of a stack body the engine takes, validated the way Heat's API does."""

    def __init__(self, body: Mapping[str, Any], *, patch: bool = False,
                 max_template_size: int) -> None:
        self.data = dict(body)
        self.patch = patch
        self.limit = max_template_size
        if patch:
            self.data["existing"] = True

    def stack_name(self) -> str:
        if "stack_name" not in self.data:
            raise bad_request("No stack name specified")
        return check_stack_name(self.data["stack_name"])

    async def template(self, *, allowed_schemes: list[str],
                       timeout: float,  # the template_url fetch timeout  # noqa: ASYNC109
                       allowed_hosts: Sequence[str] = ()) -> dict[str, Any] | None:
        data = self.data
        if "adopt_stack_data" in data:
            adopt = data["adopt_stack_data"]
            try:
                adopt = adopt if isinstance(adopt, dict) else simple_parse(adopt)
                check_template_size(str(adopt["template"]), self.limit)
                tpl = adopt["template"]
            except (ValueError, KeyError, TypeError) as exc:
                raise bad_request(f"Invalid adopt data: {exc}") from None
            if not isinstance(tpl, dict):
                raise bad_request("Invalid adopt data: template is not a mapping")
            data["adopt_stack_data"] = adopt
            return tpl
        raw: Any = None
        if "template" in data:
            raw = data["template"]
            if isinstance(raw, dict):
                check_template_size(str(raw), self.limit)
                return raw
            if raw is not None and not isinstance(raw, str):
                raise bad_request()
        elif "template_url" in data:
            url = data["template_url"]
            if not isinstance(url, str):
                raise bad_request()
            raw = await fetch_template(url, allowed_schemes=allowed_schemes,
                                       timeout=timeout, limit=self.limit,
                                       allowed_hosts=allowed_hosts)
        if raw is None:
            if self.patch:
                return None
            raise bad_request("No template specified")
        return parse_template(raw, self.limit)

    def environment(self) -> dict[str, Any]:
        env: dict[str, Any] = {}
        if "environment" in self.data and not self.data.get("environment_files"):
            env = parse_environment(self.data["environment"])
        default_for_missing(env)
        params = self.data.get("parameters", {})
        if params is None:
            params = {}
        if not isinstance(params, dict) or not isinstance(env["parameters"], dict):
            raise bad_request()
        env["parameters"].update(params)
        return env

    def files(self) -> dict[str, Any]:
        files = self.data.get("files") or {}
        if not isinstance(files, dict):
            raise bad_request("files must be a map of file names to contents")
        for name, content in files.items():
            if not isinstance(content, str):
                raise bad_request(f'files: the contents of "{name}" must be a string')
        return files

    def environment_files(self) -> list[str] | None:
        env_files = self.data.get("environment_files")
        if env_files is None:
            return None
        if not isinstance(env_files, list) or not all(isinstance(f, str) for f in env_files):
            raise bad_request("environment_files must be a list of file names")
        return env_files

    def args(self, *, is_update: bool = False) -> dict[str, Any]:
        args = {k: v for k, v in self.data.items() if k not in INSTANTIATION_KEYS}
        if "timeout_mins" in args:
            args["timeout_mins"] = extract_int("timeout_mins", args["timeout_mins"])
        if args.get("tags") is not None:
            args["tags"] = extract_tags(args["tags"])
        if not is_update and "converge" in args:
            raise bad_request("converge flag only supported in stack update (or update "
                              "preview) request.")
        for flag in ("disable_rollback", "existing", "converge"):
            value = args.get(flag)
            if value is not None and not isinstance(value, bool):
                if str(value).lower() not in ("true", "false"):
                    raise bad_request(f'Unrecognized value "{value}" for "{flag}", '
                                      "acceptable values are: true, false.")
                args[flag] = str(value).lower() == "true"
        cleared = args.get("clear_parameters")
        if cleared is not None and (not isinstance(cleared, list)
                                    or not all(isinstance(n, str) for n in cleared)):
            raise bad_request("clear_parameters must be a list of parameter names")
        return args
