"""The ``kiln`` command.

Every subcommand loads configuration the same way (strictly, see ``kiln.conf_loader``)
and turns the problems an operator can fix (bad config, taken port, unreachable database)
into one line on stderr and a non-zero exit status, never a traceback: a traceback says
"Kiln is broken" when the operator's file is what needs fixing.
"""

from __future__ import annotations

import importlib
import logging
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from kiln import __version__

if TYPE_CHECKING:
    from kiln.server import Role

_STARTED_AT = time.monotonic()

F = TypeVar("F", bound=Callable[..., Any])

#: Exit status for configuration errors (the operator's input), distinct from runtime ones.
EXIT_CONFIG = 2
EXIT_RUNTIME = 1

#: a command-line flag standing for a configuration option: (flag, group, option, value;
#: None when the flag was not given, so the file's value or the default stands)
Override = tuple[str, str, str, Any]


def _config_option(fn: F) -> F:
    return click.option(
        "--config-file", "config_files", multiple=True, metavar="PATH",
        type=click.Path(dir_okay=False),
        help="heat.conf-style file; may be repeated, later files win.")(fn)


def _fail(message: str, status: int) -> NoReturn:
    click.echo(f"kiln: error: {message}", err=True)
    sys.exit(status)


def _load(config_files: Sequence[str], overrides: Sequence[Override] = ()) -> Any:
    from kiln.conf_loader import ConfigError, load_config
    try:
        conf = load_config(config_files)
    except ConfigError as exc:
        _fail(str(exc), EXIT_CONFIG)
    for flag, group, name, value in overrides:
        if value is None:
            continue
        try:
            conf.set_override(name, value, group=group)
        except ValueError as exc:
            _fail(f"{flag}: invalid value {value!r}: {exc}", EXIT_CONFIG)
    from kiln.logging import log_file_path, setup_logging
    path = log_file_path(conf.log_file, conf.log_dir)
    try:
        setup_logging(debug=conf.debug, log_file=path, json_lines=conf.log_json
                      if conf.log_json is not None else path is not None
                      or not sys.stderr.isatty())
    except OSError as exc:
        _fail(f"cannot open log file {path}: {exc.strerror}", EXIT_CONFIG)
    return conf


def _run(config_files: Sequence[str], role: Role,
         overrides: Sequence[Override] = ()) -> None:
    conf = _load(config_files, overrides)
    from kiln.conf_loader import ConfigError
    from kiln.server import StartupError, run_blocking
    try:
        run_blocking(conf, role, started_at=_STARTED_AT)
    except ConfigError as exc:
        _fail(str(exc), EXIT_CONFIG)
    except StartupError as exc:
        _fail(str(exc), EXIT_RUNTIME)
    except Exception:
        # A bug, not an operator error: the traceback goes to the log, as a JSON field.
        logging.getLogger("kiln").exception("kiln %s failed", role)
        _fail("unexpected internal error (details in the log)", EXIT_RUNTIME)


class _Commands(click.Group):
    """The ``kiln`` group, whose client command (``kiln stack ...``) is imported when it
    is named: it pulls in rich, pygments and the API client, ~10 MB of RSS that every
    ``kiln serve`` would otherwise carry for its whole life without using it
    (tests/unit/test_startup_imports.py)."""

    LAZY = {"stack": "kiln.client.commands"}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.LAZY})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.LAZY and cmd_name not in self.commands:
            module = importlib.import_module(self.LAZY[cmd_name])
            self.add_command(getattr(module, cmd_name))
        return super().get_command(ctx, cmd_name)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kiln")
def main() -> None:
    """Kiln: an orchestration service that speaks OpenStack Heat's API."""


#: ``kiln serve``'s listener flags and the options they set (a flag wins over the files)
SERVE_FLAGS: tuple[tuple[str, str, str], ...] = (
    ("--bind-host", "heat_api", "bind_host"), ("--port", "heat_api", "bind_port"),
    ("--cfn-bind-host", "heat_api_cfn", "bind_host"),
    ("--cfn-port", "heat_api_cfn", "bind_port"),
    ("--cloudwatch-bind-host", "heat_api_cloudwatch", "bind_host"),
    ("--cloudwatch-port", "heat_api_cloudwatch", "bind_port"),
    ("--cfn/--no-cfn", "kiln_api", "serve_cfn"),
    ("--cloudwatch/--no-cloudwatch", "kiln_api", "serve_cloudwatch"))

_PORT = click.IntRange(0, 65535)

