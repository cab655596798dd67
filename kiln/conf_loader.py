"""Loading heat.conf-style files strictly, without rejecting a real heat.conf.

oslo.config silently ignores keys it has no option for, so a misspelt ``bind_prot`` or a
section Kiln does not have would leave the operator running on defaults without knowing
why. Kiln refuses to start instead, naming the file, section and key. The one exception is
an option Heat 27 itself has but Kiln does not implement (``[keystone_authtoken]``,
``transport_url``, ...): an operator's existing heat.conf must start unchanged, so those
are logged as ignored. Invalid values are reported the same way as unknown keys;
oslo.config only notices those when the option is first read, which may be long after
startup, so every option is read once here.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

from oslo_config import cfg, types

from kiln.conf import CONF
from kiln.errors import did_you_mean

#: oslo.config's own DEFAULT options, not Kiln settings.
INTERNAL_OPTIONS = frozenset({"config_file", "config_dir", "config_source", "shell_completion"})


LOG = logging.getLogger(__name__)


@cache
def heat_options() -> dict[str, frozenset[str]]:
    """Heat 27's option names per section (generated data, see heat27_options.json)."""
    text = resources.files("kiln").joinpath("heat27_options.json").read_text()
    sections: dict[str, list[str]] = json.loads(text)["sections"]
    return {_normalize_section(k): frozenset(v) for k, v in sections.items()}


class ConfigError(Exception):
    """A configuration problem the operator must fix; the message says which and where."""


def _normalize_section(name: str) -> str:
    # oslo.config matches group names case-insensitively, except DEFAULT.
    return name if name == "DEFAULT" else name.lower()


def registered_sections(conf: cfg.ConfigOpts) -> list[tuple[str, Any, dict[str, Any]]]:
    """(section name, attribute holder, {option name: oslo option info}) for every group.

    oslo.config offers no public listing of its groups and options; these two private
    mappings have been stable across its releases.
    """
    sections: list[tuple[str, Any, dict[str, Any]]] = [("DEFAULT", conf, conf._opts)]
    for name in sorted(conf._groups):
        sections.append((name, getattr(conf, name), conf._groups[name]._opts))
    return sections


def known_options(conf: cfg.ConfigOpts) -> dict[str, set[str]]:
    """Section name → every key a config file may set there (names and deprecated names)."""
    known: dict[str, set[str]] = {"DEFAULT": set()}
    for group_name, _, group_opts in registered_sections(conf):
        for info in group_opts.values():
            opt = info["opt"]
            if isinstance(opt, cfg.Opt) and getattr(opt, "positional", False):
                continue
            names = known.setdefault(_normalize_section(group_name), set())
            names.add(opt.dest)
            for deprecated in opt.deprecated_opts:
                section = _normalize_section(deprecated.group or group_name)
                if deprecated.name:
                    known.setdefault(section, set()).add(deprecated.name.replace("-", "_"))
    # Options only settable on the command line are not file keys, and oslo.config's
    # remote config sources are not something Kiln supports.
    known["DEFAULT"].difference_update(INTERNAL_OPTIONS)
    return known


def _parse_sections(path: str) -> dict[str, dict[str, list[str]]]:
    sections: dict[str, dict[str, list[str]]] = {}
    parser = cfg.ConfigParser(path, sections)
    try:
        parser.parse()
    except cfg.ParseError as exc:
        raise ConfigError(f"{path}: cannot parse: {exc.msg} (line {exc.lineno})") from None
    return sections


def check_files(paths: Sequence[str], conf: cfg.ConfigOpts = CONF) -> list[str]:
    """Raise ConfigError for a missing/unreadable file or a key neither Kiln nor Heat has.

    Returns ``section.option`` names that are Heat's but not Kiln's: accepted, ignored.
    """
    known = known_options(conf)
    heat = heat_options()
    ignored: list[str] = []
    for path in paths:
        if not os.path.isfile(path):
            raise ConfigError(f"configuration file not found: {path}")
        if not os.access(path, os.R_OK):
            raise ConfigError(f"configuration file not readable: {path}")
        for section, keys in _parse_sections(path).items():
            name = _normalize_section(section)
            allowed = known.get(name, set())
            heat_only = heat.get(name, frozenset())
            if name not in known:
                if name not in heat:
                    raise ConfigError(
                        f"{path}: unknown section [{section}]; "
                        + (did_you_mean(name, known, "[{}]") or "known sections: "
                           + ", ".join(f"[{s}]" for s in sorted(known))))
                # a Heat section Kiln has no use for; its keys may include auth-plugin
                # options registered only at run time, so the section is taken whole
                ignored.append(f"[{section}]")
                continue
            for key in keys:
                if key in allowed or _auth_plugin_key(name, key):
                    continue
                if key in heat_only:
                    ignored.append(f"{section}.{key}")
                    continue
                close = did_you_mean(key, allowed, "'{}'")
                raise ConfigError(f"{path}: unknown option '{key}' in section [{section}]"
                                  + (f"; {close}" if close else ""))
    return ignored


