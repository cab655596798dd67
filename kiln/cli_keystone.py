"""``kiln keystone-setup``: the stack user domain and its admin, as heat-keystone-setup-domain.

Run once by a Keystone administrator (the ``OS_*`` variables, or the matching options):
it creates the domain that holds stack users and their per-stack projects, a user
administering it (with the ``admin`` role on the domain), and the ``heat_stack_user``
role, then prints the lines for kiln.conf's ``[DEFAULT]``. Running it again changes
nothing but the admin's password (set to the one given), so it is safe to repeat.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

DOMAIN_DESCRIPTION = "Contains users and projects created by heat"


class SetupError(Exception):
    """What the operator must fix; the message says what Keystone answered."""


class _Keystone:
    def __init__(self, api: Any) -> None:
        self.api = api

    def call(self, method: str, path: str, body: Any = None, *,
             ok: tuple[int, ...] = (200, 201, 204), **params: Any) -> Any:
        reply = self.api.request(path, method, json=body, params=params or None,
                                 raise_exc=False)
        if reply.status_code not in ok:
            try:
                detail = reply.json()["error"]["message"]
            except (ValueError, KeyError, TypeError):
                detail = reply.text[:200]
            if reply.status_code == 403:
                raise SetupError(f"not authorized to {method} {path}: {detail} (log in "
                                 "as a Keystone administrator)")
            raise SetupError(f"Keystone answered {reply.status_code} to {method} {path}: "
                             f"{detail}")
        return reply

    def find_or_create(self, kind: str, body: dict[str, Any], **query: Any) -> dict[str, Any]:
        """The ``kind`` (domain, user, role) named in ``query``, created from ``body`` if
        there is none; ``_created`` says which."""
        found = self.call("GET", f"/{kind}s", **query).json()[f"{kind}s"]
        if found:
            return {**found[0], "_created": False}
        made = self.call("POST", f"/{kind}s", {kind: body}, ok=(201, 409)).json()
        if kind in made:
            return {**made[kind], "_created": True}
        found = self.call("GET", f"/{kind}s", **query).json()[f"{kind}s"]
        if not found:
            raise SetupError(f"Keystone refused to create the {kind} {query}")
        return {**found[0], "_created": False}


def setup_domain(api: Any, *, domain_name: str, admin_name: str, admin_password: str,
                 role_name: str, say: Callable[[str], None]) -> dict[str, str]:
    """Create (or find) the domain, its admin and the stack user role."""
    ks = _Keystone(api)
    domain = ks.find_or_create("domain", {"name": domain_name,
                                          "description": DOMAIN_DESCRIPTION},
                               name=domain_name)
    say(f"{'Created' if domain['_created'] else 'Found'} domain {domain_name} "
        f"({domain['id']})")
    admin = ks.find_or_create("user", {"name": admin_name, "password": admin_password,
                                       "domain_id": domain["id"],
                                       "description": "Heat domain admin"},
                              name=admin_name, domain_id=domain["id"])
    if admin["_created"]:
        say(f"Created user {admin_name} ({admin['id']})")
    else:
        ks.call("PATCH", f"/users/{admin['id']}", {"user": {"password": admin_password}})
        say(f"Found user {admin_name} ({admin['id']}); its password is set to the one given")
    roles = ks.call("GET", "/roles", name="admin").json()["roles"]
    if not roles:
        raise SetupError("Keystone has no 'admin' role to give the domain admin")
    ks.call("PUT", f"/domains/{domain['id']}/users/{admin['id']}/roles/{roles[0]['id']}")
    say(f"User {admin_name} has the admin role on domain {domain_name}")
    role = ks.find_or_create("role", {"name": role_name}, name=role_name)
    say(f"{'Created' if role['_created'] else 'Found'} role {role_name}")
    return {"domain_id": str(domain["id"]), "admin_id": str(admin["id"])}


def _session(auth_url: str, username: str, password: str, project: str,
             user_domain: str, project_domain: str, verify: bool | str) -> Any:
    from keystoneauth1 import adapter, session
    from keystoneauth1.identity import generic

    auth = generic.Password(auth_url=auth_url, username=username, password=password,
                            project_name=project, user_domain_name=user_domain,
                            project_domain_name=project_domain)
    sess = session.Session(auth=auth, verify=verify, timeout=30)
    return adapter.Adapter(sess, service_type="identity", interface="public", version="3.0")


def register(main: click.Group) -> None:
    @main.command("keystone-setup")
    @click.option("--stack-user-domain-name", envvar="HEAT_DOMAIN", default="heat",
                  show_default=True, help="Domain to create for stack users [HEAT_DOMAIN].")
    @click.option("--stack-domain-admin", envvar="HEAT_DOMAIN_ADMIN",
                  default="heat_stack_admin", show_default=True,
                  help="User administering that domain [HEAT_DOMAIN_ADMIN].")
    @click.option("--stack-domain-admin-password", envvar="HEAT_DOMAIN_PASSWORD",
                  help="Password to set for it [HEAT_DOMAIN_PASSWORD] (required).")
    @click.option("--heat-stack-user-role", default="heat_stack_user", show_default=True,
                  help="Role given to stack users (created if missing).")
    @click.option("--os-auth-url", envvar="OS_AUTH_URL", help="Keystone URL [OS_AUTH_URL].")
    @click.option("--os-username", envvar="OS_USERNAME", help="[OS_USERNAME]")
    @click.option("--os-password", envvar="OS_PASSWORD", help="[OS_PASSWORD]")
    @click.option("--os-project-name", envvar="OS_PROJECT_NAME", help="[OS_PROJECT_NAME]")
    @click.option("--os-user-domain-name", envvar="OS_USER_DOMAIN_NAME", default="Default",
                  show_default=True, help="[OS_USER_DOMAIN_NAME]")
    @click.option("--os-project-domain-name", envvar="OS_PROJECT_DOMAIN_NAME",
                  default="Default", show_default=True, help="[OS_PROJECT_DOMAIN_NAME]")
    @click.option("--os-cacert", envvar="OS_CACERT", help="CA bundle [OS_CACERT].")
    @click.option("--insecure", is_flag=True, help="Skip HTTPS certificate checks.")
    def keystone_setup(stack_user_domain_name: str, stack_domain_admin: str,
                       stack_domain_admin_password: str | None, heat_stack_user_role: str,
                       os_auth_url: str | None, os_username: str | None,
                       os_password: str | None, os_project_name: str | None,
                       os_user_domain_name: str, os_project_domain_name: str,
                       os_cacert: str | None, insecure: bool) -> None:
        """Create the stack user domain and its admin in Keystone (as Heat's
        heat-keystone-setup-domain), then print the kiln.conf lines that use them."""
        from kiln.cli import EXIT_CONFIG, EXIT_RUNTIME, _fail

        if not stack_domain_admin_password:
            _fail("Must export HEAT_DOMAIN_PASSWORD or use --stack-domain-admin-password",
                  EXIT_CONFIG)
        missing = [name for name, value in (
            ("OS_AUTH_URL", os_auth_url), ("OS_USERNAME", os_username),
            ("OS_PASSWORD", os_password), ("OS_PROJECT_NAME", os_project_name)) if not value]
        if missing:
            _fail(f"the Keystone administrator's credentials are missing: "
                  f"{', '.join(missing)} (or the matching --os-* options)", EXIT_CONFIG)
        from keystoneauth1 import exceptions as ks_exc

        verify: bool | str = False if insecure else (os_cacert or True)
        api = _session(str(os_auth_url), str(os_username), str(os_password),
                       str(os_project_name), os_user_domain_name, os_project_domain_name,
                       verify)
        try:
            made = setup_domain(api, domain_name=stack_user_domain_name,
                                admin_name=stack_domain_admin,
                                admin_password=stack_domain_admin_password,
                                role_name=heat_stack_user_role,
                                say=lambda text: click.echo(text, err=True))
        except SetupError as exc:
            _fail(str(exc), EXIT_RUNTIME)
        except ks_exc.Unauthorized:
            _fail(f"Keystone refused the credentials of {os_username}", EXIT_RUNTIME)
        except ks_exc.ClientException as exc:
            _fail(f"cannot reach Keystone at {os_auth_url}: {exc}", EXIT_RUNTIME)
        click.echo("\n# Please update your kiln.conf with the following in [DEFAULT]")
        click.echo(f"stack_user_domain_id = {made['domain_id']}")
        click.echo(f"stack_domain_admin = {stack_domain_admin}")
        click.echo("stack_domain_admin_password = <the password given above>")
