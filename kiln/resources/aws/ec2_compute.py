"""AWS::EC2 Instance, Volume and VolumeAttachment on Nova and Cinder, as Heat 27 maps
them (the OS::Nova::Server and OS::Cinder::* plugins do the waiting and deleting).

- ``Volume``: a Cinder volume named (and described) by its physical name, ``Tags`` as
  its metadata, or restored from the backup ``SnapshotId`` names; nothing may change.
- ``VolumeAttachment``: the volume attached to the instance at ``Device``.
- ``Instance``: a Nova server from ``ImageId`` and ``InstanceType`` with heat-cfntools
  user data for the ``ec2-user``; its NICs are the ``NetworkInterfaces`` (ports, by
  ``DeviceIndex``) or a port Kiln makes on ``SubnetId``; ``Volumes`` are attached once
  it is ACTIVE; ``Tags`` are its metadata; ``BlockDeviceMappings`` boot from snapshots.
  A new ``InstanceType`` resizes it; new ``Tags`` replace its metadata; new
  ``NetworkInterfaces``/``SubnetId`` detach and attach NICs; other changes replace it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from typing import Any

from kiln.errors import StackValidationFailed
from kiln.resources.aws.ec2_network import secgroup_ids
from kiln.resources.aws.ec2_vpc import tag_map, tags_property
from kiln.resources.base import (
    Attribute,
    Peers,
    Properties,
    Property,
    ResourceFailure,
    Token,
)
from kiln.resources.common import userdata as _userdata
from kiln.resources.common.cloud import custom
from kiln.resources.common.lookup import find_flavor, find_image, find_volume
from kiln.resources.common.server import NovaServer
from kiln.resources.common.volume import AttachmentBase, VolumeBase
from kiln.template.constraints import AllowedPattern, AllowedValues, Range
from kiln.template.definitions import ResourceDefinition


class Volume(VolumeBase):
    """A Cinder volume; every property is immutable."""

    type_name = "AWS::EC2::Volume"
    properties_schema = {
        "AvailabilityZone": Property("string", "Availability zone of the volume.",
                                     required=True, immutable=True),
        "Size": Property("integer", "Size in GB.", immutable=True,
                         constraints=[Range(min=1)]),
        "SnapshotId": Property("string", "Backup to restore the volume from.",
                               immutable=True, constraints=custom("cinder.backup")),
        "Tags": tags_property("Tags of the volume (its metadata).", implemented=True,
                              immutable=True),
    }
    attributes_schema = {}

    async def handle_create(self) -> Token:
        name = self.physical_resource_name()
        p = self.properties
        if p.get("SnapshotId"):
            answer = await self.api("POST", f"/backups/{p['SnapshotId']}/restore",
                                    {"restore": {"name": name}})
            self.resource_id = str(answer["restore"]["volume_id"])
            await self.api("PUT", self.path, {"volume": {"name": name, "description": name}})
            return {"then": "settle"}
        body: dict[str, Any] = {"size": p.get("Size"), "name": name, "description": name}
        if p.get("AvailabilityZone"):
            body["availability_zone"] = p["AvailabilityZone"]
        metadata = tag_map(p.get("Tags"))
        if metadata:
            body["metadata"] = metadata
        answer = await self.api("POST", "/volumes", {"volume": body})
        self.resource_id = str(answer["volume"]["id"])
        return {"then": "settle"}

    def resolve_attribute(self, name: str) -> Any:
        return None


class VolumeAttachment(AttachmentBase):
    """Attaches a volume to an instance; every property is immutable."""

    type_name = "AWS::EC2::VolumeAttachment"
    properties_schema = {
        "InstanceId": Property("string", "The instance to attach to.", immutable=True,
                               required=True, constraints=custom("nova.server")),
        "VolumeId": Property("string", "The volume to attach.", immutable=True,
                             required=True, constraints=custom("cinder.volume")),
        "Device": Property("string", "Device of the volume in the instance (the name "
                                     "may not be honoured).", immutable=True,
                           required=True,
                           constraints=[AllowedPattern(pattern="/dev/vd[b-z]")]),
    }

    async def handle_create(self) -> Token:
        p = self.properties
        volume = await find_volume(self, p["VolumeId"])
        await self._attach(p["InstanceId"], volume, p["Device"])
        self.resource_id = volume
        self.data["server"] = p["InstanceId"]
        return {"volume": volume}


def _not_implemented(kind: str = "string", description: str = "Not implemented.",
                     **kwargs: Any) -> Property:
    return Property(kind, description, implemented=False, **kwargs)  # type: ignore[arg-type]


_EBS = {
    "DeleteOnTermination": Property("boolean", "Whether the volume goes with the "
                                               "instance.", default=True),
    "Iops": _not_implemented("number", "I/O operations per second (not implemented)."),
    "SnapshotId": Property("string", "Snapshot to make the volume from.",
                           constraints=custom("cinder.snapshot")),
    "VolumeSize": Property("string", "Size in GB (the snapshot's when blank)."),
    "VolumeType": _not_implemented("string", "Volume type (not implemented)."),
}

PROPERTIES: dict[str, Property] = {
    "ImageId": Property("string", "Image (name or ID).", required=True,
                        constraints=custom("glance.image")),
    "InstanceType": Property("string", "Flavor (a change resizes the instance).",
                             required=True, update_allowed=True,
                             constraints=custom("nova.flavor")),
    "KeyName": Property("string", "Nova keypair.", constraints=custom("nova.keypair")),
    "AvailabilityZone": Property("string", "Availability zone of the instance."),
    "DisableApiTermination": _not_implemented(),
    "KernelId": _not_implemented(),
    "Monitoring": _not_implemented("boolean"),
    "PlacementGroupName": _not_implemented(),
    "PrivateIpAddress": _not_implemented(),
    "RamDiskId": _not_implemented(),
    "SecurityGroups": Property("list", "Security group names."),
    "SecurityGroupIds": Property("list", "Security group IDs."),
    "NetworkInterfaces": Property("list", "Network interfaces of the instance.",
                                  update_allowed=True),
    "SourceDestCheck": _not_implemented("boolean"),
    "SubnetId": Property("string", "Subnet to start the instance in.", update_allowed=True),
    "Tags": tags_property("Tags of the instance (its metadata).", implemented=True,
                          update_allowed=True),
    "NovaSchedulerHints": Property(
        "list", "Scheduler hints for Nova (a Heat extension).",
        schema=Property("map", schema={"Key": Property("string", required=True),
                                       "Value": Property("string", required=True)})),
    "Tenancy": _not_implemented(constraints=[AllowedValues(allowed=("dedicated",
                                                                    "default"))]),
    "UserData": Property("string", "User data of the instance."),
    "Volumes": Property(
        "list", "Volumes to attach.", default=[],
        schema=Property("map", schema={
            "Device": Property("string", "Device of the volume (may not be honoured).",
                               required=True),
            "VolumeId": Property("string", "The volume.", required=True,
                                 constraints=custom("cinder.volume")),
        })),
    "BlockDeviceMappings": Property(
        "list", "Block devices of the instance.",
        schema=Property("map", schema={
            "DeviceName": Property("string", "Device name (vdb, ...).", required=True),
            "Ebs": Property("map", "The EBS volume.", schema=_EBS),
            "NoDevice": _not_implemented("map", "Unmaps a device (not implemented)."),
            "VirtualName": _not_implemented("string", "Virtual device (not implemented)."),
        })),
}

ATTRIBUTES = {
    "AvailabilityZone": Attribute("Availability zone of the instance.", "string"),
    "PrivateDnsName": Attribute("Private DNS name (its address).", "string"),
    "PublicDnsName": Attribute("Public DNS name (its address).", "string"),
    "PrivateIp": Attribute("Private address of the instance.", "string"),
    "PublicIp": Attribute("Public address of the instance.", "string"),
}


class Instance(NovaServer):
    """An EC2-style instance on Nova."""

    type_name = "AWS::EC2::Instance"
    properties_schema = PROPERTIES
    attributes_schema = ATTRIBUTES

    def implicit_requirements(self, peers: Peers) -> Iterable[str]:
        return ()  # Heat's instance adds none (unlike OS::Nova::Server)

    def validate(self) -> None:
        props = self.properties   # the schema's checks
        if self._security_groups() and props.get("NetworkInterfaces"):
            raise StackValidationFailed(
                "Cannot define the following properties at the same time: "
                "SecurityGroups/SecurityGroupIds, NetworkInterfaces.")
        for mapping in props.get("BlockDeviceMappings") or []:
            ebs = mapping.get("Ebs")
            if not ebs:
                raise StackValidationFailed("Ebs is missing, this is required when "
                                            "specifying BlockDeviceMappings.")
            if not ebs.get("SnapshotId"):
                raise StackValidationFailed("SnapshotId is missing, this is required "
                                            "when specifying BlockDeviceMappings.")

    def _security_groups(self) -> list[str] | None:
        groups = [*(self.properties.get("SecurityGroups") or []),
                  *(self.properties.get("SecurityGroupIds") or [])]
        return groups or None

    async def _nics(self, interfaces: list[Any] | None, subnet: str | None,
                    groups: list[str] | None) -> list[dict[str, str]] | None:
        """Nova's NICs: the listed interfaces by DeviceIndex, or a port made on the
        subnet (kept in ``internal_ports`` and deleted with the instance)."""
        if interfaces:
            nics = [n if isinstance(n, Mapping) else
                    {"NetworkInterfaceId": n, "DeviceIndex": i}
                    for i, n in enumerate(interfaces)]
            ordered = sorted(nics, key=lambda n: int(n["DeviceIndex"]))
            return [{"port": str(n["NetworkInterfaceId"])} for n in ordered]
        if not subnet:
            return None
        network = (await self.api("GET", f"/subnets/{subnet}", service="network")
                   )["subnet"]["network_id"]
        body: dict[str, Any] = {"admin_state_up": True, "network_id": network,
                                "fixed_ips": [{"subnet_id": subnet}]}
        if groups:
            body["security_groups"] = await secgroup_ids(self, groups)
        port = (await self.api("POST", "/ports", {"port": body}, service="network"))["port"]
        self.data["internal_ports"] = json.dumps([{"id": port["id"]}])
        return [{"port": str(port["id"])}]

    def _block_device_mapping(self) -> list[dict[str, Any]]:
        """EC2 mappings as Nova's legacy ones (a volume from each snapshot)."""
        out = []
        for mapping in self.properties.get("BlockDeviceMappings") or []:
            ebs = mapping.get("Ebs") or {}
            item: dict[str, Any] = {"device_name": mapping["DeviceName"],
                                    "snapshot_id": ebs["SnapshotId"]}
            if ebs.get("VolumeSize"):
                item["volume_size"] = int(ebs["VolumeSize"])
            if ebs.get("DeleteOnTermination") is not None:
                item["delete_on_termination"] = bool(ebs["DeleteOnTermination"])
            out.append(item)
        return out

    async def handle_create(self) -> Token:
        props = self.properties
        groups = self._security_groups()
        server: dict[str, Any] = {
            "name": self.server_name(),
            "imageRef": await find_image(self, props["ImageId"]),
            "flavorRef": await find_flavor(self, props["InstanceType"]),
        }
        nics = await self._nics(props.get("NetworkInterfaces"), props.get("SubnetId"),
                                groups)
        server["networks"] = nics if nics else "auto"
        conf = self.runtime.conf
        text = _userdata.cfntools(
            props.get("UserData") or "", self.metadata,
            getattr(conf, "heat_metadata_server_url", None) or "",
            getattr(conf, "region_name_for_services", None) or "RegionOne")
        server["user_data"] = base64.b64encode(text.encode()).decode()
        if props.get("KeyName"):
            server["key_name"] = props["KeyName"]
        if groups and not nics:
            server["security_groups"] = [{"name": g} for g in groups]
        metadata = tag_map(props.get("Tags"))
        if metadata:
            server["metadata"] = metadata
        if props.get("AvailabilityZone"):
            server["availability_zone"] = props["AvailabilityZone"]
        bdm = self._block_device_mapping()
        if bdm:
            server["block_device_mapping"] = bdm
        body: dict[str, Any] = {"server": server}
        hints: dict[str, Any] = {}
        for hint in props.get("NovaSchedulerHints") or []:
            key, value = hint["Key"], hint["Value"]
            if key in hints:
                hints[key] = [*([hints[key]] if isinstance(hints[key], str)
                                else hints[key]), value]
            else:
                hints[key] = value
        if hints:
            body["os:scheduler_hints"] = hints
        answer = await self.api("POST", "/servers", body)
        self.resource_id = str(answer["server"]["id"])
        return {"volumes": [[v["VolumeId"], v["Device"]] for v in props.get("Volumes") or []],
                "attached": 0}

    async def check_create_complete(self, token: Token) -> bool:
        volumes = (token or {}).get("volumes") or []
        if not (token or {}).get("active"):
            if not await super().check_create_complete(token):
                return False
            if token is None:
                return True
            token = self.next_token(token, active=True)
        while token["attached"] < len(volumes):
            volume, device = volumes[token["attached"]]
            volume_id = await find_volume(self, volume)
            if not token.get("sent"):
                await self.api("POST", f"/servers/{self.resource_id}/os-volume_attachments",
                               {"volumeAttachment": {"volumeId": volume_id,
                                                     "device": device}})
                self.next_token(token, sent=True)
                return False
            status = (await self.api("GET", f"/volumes/{volume_id}",
                                     service="block-storage"))["volume"]["status"]
            if status == "in-use":
                token = self.next_token(token, attached=token["attached"] + 1, sent=False)
                continue
            if status not in ("attaching", "available", "reserved"):
                raise ResourceFailure(f"Failed to attach volume {volume_id} ({status})",
                                      exc_type="ResourceUnknownStatus")
            return False
        return True

    # -- update --------------------------------------------------------------------------
    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        path = f"/servers/{self.resource_id}"
        if "Tags" in prop_diff:
            await self.api("PUT", f"{path}/metadata",
                           {"metadata": tag_map(prop_diff["Tags"]) or {}})
        nics = None
        if "NetworkInterfaces" in prop_diff or "SubnetId" in prop_diff:
            nics = await self._update_nics(new_properties, prop_diff)
        steps = []
        if "InstanceType" in prop_diff:
            steps.append({"do": "resize",
                          "flavor": await find_flavor(self, prop_diff["InstanceType"])})
        # NICs changed are waited for by NovaServer.check_update_complete
        return {"steps": steps, "at": 0, "started": False, **({"nics": nics} if nics else {})}

    async def _update_nics(self, new: Mapping[str, Any], diff: Mapping[str, Any]
                           ) -> dict[str, list[str]]:
        """Heat's NIC changes; the ports detached and attached (to wait for)."""
        path = f"/servers/{self.resource_id}/os-interface"
        gone: list[str] = []
        came: list[str] = []

        async def detach(port: str) -> None:
            await self.api("DELETE", f"{path}/{port}", ok_missing=True)
            gone.append(port)

        async def attach(body: dict[str, Any]) -> None:
            answer = await self.api("POST", path, {"interfaceAttachment": body})
            port = ((answer or {}).get("interfaceAttachment") or {}).get("port_id")
            if port:
                came.append(str(port))

        old_ifaces = list(self.properties.get("NetworkInterfaces") or [])
        new_ifaces = list(diff.get("NetworkInterfaces") or [])
        if old_ifaces and new_ifaces:
            kept = [i for i in old_ifaces if i in new_ifaces]
            old_nics = await self._nics([i for i in old_ifaces if i not in kept], None, None)
            added = await self._nics([i for i in new_ifaces if i not in kept], None, None)
            for nic in old_nics or []:
                await detach(nic["port"])
            for nic in added or []:
                await attach({"port_id": nic["port"]})
            return {"gone": gone, "came": came}
        if old_ifaces and "NetworkInterfaces" not in diff:
            return {}  # Heat: the listed interfaces stay as they are
        attached = (await self.api("GET", path))["interfaceAttachments"]
        for iface in attached:
            await detach(str(iface["port_id"]))
        await self._delete_internal_ports()
        nics = await self._nics(new_ifaces, diff.get("SubnetId") or
                                self.properties.get("SubnetId"), self._security_groups())
        if not nics:
            await attach({})
        for nic in nics or []:
            await attach({"port_id": nic["port"]})
        return {"gone": gone, "came": came}

    def not_active(self, status: Any) -> ResourceFailure:
        return ResourceFailure(f"Instance is not ACTIVE (was: {status})")

    # -- attributes -----------------------------------------------------------------------
    def _address(self) -> str:
        """The first address of the last network by name (Heat's pick)."""
        addresses = self.shown().get("addresses") or {}
        for network in sorted(addresses, reverse=True):
            if addresses[network]:
                return str(addresses[network][0]["addr"])
        return "0.0.0.0"

    def resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        if name == "AvailabilityZone":
            zone = self.properties.get("AvailabilityZone") or \
                self.shown().get("OS-EXT-AZ:availability_zone")
            return str(zone) if zone else None
        return self._address()
