"""Keystone trusts: how Kiln acts for a stack's owner later (Heat's deferred auth).

At create, the caller's own token asks Keystone for a trust from them (trustor) to the
``[trustee]`` user, on the stack's project, with impersonation and the roles of
``trusts_delegated_roles`` (default: every role of the caller's token), as Heat 27 makes
it. Later, :meth:`TrustDelegation.act_as` logs the trustee in through the trust (a new
trust-scoped token each time, so a trust deleted since is noticed at once), checks the
token impersonates the trustor, and hands the engine an identity whose clients use the
trust. At stack delete (and when an update by another user replaces it) the trust is
deleted, with the deleting user's token when they are its trustor, else through the
trust itself (Keystone lets only the trustor or an admin delete a trust), else as the
trustee.

The trust id is a secret: it is stored encrypted (kiln.db.user_creds), and no message,
log line, event or response carries it; a failing trust is named by its trustor and
stack. keystoneauth1's own request logging is kept out of these calls (``logger``).
Every call runs in a worker thread, bounded by ``[keystone_authtoken]
http_connect_timeout`` (10 s when unset): a hung Keystone costs a clear 503, never a hang.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import session
from keystoneauth1.identity.base import BaseIdentityPlugin
from oslo_config import cfg

from kiln.auth.keystone import (
    DEFAULT_TIMEOUT,
    UNREACHABLE,
    in_thread,
    keystone_session,
    quiet_logger,
)
from kiln.clients.settings import identity_url
from kiln.conf_identity import TRUSTEE_GROUP
from kiln.errors import AuthorizationFailure, MissingCredentialError, ServiceUnavailable

LOG = logging.getLogger("kiln.auth.trusts")
#: keystoneauth1 logs request and response bodies at DEBUG; trust ids are in them
_QUIET = quiet_logger("kiln.auth.trusts.keystoneauth")

T = TypeVar("T")


def trust_name(trustor_user_id: str, stack_name: str) -> str:
    """How messages name a trust without its id (a secret)."""
    return f"the trust user {trustor_user_id} delegated to Kiln for stack {stack_name}"


class Trusts:
    """Keystone's OS-TRUST API as Kiln uses it (plain values in and out: the engine's
    :class:`~kiln.engine.model.delegation.Delegation` is an adapter over this, built by
    kiln.server, since the identity layer imports no engine type)."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        from kiln.conf_loader import ConfigError

        self.conf = conf
        self.reauthenticate = conf.reauthentication_auth_method == "trusts"
        self.redelegation = self.reauthenticate and bool(conf.allow_trusts_redelegation)
        self.delegated_roles = tuple(conf.trusts_delegated_roles or ())
        self.timeout = float(conf.keystone_authtoken.http_connect_timeout or DEFAULT_TIMEOUT)
        url = identity_url(conf)
        if not url:
            raise ConfigError("deferred_auth_method = trusts needs Keystone's URL: "
                              "[clients_keystone] auth_uri or [keystone_authtoken] "
                              "www_authenticate_uri")
        self.identity_url = url
        self.trusts_url = url + "/OS-TRUST/trusts"
        #: the trustee's own session (its user id; deleting a trust as a last resort)
        self.trustee = keystone_session(conf, TRUSTEE_GROUP, timeout=self.timeout)
        #: a session without an identity: requests carry the token they act with
        self.plain = session.Session(verify=self.trustee.verify, cert=self.trustee.cert,
                                     timeout=self.timeout)
        self.trustee_auth_type = str(getattr(conf, TRUSTEE_GROUP).auth_type)
        self._trustee_user_id: str | None = None
        self._service_session: session.Session | None = None

    # -- what the engine's Delegation needs ---------------------------------------------
    async def create(self, *, token: str, user_id: str, project_id: str,
                     roles: tuple[str, ...]) -> str | None:
        """A new trust from the token's user to the trustee; its id. None when the token
        may not delegate at all: Keystone (30 and later) refuses a token obtained with an
        EC2 credential (a CloudFormation API caller's) for any Keystone call, trusts
        included, so such a stack gets no trust."""
        return await self._call(lambda: self._create(token, user_id, project_id, roles),
                                "to give Kiln a trust for the new stack")

    async def use(self, trust_id: str, trustor_user_id: str,
                  stack_name: str) -> tuple[str, ...]:
        """Log the trustee in through the trust now; the roles it carries. Raises
        AuthorizationFailure naming the trust when Keystone refuses it."""
        return await self._call(
            lambda: self._trust_token(trust_id, trustor_user_id, stack_name),
            f"to use {trust_name(trustor_user_id, stack_name)}")

    def client_auth(self, trust_id: str) -> tuple[str, dict[str, str]]:
        """What the stack's OpenStack clients log in with: the trustee through the trust."""
        return self.trustee_auth_type, self._trust_auth(trust_id)

    async def delete(self, trust_id: str, *, trustor_user_id: str, caller_user_id: str | None,
                     caller_token: str | None, stack_id: str) -> None:
        """Delete the trust (the trustor's token when the caller is the trustor, else
        through the trust, else as the trustee); never raises: a stack delete must not
        fail on its trust."""
        token = caller_token if caller_user_id == trustor_user_id else None
        try:
            await self._call(lambda: self._delete(trust_id, token),
                             "to delete a stack's trust")
        except Exception as exc:  # a stack delete must not fail on its trust  # noqa: BLE001
            LOG.warning("could not delete the trust of user %s for stack %s: %s",
                        trustor_user_id, stack_id, exc)

    # -- helpers ------------------------------------------------------------------------
    async def _call(self, work: Callable[[], T], purpose: str) -> T:
        return await in_thread(work, self.timeout, purpose)

    def _unreachable(self, purpose: str) -> ServiceUnavailable:
        LOG.error("cannot reach Keystone %s", purpose)
        return ServiceUnavailable(f"Keystone cannot be reached {purpose}; try again later.")

    def _trust_auth(self, trust_id: str) -> dict[str, str]:
        """The trustee's auth options plus the trust (what the stack's clients log in
        with, in openstacksdk's form)."""
        loader: ks_loading.BaseLoader[Any] = ks_loading.get_plugin_loader(
            self.trustee_auth_type)
        group = getattr(self.conf, TRUSTEE_GROUP)
        options: dict[str, str] = {}
        for opt in loader.get_options():
            value = getattr(group, opt.dest, None)
            if value is not None and opt.dest not in ("project_id", "project_name",
                                                      "project_domain_id",
                                                      "project_domain_name",
                                                      "domain_id", "domain_name",
                                                      "system_scope"):
                options[opt.dest] = str(value)
        options["trust_id"] = trust_id
        return options

    def _trustee_id(self) -> str:
        if self._trustee_user_id is None:
            try:
                self._trustee_user_id = str(self.trustee.get_user_id())
            except ks_exc.Unauthorized:
                LOG.error("Keystone refused Kiln's [trustee] credentials")
                raise AuthorizationFailure(
                    "Keystone refused Kiln's trustee credentials ([trustee]).") from None
            except UNREACHABLE:
                raise self._unreachable("to give Kiln a trust for the new stack "
                                        "(logging in its trustee user)") from None
        return self._trustee_user_id

    def _create(self, token: str, user_id: str, project_id: str,
                token_roles: tuple[str, ...]) -> str | None:
        roles = self.delegated_roles or token_roles
        body = {"trust": {
            "trustor_user_id": user_id, "trustee_user_id": self._trustee_id(),
            "project_id": project_id, "impersonation": True,
            "allow_redelegation": self.redelegation,
            "roles": [{"name": role} for role in roles]}}
        try:
            reply = self.plain.post(self.trusts_url, json=body, authenticated=False,
                                    raise_exc=False, logger=_QUIET,
                                    headers={"X-Auth-Token": token})
        except UNREACHABLE:
            raise self._unreachable("to give Kiln a trust for the new stack") from None
        if reply.status_code == 201:
            return str(reply.json()["trust"]["id"])
        detail = _keystone_message(reply)
        if reply.status_code == 403 and "ec2credential" in self._token_methods(token):
            LOG.warning("user %s signed with an EC2 credential: Keystone lets such tokens "
                        "make no trust, so the stack gets none", user_id)
            return None
        if reply.status_code in (400, 403, 404):
            raise MissingCredentialError(
                f"Missing required credential: roles {sorted(roles)} ({detail})")
        if reply.status_code == 401:
            raise AuthorizationFailure(f"Keystone refused the caller's token for a "
                                       f"trust: {detail}")
        LOG.error("Keystone answered %s to a trust creation: %s", reply.status_code, detail)
        raise ServiceUnavailable(f"Keystone answered {reply.status_code} to a trust "
                                 "creation.")

    def _service(self) -> session.Session:
        """Kiln's service user ([keystone_authtoken], which may validate tokens; the
        trustee's own login is unscoped)."""
        if self._service_session is None:
            self._service_session = keystone_session(self.conf, "keystone_authtoken",
                                                     timeout=self.timeout)
        return self._service_session

    def _token_methods(self, token: str) -> tuple[str, ...]:
        """How the token was obtained (Keystone's answer names no reason for a 403)."""
        try:
            reply = self.plain.get(self.identity_url + "/auth/tokens", auth=self._service().auth,
                                   headers={"X-Subject-Token": token}, raise_exc=False,
                                   logger=_QUIET)
            return tuple(reply.json()["token"]["methods"]) if reply.status_code == 200 else ()
        except (ks_exc.ClientException, ValueError, KeyError, TypeError):
            return ()

    def _trust_token(self, trust_id: str, trustor_user_id: str,
                     stack_name: str) -> tuple[str, ...]:
        """A new trust-scoped token for the trustee (the trust's roles); raises
        AuthorizationFailure naming the trust when Keystone refuses it."""
        plugin = ks_loading.load_auth_from_conf_options(self.conf, TRUSTEE_GROUP,
                                                        trust_id=trust_id)
        name = trust_name(trustor_user_id, stack_name)
        if not isinstance(plugin, BaseIdentityPlugin):
            raise AuthorizationFailure("[trustee] auth_type cannot use a trust.")
        try:
            access = plugin.get_access(self.plain)
        except UNREACHABLE:
            raise self._unreachable(f"to use {name}") from None
        except (ks_exc.Unauthorized, ks_exc.NotFound, ks_exc.Forbidden) as exc:
            LOG.warning("%s cannot be used: %s", name, type(exc).__name__)
            raise AuthorizationFailure(
                f"Kiln cannot act for stack {stack_name}: Keystone refused {name} "
                "(deleted, expired, or the trustor lost its roles).") from None
        if not access.trust_scoped or access.user_id != trustor_user_id:
            raise AuthorizationFailure(
                f"Kiln cannot act for stack {stack_name}: {name} does not impersonate "
                "its trustor.")
        return tuple(access.role_names or ())

    def _delete(self, trust_id: str, trustor_token: str | None) -> None:
        url = f"{self.trusts_url}/{trust_id}"
        attempts: list[tuple[str, dict[str, Any]]] = []
        if trustor_token:
            attempts.append(("the trustor's token", {
                "authenticated": False, "headers": {"X-Auth-Token": trustor_token}}))
        # through the trust itself, as Heat deletes it with the stored context: its
        # token impersonates the trustor, whom Keystone's delete_trust rule allows (a
        # trustee that is no admin may not)
        attempts.append(("the trust", {"auth": ks_loading.load_auth_from_conf_options(
            self.conf, TRUSTEE_GROUP, trust_id=trust_id)}))
        attempts.append(("the trustee", {"auth": self.trustee.auth}))
        last = ""
        for who, kwargs in attempts:
            try:
                reply = self.plain.delete(url, raise_exc=False, logger=_QUIET, **kwargs)
            except UNREACHABLE:
                raise self._unreachable("to delete a stack's trust") from None
            except ks_exc.ClientException as exc:  # the trustee cannot log in
                last = f"{who}: {type(exc).__name__}"
                continue
            if reply.status_code in (204, 404):
                return
            last = f"{who}: Keystone answered {reply.status_code}"
        raise AuthorizationFailure(f"the trust was not deleted ({last})")


def _keystone_message(reply: Any) -> str:
    try:
        return str(reply.json()["error"]["message"])
    except Exception:  # not Keystone's error body  # noqa: BLE001
        return f"HTTP {reply.status_code}"