#: the listener each single-API command runs: (its options' group, what it serves, port)
LISTENERS: dict[str, tuple[str, str, int]] = {
    "api": ("heat_api", "native API and the dashboard", 8004),
    "api-cfn": ("heat_api_cfn", "CloudFormation API", 8000),
    "api-cloudwatch": ("heat_api_cloudwatch", "CloudWatch API", 8003)}


def _listener_options(role: str) -> Callable[[F], F]:
    """``--bind-host``/``--port`` for a command running one API (``kiln api``, ``api-cfn``,
    ``api-cloudwatch``): the flags ``serve`` has for that listener, applied the same way
    (overrides of ``[group] bind_host/bind_port`` given to :func:`_run`; see
    :func:`_listener_overrides`), so a split deployment needs no config file per port."""
    group, what, port = LISTENERS[role]

    def decorate(fn: F) -> F:
        fn = click.option("--port", type=_PORT, metavar="PORT",
                          help=f"Port of the {what} ([{group}] bind_port; default "
                               f"{port}).")(fn)
        return click.option("--bind-host", metavar="HOST",
                            help=f"Address of the {what} ([{group}] bind_host; default "
                                 "127.0.0.1).")(fn)
    return decorate


def _listener_overrides(role: str, bind_host: str | None,
                        port: int | None) -> list[Override]:
    """The overrides :func:`_listener_options`' flags stand for (None: not given)."""
    group = LISTENERS[role][0]
    return [("--bind-host", group, "bind_host", bind_host),
            ("--port", group, "bind_port", port)]


@main.command()
@_config_option
@click.option("--bind-host", metavar="HOST", help="Address of the native API and the "
              "dashboard ([heat_api] bind_host; default 127.0.0.1).")
@click.option("--port", type=_PORT, metavar="PORT", help="Port of the native API and the dashboard "
              "([heat_api] bind_port; default 8004).")
@click.option("--cfn-bind-host", metavar="HOST",
              help="Address of the CloudFormation API ([heat_api_cfn] bind_host).")
@click.option("--cfn-port", type=_PORT, metavar="PORT", help="Port of the CloudFormation "
              "API and of the signal URLs servers call ([heat_api_cfn] bind_port; default "
              "8000).")
@click.option("--cloudwatch-bind-host", metavar="HOST", help="Address of the CloudWatch "
              "API ([heat_api_cloudwatch] bind_host).")
@click.option("--cloudwatch-port", type=_PORT, metavar="PORT", help="Port of the CloudWatch API "
              "([heat_api_cloudwatch] bind_port; default 8003).")
@click.option("--cfn/--no-cfn", "cfn", default=None, help="Serve the CloudFormation API "
              "or not ([kiln_api] serve_cfn; default: serve it).")
@click.option("--cloudwatch/--no-cloudwatch", "cloudwatch", default=None,
              help="Serve the CloudWatch API or not ([kiln_api] serve_cloudwatch; "
                   "default: serve it).")
def serve(config_files: tuple[str, ...], bind_host: str | None, port: int | None,
          cfn_bind_host: str | None, cfn_port: int | None,
          cloudwatch_bind_host: str | None, cloudwatch_port: int | None,
          cfn: bool | None, cloudwatch: bool | None) -> None:
    """Run the whole service in one process: the native API and dashboard
    ([heat_api], port 8004), the CloudFormation API ([heat_api_cfn], 8000), the CloudWatch
    API ([heat_api_cloudwatch], 8003) and the engine. A flag wins over the files."""
    values = (bind_host, port, cfn_bind_host, cfn_port, cloudwatch_bind_host,
              cloudwatch_port, cfn, cloudwatch)
    _run(config_files, "all", [(flag, group, name, value) for (flag, group, name), value
                               in zip(SERVE_FLAGS, values, strict=True)])


@main.command()
@_config_option
@_listener_options("api")
def api(config_files: tuple[str, ...], bind_host: str | None, port: int | None) -> None:
    """Run only the API; an engine process (`kiln engine`) shares the database. A flag
    wins over the files."""
    _run(config_files, "api", _listener_overrides("api", bind_host, port))


@main.command()
@_config_option
def engine(config_files: tuple[str, ...]) -> None:
    """Run only the engine, working on the stacks in the shared database."""
    _run(config_files, "engine")


@main.command("api-cloudwatch")
@_config_option
@_listener_options("api-cloudwatch")
def api_cloudwatch(config_files: tuple[str, ...], bind_host: str | None,
                   port: int | None) -> None:
    """Run only the CloudWatch API ([heat_api_cloudwatch] bind_host:bind_port)."""
    _run(config_files, "api-cloudwatch",
         _listener_overrides("api-cloudwatch", bind_host, port))


