"""Where the orchestration endpoint is and how to authenticate, as the ``openstack`` CLI
takes it: the same ``--os-*`` option names, each also read from its ``OS_*`` variable.

Two ways in:

- **An auth URL** (``--os-auth-url`` / ``OS_AUTH_URL``): a keystoneauth1 session with a
  password or token, the endpoint found in the catalog (service type ``orchestration``,
  ``--os-interface``, ``--os-region-name``) unless ``--os-endpoint`` overrides it. The
  session gives the token header for every request, so it renews a token that expires
  during a long wait.
- **No authentication** (``--os-auth-type none``, or simply no auth URL): the endpoint is
  ``--os-endpoint``, as for ``openstack --os-auth-type none --os-endpoint URL``. Kiln's
  ``kiln serve`` takes the project from the URL, so ``--os-endpoint
  http://127.0.0.1:8004/v1/demo`` works, and so does ``--os-endpoint http://127.0.0.1:8004
  --os-project-id demo``. ``--os-token`` is sent as ``X-Auth-Token`` if given.

``--os-cloud`` (``OS_CLOUD``) names an entry of clouds.yaml (found where the openstack CLI
finds it, ``OS_CLIENT_CONFIG_FILE`` first), read by openstacksdk's own loader so every file
a user already has works; options given on the command line or as ``OS_*`` variables win
over the file's values, as they do for the openstack CLI.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar

import click

from kiln.client.api import HeatAPI

F = TypeVar("F", bound=Callable[..., Any])


class ConnectionError_(click.UsageError):
    """Not enough (or contradictory) settings to reach an endpoint."""


class AuthFailed(click.ClickException):
    """Keystone refused the credentials (or could not be reached): exit status 1."""

    def show(self, file: Any = None) -> None:
        click.echo(f"kiln: error: authentication failed: {self.message}", err=True)


@dataclass(frozen=True)
class ConnectionOptions:
    """The ``--os-*`` settings (after their ``OS_*`` variables were applied)."""

    os_cloud: str | None = None
    os_auth_type: str | None = None
    os_auth_url: str | None = None
    os_endpoint: str | None = None
    os_token: str | None = None
    os_username: str | None = None
    os_user_id: str | None = None
    os_password: str | None = None
    os_project_name: str | None = None
    os_project_id: str | None = None
    os_user_domain_name: str | None = None
    os_user_domain_id: str | None = None
    os_project_domain_name: str | None = None
    os_project_domain_id: str | None = None
    os_region_name: str | None = None
    os_interface: str | None = None
    os_cacert: str | None = None
    insecure: bool = False


#: option name -> help; each option reads the OS_* variable of the same name.
_OPTIONS: dict[str, str] = {
    "os_cloud": "A cloud of clouds.yaml to take the settings below from.",
    "os_auth_type": "Authentication type: password (default with an auth URL), token or "
                    "none.",
    "os_auth_url": "Keystone URL (e.g. http://127.0.0.1:5000/v3).",
    "os_endpoint": "Orchestration endpoint, overriding the catalog: <url>/v1/<project>, "
                   "or <url> with --os-project-id.",
    "os_token": "A token (with --os-auth-type token, or sent as is to an endpoint).",
    "os_username": "User name.",
    "os_user_id": "User id.",
    "os_password": "Password.",
    "os_project_name": "Project name.",
    "os_project_id": "Project id (also completes an --os-endpoint without /v1/<project>).",
    "os_user_domain_name": "The user's domain name.",
    "os_user_domain_id": "The user's domain id.",
    "os_project_domain_name": "The project's domain name.",
    "os_project_domain_id": "The project's domain id.",
    "os_region_name": "Region of the catalog endpoint.",
    "os_interface": "Catalog interface: public (default), internal or admin.",
    "os_cacert": "CA bundle to verify the endpoints' TLS certificates.",
}


def connection_options(fn: F) -> F:
    """Add every ``--os-*`` option (and ``--insecure``) to a command."""
    fn = click.option("--insecure", is_flag=True, envvar="OS_INSECURE",
                      help="Do not verify TLS certificates.")(fn)
    for name, help_text in reversed(_OPTIONS.items()):
        flag = "--" + name.replace("_", "-")
        fn = click.option(flag, name, envvar=name.upper(), default=None, metavar="TEXT",
                          show_envvar=True, help=help_text)(fn)
    return fn


def pop_connection_options(kwargs: dict[str, Any]) -> ConnectionOptions:
    """Take the connection settings out of a command's keyword arguments."""
    names = {f.name for f in fields(ConnectionOptions)}
    return ConnectionOptions(**{n: kwargs.pop(n) for n in list(kwargs) if n in names})


_TEMPLATE_VARS = re.compile(r"%\((?:tenant_id|project_id)\)s|\$\((?:tenant_id|project_id)\)s")


def _with_project(endpoint: str, project_id: str | None) -> str:
    """Fill the catalog's ``%(tenant_id)s`` or append ``/v1/<project>`` to a bare root."""
    endpoint = endpoint.rstrip("/")
    if _TEMPLATE_VARS.search(endpoint):
        if not project_id:
            raise ConnectionError_(f"the endpoint {endpoint} needs --os-project-id")
        return _TEMPLATE_VARS.sub(project_id, endpoint)
    if re.search(r"/v1/[^/]+$", endpoint):
        return endpoint
    if project_id:
        base = endpoint[:-3] if endpoint.endswith("/v1") else endpoint
        return f"{base}/v1/{project_id}"
    raise ConnectionError_(
        f"the endpoint {endpoint} names no project: give <url>/v1/<project> or "
        "--os-project-id")


