"""Stack domain users: the Keystone identities Kiln makes for servers, as Heat makes them.

A server is handed credentials to reach Kiln (a user and password for HEAT_SIGNAL and
POLL_SERVER_HEAT, an EC2 keypair for CFN_SIGNAL, POLL_SERVER_CFN and
AWS::IAM::AccessKey). Those credentials live inside an untrusted machine, so they belong
to users made for the purpose, each with only the ``heat_stack_user`` role (which Heat's
policy lets signal and read metadata, nothing else), in a project of their own per stack.

With Heat's options (``[DEFAULT] stack_user_domain_id`` or ``stack_user_domain_name``,
``stack_domain_admin``, ``stack_domain_admin_password``) the users and the per-stack
project ``<owner project id>-<stack id>`` are made in that domain, by its admin (a
domain-scoped token). Without them Kiln falls back, as Heat does, to the stack owner's
project, with Heat's warning at startup; the users are then made with Kiln's service
credentials (``[keystone_authtoken]``), which must be allowed to create users.

Everything here is synchronous keystoneauth1 (the engine calls it in a worker thread,
:class:`StackUserAdmin`'s async methods) and imports nothing from the engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import secrets
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from oslo_config import cfg

LOG = logging.getLogger("kiln.auth.stack_users")

T = TypeVar("T")

TIMEOUT = 10.0
#: user options Heat sets on its stack users: they are machines, not people, so
#: Keystone's security-compliance rules for passwords and lockout do not apply
USER_OPTIONS = {"ignore_change_password_upon_first_use": True,
                "ignore_password_expiry": True, "ignore_lockout_failure_attempts": True}
PROJECT_DESCRIPTION = "Heat stack user project"
NO_DOMAIN_WARNING = ("stack_user_domain_id or stack_user_domain_name not set in heat.conf "
                     "falling back to using default")

class StackUserError(Exception):
    """Keystone refused or failed a stack-user operation; the message is safe to show."""


class _Conflict(StackUserError):
    """409: the thing exists already (another engine made it first)."""


@dataclass(frozen=True)
class Ec2Credential:
    access: str
    secret: str

    @property
    def credential_id(self) -> str:
        """Keystone's id of an EC2 credential: the SHA-256 of its access key."""
        return credential_id(self.access)


def credential_id(access: str) -> str:
    return hashlib.sha256(access.encode("utf-8")).hexdigest()


def domain_configured(conf: cfg.ConfigOpts) -> bool:
    return bool(conf.stack_user_domain_id or conf.stack_user_domain_name)


def check_config(conf: cfg.ConfigOpts) -> None:
    """Heat's startup check: a domain needs its admin; no domain is a warning."""
    from kiln.conf_loader import ConfigError

    if not domain_configured(conf):
        LOG.warning(NO_DOMAIN_WARNING)
        return
    if not (conf.stack_domain_admin and conf.stack_domain_admin_password):
        raise ConfigError('heat.conf misconfigured, cannot specify "stack_user_domain_id" '
                          'or "stack_user_domain_name" without "stack_domain_admin" and '
                          '"stack_domain_admin_password"')


def identity_url(conf: cfg.ConfigOpts) -> str:
    """Keystone's v3 URL as servers and Kiln reach it: ``[clients_keystone] auth_uri``,
    else ``[keystone_authtoken]``'s www_authenticate_uri or auth_url."""
    url = str(conf.clients_keystone.auth_uri or conf.keystone_authtoken.www_authenticate_uri
              or _opt(conf.keystone_authtoken, "auth_url") or "").rstrip("/")
    if url and not url.endswith("/v3"):
        url += "/v3"
    return url


def _opt(group: Any, name: str) -> Any:
    try:
        return getattr(group, name)
    except cfg.NoSuchOptError:
        return None


def new_password() -> str:
    return secrets.token_urlsafe(24)


