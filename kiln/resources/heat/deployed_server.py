"""OS::Heat::DeployedServer: a server built outside Kiln that takes software deployments.

It owns no machine; it publishes, in its metadata, where and how the server's
os-collect-config agent polls for deployments (``os-collect-config``) next to the
``deployments`` list the engine maintains. The credentials in that configuration come
from the runtime's stack user (Heat's stack-domain user).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from kiln.resources.base import (
    Attribute,
    Properties,
    Property,
    SupportStatus,
    Token,
)
from kiln.resources.common import collect_config
from kiln.resources.common.collect_config import TRANSPORTS
from kiln.resources.common.stack_user import StackUserResource
from kiln.template.constraints import AllowedValues, Length
from kiln.template.definitions import ResourceDefinition


class DeployedServer(StackUserResource):
    type_name = "OS::Heat::DeployedServer"
    secret_data = frozenset({"password", "temp_url_key"})
    support_status = SupportStatus()          # Heat 27 gives no version for this type
    description = (
        "A resource for managing servers that are already deployed.\n\n"
        "A DeployedServer resource manages resources for servers that have been\n"
        "deployed externally from OpenStack. These servers can be associated with\n"
        "SoftwareDeployments for further orchestration via Heat.")
    properties_schema = {
        "name": Property("string", "Server name.", update_allowed=True),
        "metadata": Property(
            "map",
            "Arbitrary key/value metadata to store for this server. Both keys and values "
            "must be 255 characters or less. Non-string values will be serialized to JSON "
            "(and the serialized string must be 255 characters or less).",
            update_allowed=True,
            support_status=SupportStatus("DEPRECATED", "This property will be ignored",
                                         "9.0.0", SupportStatus(version="8.0.0"))),
        "software_config_transport": Property(
            "string",
            "How the server should receive the metadata required for software "
            "configuration. POLL_SERVER_CFN will allow calls to the cfn API action "
            "DescribeStackResource authenticated with the provided keypair. "
            "POLL_SERVER_HEAT will allow calls to the Heat API resource-show using the "
            "provided keystone credentials. POLL_TEMP_URL will create and populate a Swift "
            "TempURL with metadata for polling. ZAQAR_MESSAGE will create a dedicated "
            "zaqar queue and post the metadata for polling.",
            default="POLL_SERVER_CFN", update_allowed=True,
            constraints=[AllowedValues(TRANSPORTS)]),
        "deployment_swift_data": Property(
            "map",
            "Swift container and object to use for storing deployment data for the server "
            "resource. The parameter is a map value with the keys \"container\" and "
            "\"object\", and the values are the corresponding container and object names. "
            "The software_config_transport parameter must be set to POLL_TEMP_URL for "
            "swift to be used. If not specified, and software_config_transport is set to "
            "POLL_TEMP_URL, a container will be automatically created from the resource "
            "name, and the object name will be a generated uuid.",
            default={}, update_allowed=True, support_status=SupportStatus(version="9.0.0"),
            schema={
                "container": Property("string", "Name of the container.",
                                      constraints=[Length(min=1)]),
                "object": Property("string", "Name of the object.",
                                   constraints=[Length(min=1)]),
            }),
    }
    attributes_schema = {
        "name": Attribute("Name of the server.", "string"),
        "os_collect_config": Attribute(
            "The os-collect-config configuration for the server's local agent to be "
            "configured to connect to Heat to retrieve deployment data.", "map",
            support_status=SupportStatus(version="9.0.0")),
    }

    async def _publish(self, transport: str) -> None:
        await collect_config.publish(self, transport)

    async def handle_create(self) -> Token:
        self.resource_id = str(uuid.uuid4())
        self.data["server_name"] = self.physical_resource_name()
        await self._publish(self.properties["software_config_transport"])
        return None

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        if "software_config_transport" in prop_diff:
            await self._publish(new_properties["software_config_transport"])
        return None

    def updated_metadata(self, template_metadata: dict[str, Any]) -> dict[str, Any]:
        """New template metadata keeps the agent's keys: ``deployments`` as they are, and
        ``os-collect-config`` merged under any the template gives (Heat's rule)."""
        occ = dict(self.metadata.get("os-collect-config") or {})
        occ.update(template_metadata.get("os-collect-config") or {})
        return {**template_metadata, "os-collect-config": occ,
                "deployments": list(self.metadata.get("deployments") or [])}

    async def handle_snapshot_delete(self, state: tuple[str, str]) -> Token:
        """Snapshot deletion is accepted (as Heat does); there is no image to make, so
        the resource is deleted as with ``Delete``."""
        return await self.handle_delete()

    def resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        if name == "name":
            return self.properties["name"] or self.data.get("server_name")
        return self.metadata.get("os-collect-config", {})
