"""How a stack's servers reach Kiln: the URLs, keypairs and tokens plugins hand them.

Part of :class:`kiln.engine.model.stack_runtime.StackRuntime` (it mixes this in): every
URL is absolute (:mod:`kiln.endpoints`), CFN signal URLs are pre-signed with a keypair
issued for the resource (:mod:`kiln.ec2sign`, stored by the service), and without an
identity service the stack user's credentials are Kiln's own: a keypair it issued and
checks, a signal token it issued and checks (:mod:`kiln.signal_tokens`).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from kiln import ec2sign, endpoints, signal_tokens

if TYPE_CHECKING:  # the live stack mixes this in through StackRuntime
    from kiln.engine.model.live_stack import LiveStack, PluginServices

#: the HTTP verb each pre-signed URL is signed for (Heat's SIGNAL_VERB)
SIGNAL_VERBS = {"cfn_waitcondition": "PUT", "cfn_signal": "POST"}


class ServerAccess:
    """The server-facing part of the runtime; the runtime provides ``_live()`` (its
    LiveStack) and ``_services()`` (the engine's PluginServices, whose keypair calls
    reach the service's keypair store)."""

    def _live(self) -> LiveStack:
        raise NotImplementedError

    def _services(self) -> PluginServices:
        raise NotImplementedError

    def _arn(self, resource_name: str) -> str:
        info = self._live().info
        return (f"arn:openstack:heat::{quote(info.project_id, '')}:stacks/"
                f"{quote(info.name, '')}/{quote(info.id, '')}/resources/"
                f"{quote(resource_name)}")

    def signal_url(self, resource_name: str, kind: str) -> str:
        conf, info = self._live().conf, self._live().info
        if kind == "heat":
            return self._native_signal_url(resource_name, info.project_id)
        # Heat's arn_url_path: the ARN quoted, its slashes kept
        return f"{endpoints.cfn_signal_root(conf, kind)}/{quote(self._arn(resource_name))}"

    def _native_signal_url(self, resource_name: str, project_id: str) -> str:
        """The native API's signal route of a resource, under ``project_id`` (the stack
        user's project for a stack user, as Heat's HEAT_SIGNAL alarm_url)."""
        conf, info = self._live().conf, self._live().info
        return (f"{endpoints.heat_project_root(conf, quote(project_id, ''))}/stacks/"
                f"{quote(info.name, '')}/{quote(info.id, '')}/resources/"
                f"{quote(resource_name, '')}/signal")

    def presigned_signal_url(self, resource_name: str, kind: str,
                             keypair: Mapping[str, str]) -> str:
        # with Keystone the URL carries no Timestamp: Keystone refuses a signed request
        # 15 minutes after its Timestamp, and a server may signal much later than that
        return ec2sign.presign(self.signal_url(resource_name, kind), verb=SIGNAL_VERBS[kind],
                               access_key=keypair["access_key"],
                               secret=keypair["secret_key"],
                               timestamp=not self._services().keystone_stack_users())

    async def issue_ec2_keypair(self, resource_name: str, *,
                                user: str | None = None) -> Mapping[str, str]:
        """A keypair for ``resource_name``, of the stack user of ``user`` (another
        resource, an AWS::IAM::User) or of the resource's own."""
        info, services = self._live().info, self._services()
        owner = user or resource_name
        if services.keystone_stack_users():
            made = await services.stack_user_keypair(
                info, resource_name, user_resource=owner,
                username=self._live().physical_resource_name(owner))
            self._learn_project(made.get("project_id"))
        else:
            made = await services.issue_ec2_keypair(
                project_id=info.project_id, user_id=self._user_id(owner),
                stack_id=info.id, resource_name=resource_name)
        return {"access_key": made["access_key"], "secret_key": made["secret"]}

    async def delete_ec2_keypair(self, access_key: str) -> None:
        await self._services().delete_ec2_keypair(access_key)

    def signal_token(self, resource_name: str) -> str | None:
        info = self._live().info
        return signal_tokens.issue(str(self._live().conf.auth_encryption_key),
                                   signal_tokens.SignalGrant(info.project_id, info.id,
                                                             resource_name))

    def _user_id(self, resource_name: str) -> str:
        """The placeholder stack-domain user of a resource: stable per stack and name."""
        return uuid.uuid5(uuid.NAMESPACE_URL,
                          f"kiln-user:{self._live().info.id}/{resource_name}").hex

    def _learn_project(self, project_id: Any) -> None:
        """Keep the stack's user project the service just made in the live stack too."""
        info = self._live().info
        if project_id and not info.stack_user_project_id and project_id != info.project_id:
            info.stack_user_project_id = str(project_id)

    async def set_stack_user_enabled(self, resource_name: str, enabled: bool) -> None:
        """Heat's StackUser suspend and resume: the resource's Keystone stack user (and
        so its EC2 credentials) disabled or enabled again. Without Keystone a no-op:
        Kiln's own keypairs and signal tokens have no disabled state, as Heat has no
        stack users without Keystone."""
        services = self._services()
        if services.keystone_stack_users():
            await services.set_stack_user_enabled(self._live().info, resource_name,
                                                  enabled)

    async def stack_user(self, resource_name: str, *, password: str | None = None,
                         keypair: bool = False) -> Mapping[str, Any]:
        """Heat's stack-domain user for a server: a Keystone user in keystone mode
        (kiln.engine.actions.identity); without an identity service a stable
        placeholder id. With ``keypair``, an EC2 keypair of the user (the same one on
        every call) and the absolute CFN metadata URL."""
        info, conf, services = self._live().info, self._live().conf, self._services()
        region = conf.region_name_for_services
        user: dict[str, Any]
        if services.keystone_stack_users():
            made = await services.stack_domain_user(
                info, resource_name, username=self._live().physical_resource_name(
                    resource_name), password=password)
            self._learn_project(made["project_id"])
            user = {**made, "region_name": region}
        else:
            user = {"user_id": self._user_id(resource_name),
                    "project_id": info.stack_user_project_id or info.project_id,
                    "auth_url": "", "region_name": region}
        user["signal_url"] = self._native_signal_url(resource_name, str(user["project_id"]))
        if keypair:
            found = await services.resource_ec2_keypair(info.id, resource_name)
            if found is None:
                pair = await self.issue_ec2_keypair(resource_name)
                access, secret = pair["access_key"], pair["secret_key"]
            else:
                access, secret = found["access_key"], found["secret"]
            user["access_key_id"] = access
            user["secret_access_key"] = secret
            user["metadata_url"] = endpoints.metadata_url(conf)
        return user