class StackUserAdmin:
    """Creates and removes stack users, their projects and their EC2 credentials."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        from keystoneauth1 import adapter, session
        from keystoneauth1.identity import v3

        from kiln.auth.keystone import keystone_session

        self.role_name = str(conf.heat_stack_user_role)
        self.domain_mode = domain_configured(conf)
        self.auth_url = identity_url(conf)
        group = conf.keystone_authtoken
        self.timeout = float(group.http_connect_timeout or TIMEOUT)
        if self.domain_mode:
            domain_id, domain_name = conf.stack_user_domain_id, conf.stack_user_domain_name
            scope: dict[str, Any] = ({"domain_id": domain_id} if domain_id
                                     else {"domain_name": domain_name})
            owner: dict[str, Any] = ({"user_domain_id": domain_id} if domain_id
                                     else {"user_domain_name": domain_name})
            auth = v3.Password(auth_url=self.auth_url, username=conf.stack_domain_admin,
                               password=conf.stack_domain_admin_password, **scope, **owner)
            template = keystone_session(conf, "keystone_authtoken", timeout=self.timeout)
            sess = session.Session(auth=auth, verify=template.verify, cert=template.cert,
                                   timeout=self.timeout)
            self._domain_id: str | None = domain_id
        else:
            sess = keystone_session(conf, "keystone_authtoken", timeout=self.timeout)
            self._domain_id = None
        self._session = sess
        self._api = adapter.Adapter(sess, service_type="identity", interface=group.interface,
                                    region_name=group.region_name, version="3.0")
        self._role_id: str | None = None

    # -- the async face the engine calls ----------------------------------------------------
    async def _run(self, call: Callable[..., T], *args: Any) -> T:
        try:
            return await asyncio.wait_for(asyncio.to_thread(call, *args), self.timeout * 3)
        except TimeoutError:
            raise StackUserError(f"Keystone did not answer within {self.timeout * 3:g} s"
                                 ) from None

    async def create_project(self, owner_project_id: str, stack_id: str) -> str:
        """The stack's user project: a new one in the stack domain (named as Heat names
        it), or, without a domain, the owner's own project."""
        if not self.domain_mode:
            return owner_project_id
        return await self._run(self._create_project, owner_project_id, stack_id)

    async def delete_project(self, project_id: str) -> None:
        """Delete a stack's user project; never one outside the stack domain."""
        if self.domain_mode:
            await self._run(self._delete_project, project_id)

    async def create_user(self, name: str, project_id: str, password: str | None) -> str:
        return await self._run(self._create_user, name, project_id, password)

    async def set_password(self, user_id: str, password: str) -> None:
        await self._run(self._call, "PATCH", f"/users/{user_id}",
                        {"user": {"password": password}})

    async def delete_user(self, user_id: str) -> None:
        await self._run(self._delete_user, user_id)

    async def set_enabled(self, user_id: str, project_id: str, enabled: bool) -> None:
        """Disable (a stack's suspend) or enable (its resume) a stack user, as Heat's
        StackUser does: a disabled user can neither log in nor have its EC2 signatures
        accepted, so its server's signals stop until the stack resumes."""
        await self._run(self._set_enabled, user_id, project_id, enabled)

    async def create_ec2_credential(self, user_id: str, project_id: str) -> Ec2Credential:
        return await self._run(self._create_credential, user_id, project_id)

    async def delete_ec2_credential(self, access: str) -> None:
        await self._run(self._delete, f"/credentials/{credential_id(access)}")

    async def stack_domain_id(self) -> str | None:
        if not self.domain_mode:
            return None
        return await self._run(self._domain)

    # -- Keystone calls ---------------------------------------------------------------------
    def _call(self, method: str, path: str, body: Any = None, **params: Any) -> Any:
        from keystoneauth1 import exceptions as ks_exc

        try:
            reply = self._api.request(path, method, json=body, params=params or None,
                                      raise_exc=False)
        except ks_exc.Unauthorized:
            raise StackUserError("Keystone refused the stack domain admin's credentials"
                                 if self.domain_mode else
                                 "Keystone refused Kiln's service credentials") from None
        except ks_exc.ClientException as exc:
            raise StackUserError(f"Keystone cannot be reached: {type(exc).__name__}") from None
        if reply.status_code == 404:
            raise LookupError(path)
        if reply.status_code == 409:
            raise _Conflict(f"Keystone answered 409 to {method} {path}: {_message(reply)}")
        if reply.status_code >= 400:
            raise StackUserError(f"Keystone answered {reply.status_code} to {method} "
                                 f"{path.split('?')[0]}: {_message(reply)}")
        return reply.json() if reply.content else None

    def _delete(self, path: str) -> None:
        with contextlib.suppress(LookupError):
            self._call("DELETE", path)

    def _domain(self) -> str:
        if self._domain_id is None:
            info = self._session.auth.get_access(self._session)  # type: ignore[union-attr]
            self._domain_id = str(info.domain_id)
        return self._domain_id

    def _role(self) -> str:
        if self._role_id is None:
            found = self._call("GET", "/roles", name=self.role_name)["roles"]
            if len(found) != 1:
                LOG.error("Failed to add stack users to role %s, check role exists!",
                          self.role_name)
                raise StackUserError(f"Can't find role {self.role_name}")
            self._role_id = str(found[0]["id"])
        return self._role_id

    def _create_project(self, owner_project_id: str, stack_id: str) -> str:
        name = f"{owner_project_id}-{stack_id}"[:64]
        body = {"project": {"name": name, "domain_id": self._domain(),
                            "description": PROJECT_DESCRIPTION}}
        try:
            return str(self._call("POST", "/projects", body)["project"]["id"])
        except _Conflict:
            # made meanwhile for the same stack (its name is the stack's)
            found = self._call("GET", "/projects", name=name, domain_id=self._domain())
            if not found["projects"]:
                raise
            return str(found["projects"][0]["id"])

    def _delete_project(self, project_id: str) -> None:
        try:
            project = self._call("GET", f"/projects/{project_id}")["project"]
        except LookupError:
            return
        if project.get("domain_id") != self._domain():
            LOG.warning("Not deleting non heat-domain project")
            return
        self._delete(f"/projects/{project_id}")

    def _create_user(self, name: str, project_id: str, password: str | None) -> str:
        role = self._role()
        user: dict[str, Any] = {"name": name[-255:], "default_project_id": project_id,
                                "options": USER_OPTIONS, "enabled": True}
        if password is not None:
            user["password"] = password
        if self.domain_mode:
            user["domain_id"] = self._domain()
        user_id = str(self._call("POST", "/users", {"user": user})["user"]["id"])
        self._call("PUT", f"/projects/{project_id}/users/{user_id}/roles/{role}")
        return user_id

    def _delete_user(self, user_id: str) -> None:
        """Delete a stack user (its EC2 credentials go with it); in domain mode only a
        user of the stack domain."""
        if self.domain_mode:
            try:
                user = self._call("GET", f"/users/{user_id}")["user"]
            except LookupError:
                return
            if user.get("domain_id") != self._domain():
                raise StackUserError("User delete in invalid domain")
        self._delete(f"/users/{user_id}")

    def _set_enabled(self, user_id: str, project_id: str, enabled: bool) -> None:
        """Heat's checks first: the user is the stack domain's (domain mode) and belongs
        to the stack's user project; a user gone from Keystone is an error, as in Heat."""
        action = "enable" if enabled else "disable"
        try:
            user = self._call("GET", f"/users/{user_id}")["user"]
        except LookupError:
            raise StackUserError(f"Could not find stack user {user_id} to {action} "
                                 "it") from None
        if self.domain_mode and user.get("domain_id") != self._domain():
            raise StackUserError(f"User {action} in invalid domain")
        if user.get("default_project_id") != project_id:
            raise StackUserError(f"User {action} in invalid project")
        if bool(user.get("enabled", True)) != enabled:
            self._call("PATCH", f"/users/{user_id}", {"user": {"enabled": enabled}})

    def _create_credential(self, user_id: str, project_id: str) -> Ec2Credential:
        made = Ec2Credential(access=uuid.uuid4().hex, secret=secrets.token_urlsafe(30))
        blob = json.dumps({"access": made.access, "secret": made.secret})
        self._call("POST", "/credentials", {"credential": {
            "user_id": user_id, "project_id": project_id, "type": "ec2", "blob": blob}})
        return made


def _message(reply: Any) -> str:
    try:
        return str(reply.json()["error"]["message"])[:200]
    except (ValueError, KeyError, TypeError):
        return str(reply.text)[:200]