def _register_cfn() -> None:
    from kiln.cli_cfn import register
    register(main, _config_option, _run, _load, _listener_options("api-cfn"),
             lambda host, port: _listener_overrides("api-cfn", host, port))


_register_cfn()


def _register_keystone() -> None:
    from kiln.cli_keystone import register
    register(main)


_register_keystone()


@main.group()
def db() -> None:
    """Database administration."""


@db.command()
@_config_option
@click.option("--revision", default="head", show_default=True,
              help="Alembic revision to upgrade to.")
def upgrade(config_files: tuple[str, ...], revision: str) -> None:
    """Create or migrate the database schema named by [database] connection."""
    conf = _load(config_files)
    from sqlalchemy.exc import ArgumentError, OperationalError

    from kiln.conf_loader import ConfigError, database_url
    from kiln.db import migrate
    from kiln.server import prepare_database_dir
    url = database_url(conf)
    try:
        prepare_database_dir(conf, url)
        migrate.upgrade(url, revision)
    except ConfigError as exc:
        _fail(str(exc), EXIT_CONFIG)
    except ArgumentError as exc:
        _fail(f"invalid [database] connection: {exc}", EXIT_CONFIG)
    except ModuleNotFoundError as exc:
        _fail(f"[database] connection needs the Python package {exc.name!r}", EXIT_CONFIG)
    except OperationalError as exc:
        _fail(f"cannot open the database: {exc.orig}", EXIT_RUNTIME)
    click.echo(f"database at {_redact(url)} upgraded to {revision}")


@db.command("update-params")
@_config_option
@click.option("--previous-encryption-key", "previous", multiple=True, metavar="KEY",
              help="A key secrets may have been encrypted with before (may be repeated); "
                   "Heat's public sample key is always tried.")
def update_params(config_files: tuple[str, ...], previous: tuple[str, ...]) -> None:
    """Re-encrypt every secret at rest with the configured auth_encryption_key (Heat's
    heat-manage update_params). Stop every kiln process on the database first."""
    conf = _load(config_files)
    from sqlalchemy.exc import ArgumentError, OperationalError
    from sqlalchemy.orm import Session

    from kiln.conf_loader import ConfigError, database_url
    from kiln.db.engine import make_engine
    from kiln.db.migrate import ensure_schema
    from kiln.db.rekey import RekeyFailed, reencrypt_all
    from kiln.encryption_key import resolve
    from kiln.server import prepare_database_dir
    url = database_url(conf)
    try:
        prepare_database_dir(conf, url)
        resolve(conf)
        engine = make_engine(url)
        ensure_schema(engine)
        with Session(engine) as s, s.begin():
            done = reencrypt_all(s, previous)
        engine.dispose()
    except ArgumentError as exc:
        _fail(f"invalid [database] connection: {exc}", EXIT_CONFIG)
    except OperationalError as exc:
        _fail(f"cannot open the database: {exc.orig}", EXIT_RUNTIME)
    except ConfigError as exc:
        _fail(str(exc), EXIT_CONFIG)
    except RekeyFailed as exc:
        _fail(f"{exc} (nothing was changed)", EXIT_RUNTIME)
    for column, count in sorted(done.items()):
        click.echo(f"{column}: {count} re-encrypted")
    click.echo(f"database at {_redact(url)}: {sum(done.values())} values re-encrypted "
               "with the configured auth_encryption_key")


def _redact(url: str) -> str:
    from sqlalchemy.engine import make_url
    return make_url(url).render_as_string(hide_password=True)


@main.command("config-reference")
@click.option("--write", "target", type=click.Path(dir_okay=False, exists=True),
              help="Replace the marked reference section of this file (e.g. "
                   "docs/configuration.md) instead of printing.")
def config_reference(target: str | None) -> None:
    """Print every configuration option as Markdown (docs/configuration.md's reference
    section)."""
    from kiln.conf_reference import render_markdown, replace_section
    text = render_markdown()
    if target is None:
        click.echo(text, nl=False)
        return
    with open(target, encoding="utf-8") as f:
        old = f.read()
    try:
        new = replace_section(old, text)
    except ValueError as exc:
        _fail(f"{target}: {exc}", EXIT_RUNTIME)
    with open(target, "w", encoding="utf-8") as f:
        f.write(new)


@main.command("policy-reference")
def policy_reference() -> None:
    """Print Heat's default policy rules as a commented policy.yaml (for [oslo_policy]
    policy_file), in oslopolicy-sample-generator's shape."""
    from kiln.policy.reference import render
    click.echo(render(), nl=False)


if __name__ == "__main__":  # pragma: no cover
    main()
