"""``kiln api-cfn`` and ``kiln ec2-credentials``: the CloudFormation API's commands.

``api-cfn`` runs the CloudFormation-compatible API alone (``[heat_api_cfn]``), as Heat's
heat-api-cfn. ``ec2-credentials`` issues, lists and revokes the EC2 keypairs that sign requests
to it when no identity service is configured: the no-auth setup has no Keystone to ask
for them, so the operator hands them out (servers get theirs from their stack).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

import click


def _session(conf: Any) -> Any:
    from sqlalchemy.orm import Session

    from kiln.conf_loader import ConfigError, database_url
    from kiln.db.engine import make_engine
    from kiln.db.migrate import ensure_schema
    from kiln.encryption_key import resolve
    from kiln.server import prepare_database_dir

    url = database_url(conf)
    try:
        prepare_database_dir(conf, url)
        resolve(conf)   # the keypair's secret is encrypted with the servers' key
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    engine = make_engine(url)
    ensure_schema(engine)
    return Session(engine, expire_on_commit=False)


F = TypeVar("F", bound=Callable[..., Any])


class Decorator(Protocol):
    def __call__(self, fn: F, /) -> F: ...


def register(main: click.Group, config_option: Decorator,
             run: Callable[[Sequence[str], Any, Sequence[Any]], None],
             load: Callable[[Sequence[str]], Any], listener_options: Decorator,
             listener_overrides: Callable[[str | None, int | None], Sequence[Any]],
             ) -> None:
    """Add this module's commands to the ``kiln`` group; ``run``, ``load`` and the
    listener flags (``--bind-host``/``--port``, as ``serve`` applies them) are the
    command's own (kiln.cli), passed in so this module does not import it back."""

    @main.command("api-cfn")
    @config_option
    @listener_options
    def api_cfn(config_files: tuple[str, ...], bind_host: str | None,
                port: int | None) -> None:
        """Run only the CloudFormation-compatible API ([heat_api_cfn] bind_host:bind_port).
        A flag wins over the files."""
        run(config_files, "api-cfn", listener_overrides(bind_host, port))

    @main.group("ec2-credentials")
    def ec2_credentials() -> None:
        """EC2 keypairs for the CloudFormation API (no identity service)."""

    @ec2_credentials.command("create")
    @config_option
    @click.option("--project", required=True, help="Project the keypair acts in.")
    @click.option("--user", default="admin", show_default=True,
                  help="User id the keypair acts as.")
    def create(config_files: tuple[str, ...], project: str, user: str) -> None:
        """Issue a keypair; prints {"access", "secret", "project_id", "user_id"} as JSON."""
        from kiln.db.keypairs import create_keypair
        with _session(load(config_files)) as s, s.begin():
            made = create_keypair(s, project_id=project, user_id=user)
        click.echo(json.dumps({"access": made.access_key, "secret": made.secret,
                               "project_id": made.project_id, "user_id": made.user_id}))

    @ec2_credentials.command("list")
    @config_option
    @click.option("--project", default=None, help="Only this project's keypairs.")
    def list_(config_files: tuple[str, ...], project: str | None) -> None:
        """List issued keypairs as JSON (access key, project, user, and the stack and
        resource a server's keypair belongs to); secrets are never shown."""
        from kiln.db.keypairs import issued_keypairs
        with _session(load(config_files)) as s:
            click.echo(json.dumps(issued_keypairs(s, project_id=project), indent=2))

    @ec2_credentials.command("delete")
    @config_option
    @click.argument("access")
    def delete(config_files: tuple[str, ...], access: str) -> None:
        """Revoke a keypair (signed requests with it fail within seconds)."""
        from kiln.db.keypairs import delete_keypair
        with _session(load(config_files)) as s, s.begin():
            found = delete_keypair(s, access)
        if not found:
            raise click.ClickException(f"no EC2 keypair {access}")
        click.echo(f"deleted {access}")
