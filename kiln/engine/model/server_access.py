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
from typing import Any
from urllib.parse import quote

from kiln import ec2sign, endpoints, signal_tokens

#: the HTTP verb each pre-signed URL is signed for (Heat's SIGNAL_VERB)
SIGNAL_VERBS = {"cfn_waitcondition": "PUT", "cfn_signal": "POST"}


class ServerAccess:
    """The server-facing part of the runtime; the runtime provides ``_live()`` (its
    LiveStack) and ``_services()`` (the engine's PluginServices, whose keypair calls
    reach the service's keypair store)."""

    def _live(self) -> Any:
        raise NotImplementedError

    def _services(self) -> Any:
        raise NotImplementedError

    def _arn(self, resource_name: str) -> str:
        info = self._live().info
        return (f"arn:openstack:heat::{quote(info.project_id, '')}:stacks/"
                f"{quote(info.name, '')}/{quote(info.id, '')}/resources/"
                f"{quote(resource_name)}")

    def signal_url(self, resource_name: str, kind: str) -> str:
        conf, info = self._live().conf, self._live().info
        if kind == "heat":
            return (f"{endpoints.heat_api_root(conf)}/{quote(info.project_id, '')}/stacks/"
                    f"{quote(info.name, '')}/{quote(info.id, '')}/resources/"
                    f"{quote(resource_name, '')}/signal")
        # Heat's arn_url_path: the ARN quoted, its slashes kept
        return f"{endpoints.cfn_signal_root(conf, kind)}/{quote(self._arn(resource_name))}"

    def presigned_signal_url(self, resource_name: str, kind: str,
                             keypair: Mapping[str, str]) -> str:
        return ec2sign.presign(self.signal_url(resource_name, kind), verb=SIGNAL_VERBS[kind],
                               access_key=keypair["access_key"],
                               secret=keypair["secret_key"])

    async def issue_ec2_keypair(self, resource_name: str) -> Mapping[str, str]:
        info = self._live().info
        made = await self._services().issue_ec2_keypair(
            project_id=info.project_id, user_id=self._user_id(resource_name),
            stack_id=info.id, resource_name=resource_name)
        return {"access_key": made["access_key"], "secret_key": made["secret"]}

    async def delete_ec2_keypair(self, access_key: str) -> None:
        await self._services().delete_ec2_keypair(access_key)

    def signal_token(self, resource_name: str) -> str | None:
        info = self._live().info
        return signal_tokens.issue(str(getattr(self._live().conf, "auth_encryption_key", "")),
                                   signal_tokens.SignalGrant(info.project_id, info.id,
                                                             resource_name))

    def _user_id(self, resource_name: str) -> str:
        """The placeholder stack-domain user of a resource: stable per stack and name."""
        return uuid.uuid5(uuid.NAMESPACE_URL,
                          f"kiln-user:{self._live().info.id}/{resource_name}").hex

    async def stack_user(self, resource_name: str, *, password: str | None = None,
                         keypair: bool = False) -> Mapping[str, Any]:
        """Heat's stack-domain user for a server, without an identity service: a stable
        user id and, with ``keypair``, a keypair Kiln issued for the resource (the same
        one on every call) and the absolute CFN metadata URL."""
        info, conf = self._live().info, self._live().conf
        user: dict[str, Any] = {
            "user_id": self._user_id(resource_name),
            "project_id": info.stack_user_project_id or info.project_id,
            "auth_url": "",
            "region_name": getattr(conf, "region_name_for_services", "RegionOne"),
        }
        if keypair:
            found = await self._services().resource_ec2_keypair(info.id, resource_name)
            if found is None:
                made = await self.issue_ec2_keypair(resource_name)
                found = {"access_key": made["access_key"], "secret": made["secret_key"]}
            user["access_key_id"] = found["access_key"]
            user["secret_access_key"] = found["secret"]
            user["metadata_url"] = endpoints.metadata_url(conf)
        return user