def _auth_plugin_key(section: str, key: str) -> bool:
    """A key of the keystoneauth1 auth plugin a section's auth_type names: such options
    are registered only when the plugin is loaded, so any installed plugin's keys are
    accepted there (looked up only when a file has such a key: the lookup imports
    keystoneauth1)."""
    from kiln.conf_identity import AUTH_PLUGIN_GROUPS, plugin_option_names

    return section in AUTH_PLUGIN_GROUPS and key in plugin_option_names()


def _file_keys(opt: cfg.Opt, group_name: str) -> set[tuple[str, str]]:
    """(section, key) pairs a config file may use to set ``opt`` (deprecated names too)."""
    pairs = {(_normalize_section(group_name), opt.dest)}
    for deprecated in opt.deprecated_opts:
        if deprecated.name:
            pairs.add((_normalize_section(deprecated.group or group_name),
                       deprecated.name.replace("-", "_")))
    return pairs


def _setting(paths: Sequence[str], opt: cfg.Opt, group_name: str) -> tuple[str, str] | None:
    """The file whose value of ``opt`` is in effect and that value as written: the last
    file setting it (later files win), so an invalid value is reported where the
    operator has to correct it."""
    wanted = _file_keys(opt, group_name)
    for path in reversed(paths):
        for section, keys in _parse_sections(path).items():
            for key, values in keys.items():
                if (_normalize_section(section), key) in wanted:
                    return path, values[-1] if values else ""
    return None


def _expected(opt: cfg.Opt) -> str | None:
    """What an option's value must be, in words, for the types whose own error is
    Python's (``invalid literal for int() with base 10: 'eighty'``)."""
    kind = opt.type
    bounds = ""
    low, high = getattr(kind, "min", None), getattr(kind, "max", None)
    if low is not None and high is not None:
        bounds = f" from {low} to {high}"
    elif low is not None:
        bounds = f" of at least {low}"
    elif high is not None:
        bounds = f" of at most {high}"
    if isinstance(kind, types.Port):
        return f"a port number{bounds}"
    if isinstance(kind, types.Integer):
        return f"an integer{bounds}"
    if isinstance(kind, types.Float):
        return f"a number{bounds}"
    if isinstance(kind, types.Boolean):
        return "true or false"
    return None


def _register_messaging(paths: Sequence[str], conf: cfg.ConfigOpts) -> None:
    """oslo.messaging's options (notifications), registered only when a file sets one:
    registering them imports oslo.messaging, which a server without a broker never needs."""
    from kiln import oslo_notifier

    if any(os.path.isfile(p) and os.access(p, os.R_OK)
           and oslo_notifier.wanted(_parse_sections(p)) for p in paths):
        oslo_notifier.register_options(conf)


def _check_values(conf: cfg.ConfigOpts, paths: Sequence[str]) -> None:
    for group_name, group, opts in registered_sections(conf):
        for name, info in opts.items():
            try:
                getattr(group, name)
            except (cfg.ConfigFileValueError, ValueError) as exc:
                detail = str(exc).split(" is not valid: ", 1)[-1]
                setting = _setting(paths, info["opt"], group_name)
                expected = _expected(info["opt"])
                if setting is not None and expected is not None:
                    detail = f"expected {expected}, got {setting[1]!r}"
                raise ConfigError(
                    f"{setting[0] if setting else 'default'}: invalid value for option "
                    f"'{name}' in section [{group_name}]: {detail}") from None


def load_config(config_files: Sequence[str] = (), conf: cfg.ConfigOpts = CONF) -> cfg.ConfigOpts:
    """Parse ``config_files`` into ``conf`` (later files win) or raise ConfigError."""
    files = [os.path.abspath(os.path.expanduser(p)) for p in config_files]
    _register_messaging(files, conf)
    ignored = check_files(files, conf)
    try:
        conf([], project="kiln", prog="kiln", default_config_files=files,
             default_config_dirs=[], validate_default_values=True, use_env=False)
    except cfg.ConfigFileParseError as exc:
        raise ConfigError(str(exc)) from None
    except (cfg.ConfigFilesNotFoundError, cfg.ConfigFilesPermissionDeniedError) as exc:
        raise ConfigError(str(exc)) from None
    except cfg.Error as exc:
        raise ConfigError(str(exc)) from None
    _check_values(conf, files)
    if ignored:
        LOG.warning("heat.conf options Kiln does not implement are ignored: %s",
                    ", ".join(sorted(set(ignored))))
    return conf


def state_path(conf: cfg.ConfigOpts = CONF) -> str:
    """``[DEFAULT] state_path`` with ``~`` expanded, as an absolute path."""
    return os.path.abspath(os.path.expanduser(str(conf.state_path)))


def database_url(conf: cfg.ConfigOpts = CONF) -> str:
    """``[database] connection``, or the embedded default: SQLite under state_path."""
    connection = conf.database.connection
    if connection:
        return str(connection)
    return "sqlite:///" + os.path.join(state_path(conf), "kiln.sqlite")