def _keystone_session(opts: ConnectionOptions) -> Any:
    from keystoneauth1 import session
    from keystoneauth1.identity import generic

    auth: Any
    auth_type = (opts.os_auth_type or ("token" if opts.os_token and not opts.os_password
                                       else "password")).lower()
    auth_url: str = opts.os_auth_url or ""
    scope: dict[str, Any] = {"project_id": opts.os_project_id, "project_name": opts.os_project_name,
             "project_domain_id": opts.os_project_domain_id,
             "project_domain_name": opts.os_project_domain_name}
    if auth_type in ("token", "v3token", "v2token"):
        if not opts.os_token:
            raise ConnectionError_("--os-auth-type token needs --os-token (OS_TOKEN)")
        auth = generic.Token(auth_url=auth_url, token=opts.os_token, **scope)
    elif auth_type in ("password", "v3password", "v2password"):
        if not (opts.os_username or opts.os_user_id) or opts.os_password is None:
            raise ConnectionError_(
                "password authentication needs --os-username (OS_USERNAME) and "
                "--os-password (OS_PASSWORD)")
        auth = generic.Password(
            auth_url=auth_url, username=opts.os_username, user_id=opts.os_user_id,
            password=opts.os_password, user_domain_id=opts.os_user_domain_id,
            user_domain_name=opts.os_user_domain_name, **scope)
    else:
        raise ConnectionError_(f"unsupported --os-auth-type {opts.os_auth_type!r} "
                               "(password, token or none)")
    verify: bool | str = False if opts.insecure else (opts.os_cacert or True)
    return session.Session(auth=auth, verify=verify)


#: clouds.yaml auth keys -> the option they fill
_CLOUD_AUTH = {"auth_url": "os_auth_url", "endpoint": "os_endpoint", "token": "os_token",
               "username": "os_username", "user_id": "os_user_id",
               "password": "os_password", "project_name": "os_project_name",
               "project_id": "os_project_id", "tenant_name": "os_project_name",
               "tenant_id": "os_project_id", "user_domain_name": "os_user_domain_name",
               "user_domain_id": "os_user_domain_id",
               "project_domain_name": "os_project_domain_name",
               "project_domain_id": "os_project_domain_id"}


def with_cloud(opts: ConnectionOptions) -> ConnectionOptions:
    """Fill the settings not given from the clouds.yaml entry ``opts.os_cloud`` names."""
    if not opts.os_cloud:
        return opts
    from openstack import config as sdk_config
    from openstack import exceptions as sdk_exc

    try:
        region = sdk_config.OpenStackConfig().get_one(cloud=opts.os_cloud, validate=False)
    except sdk_exc.SDKException as exc:   # no such cloud, or a file that does not parse
        raise ConnectionError_(f"--os-cloud {opts.os_cloud}: {exc}") from exc
    conf: Mapping[str, Any] = region.config
    found: dict[str, Any] = {}
    for key, value in dict(conf.get("auth") or {}).items():
        option = _CLOUD_AUTH.get(key.replace("-", "_"))
        if option and value not in (None, ""):
            found.setdefault(option, str(value))
    found["os_auth_type"] = conf.get("auth_type")
    found["os_region_name"] = region.region_name or None
    found["os_interface"] = conf.get("interface")
    found["os_endpoint"] = conf.get("orchestration_endpoint_override") or found.get(
        "os_endpoint")
    found["os_cacert"] = conf.get("cacert")
    chosen = {name: value for name, value in found.items()
              if value not in (None, "") and getattr(opts, name) is None}
    if conf.get("verify") is False or str(conf.get("insecure")).lower() == "true":
        chosen["insecure"] = True
    return replace(opts, **chosen)


def connect(opts: ConnectionOptions) -> HeatAPI:
    """A :class:`HeatAPI` on the endpoint these settings name."""
    opts = with_cloud(opts)
    verify: bool | str = False if opts.insecure else (opts.os_cacert or True)
    no_auth = (opts.os_auth_type or "").lower() in ("none", "noauth") or (
        not opts.os_auth_url and opts.os_auth_type is None)
    if no_auth:
        if not opts.os_endpoint:
            raise ConnectionError_(
                "no endpoint: give --os-endpoint (OS_ENDPOINT), e.g. "
                "http://127.0.0.1:8004/v1/<project>, or --os-auth-url (OS_AUTH_URL) and "
                "credentials")
        endpoint = _with_project(opts.os_endpoint, opts.os_project_id)
        token = opts.os_token
        headers: Mapping[str, str] = {"X-Auth-Token": token} if token else {}
        return HeatAPI(endpoint, lambda: headers, verify=verify)
    if not opts.os_auth_url:
        raise ConnectionError_(f"--os-auth-type {opts.os_auth_type} needs --os-auth-url "
                               "(OS_AUTH_URL)")
    sess = _keystone_session(opts)
    from keystoneauth1 import exceptions as ks_exc

    try:
        if opts.os_endpoint:
            endpoint = opts.os_endpoint
            project_id = opts.os_project_id or sess.get_project_id()
        else:
            endpoint = sess.get_endpoint(service_type="orchestration",
                                         interface=opts.os_interface or "public",
                                         region_name=opts.os_region_name)
            if not endpoint:
                raise ConnectionError_("the catalog has no orchestration endpoint"
                                       + (f" in region {opts.os_region_name}"
                                          if opts.os_region_name else ""))
            project_id = sess.get_project_id()
        endpoint = _with_project(endpoint, project_id)
    except ks_exc.ClientException as exc:
        raise AuthFailed(str(exc)) from exc

    def auth_headers() -> Mapping[str, str]:
        try:
            return dict(sess.get_auth_headers() or {})
        except ks_exc.ClientException as exc:
            raise AuthFailed(str(exc)) from exc

    return HeatAPI(endpoint, auth_headers, verify=verify)
