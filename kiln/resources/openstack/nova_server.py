"""OS::Nova::Server: a Nova server, its ports, floating IPs, volumes and user data.

Create: the flavor, image, networks and volumes named in the template are looked up,
ports Heat would make itself (a network entry with ``subnet`` or
``port_extra_properties``) are made and remembered in ``data["internal_ports"]``,
floating IPs are pointed at their ports, and the server is POSTed; it is then polled
(the engine's two-step contract) until ACTIVE, or fails with Nova's fault when it goes
to ERROR. Update: name, metadata, tags and admin_pass in place; a flavor change resizes
(then confirms) unless ``flavor_update_policy: REPLACE``; an image change rebuilds
unless ``image_update_policy: REPLACE``; user_data follows
``user_data_update_policy``; other changes replace the server. Delete: the server,
then the internal ports.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from typing import Any

from kiln.errors import StackValidationFailed
from kiln.resources.base import (
    Peers,
    Properties,
    ResourceFailure,
    Token,
    UpdateReplace,
)
from kiln.resources.common import collect_config
from kiln.resources.common import userdata as _userdata
from kiln.resources.common.lookup import (
    find_flavor,
    find_image,
    find_keypair,
)
from kiln.resources.common.server import NovaServer
from kiln.resources.openstack import _implicit
from kiln.resources.openstack._neutron import find_id
from kiln.resources.openstack.nova_server_request import block_devices, internal_port
from kiln.resources.openstack.nova_server_schema import ATTRIBUTES, PROPERTIES
from kiln.resources.translation import Replace
from kiln.template.definitions import ResourceDefinition


class Server(NovaServer):
    """A Nova server."""

    type_name = "OS::Nova::Server"
    translation_rules = (Replace(("networks", "network"), "uuid"),
                         Replace(("block_device_mapping_v2", "image"), "image_id"))
    properties_schema = PROPERTIES
    attributes_schema = ATTRIBUTES

    def implicit_requirements(self, peers: Peers) -> Iterable[str]:
        """Heat's rule: with any ``networks``, wait for the stack's subnets on a listed
        network, and for all of them when an entry names no network (a port or a
        subnet: its network is not known here) or a subnet's network is unknown."""
        nets = peers.value(self, "networks")
        if not nets or not isinstance(nets, list):
            return
        for subnet in peers.of_type(_implicit.SUBNET):
            network = _implicit.subnet_network(peers, subnet)
            for net in nets:
                named = (net.get("network") or net.get("uuid")) if isinstance(net, dict) \
                    else None
                if network is None or not named or named == network:
                    yield subnet.name
                    break

    # -- create --------------------------------------------------------------------------
    def server_name(self) -> str:
        name = self.properties.get("name")
        if name:
            return str(name)
        return super().server_name()

    async def _user_data(self, props: Mapping[str, Any]) -> str:
        fmt = props.get("user_data_format")
        text = props.get("user_data") or ""
        if fmt == "RAW":
            return str(text)
        conf = self.runtime.conf
        if fmt == "SOFTWARE_CONFIG":
            await collect_config.publish(self, props.get("software_config_transport") or
                                         "POLL_SERVER_CFN")
            return _userdata.software_config(text,
                                             self.metadata.get("os-collect-config") or {})
        base = getattr(conf, "heat_metadata_server_url", None) or ""
        region = getattr(conf, "region_name_for_services", None) or "RegionOne"
        return _userdata.cfntools(text, self.metadata, base, region)

    async def _networks(self, props: Mapping[str, Any]) -> Any:
        nets = props.get("networks")
        if not nets:
            return "auto"
        if len(nets) == 1 and nets[0].get("allocate_network"):
            return nets[0]["allocate_network"]
        groups = props.get("security_groups") or []
        internal = json.loads(self.data.get("internal_ports") or "[]")
        out: list[dict[str, Any]] = []
        for index, net in enumerate(nets):
            nic: dict[str, Any] = {}
            network = net.get("network")
            if network:
                nic["uuid"] = await find_id(self, "network", network)
            port = net.get("port")
            if port:
                nic["port"] = await find_id(self, "port", port)
            elif net.get("subnet") or net.get("port_extra_properties"):
                nic["port"] = await internal_port(self, net, index, nic.get("uuid"), groups)
                internal.append({"id": nic["port"]})
                self.data["internal_ports"] = json.dumps(internal)
            if not nic.get("port") and net.get("fixed_ip"):
                nic["fixed_ip"] = net["fixed_ip"]
            if nic.get("port"):
                nic.pop("uuid", None)
            if net.get("floating_ip") and nic.get("port"):
                body: dict[str, Any] = {"port_id": nic["port"]}
                if net.get("fixed_ip"):
                    body["fixed_ip_address"] = net["fixed_ip"]
                await self.api("PUT", f"/floatingips/{net['floating_ip']}",
                               {"floatingip": body}, service="network")
            if net.get("tag"):
                nic["tag"] = net["tag"]
            out.append(nic)
        return out

    async def handle_create(self) -> Token:
        props = self.properties
        server: dict[str, Any] = {
            "name": self.server_name(),
            "flavorRef": await find_flavor(self, props["flavor"]),
            "networks": await self._networks(props),
        }
        if props.get("image"):
            server["imageRef"] = await find_image(self, props["image"])
        user_data = await self._user_data(props)
        if user_data:
            server["user_data"] = base64.b64encode(user_data.encode()).decode()
        metadata = props.get("metadata") or {}
        if metadata:
            server["metadata"] = {str(k): v if isinstance(v, str) else json.dumps(v)
                                  for k, v in metadata.items()}
        if props.get("key_name"):
            server["key_name"] = await find_keypair(self, props["key_name"])
        if props.get("availability_zone"):
            server["availability_zone"] = props["availability_zone"]
        if props.get("security_groups") and not self.data.get("internal_ports") and \
                not any((n or {}).get("port") for n in props.get("networks") or []):
            server["security_groups"] = [{"name": g} for g in props["security_groups"]]
        if props.get("config_drive") is not None:
            server["config_drive"] = props["config_drive"]
        if props.get("diskConfig"):
            server["OS-DCF:diskConfig"] = props["diskConfig"]
        if props.get("admin_pass"):
            server["adminPass"] = props["admin_pass"]
        if props.get("tags"):
            server["tags"] = list(props["tags"])
        if props.get("personality"):
            server["personality"] = [
                {"path": path, "contents": base64.b64encode(str(text).encode()).decode()}
                for path, text in props["personality"].items()]
        server.update(await block_devices(self, props))
        if not props.get("image") and "block_device_mapping" not in server and \
                "block_device_mapping_v2" not in server:
            raise ResourceFailure("Neither image nor bootable volume is specified for "
                                  f"instance {self.name}", exc_type="StackValidationFailed")
        body: dict[str, Any] = {"server": server}
        if props.get("scheduler_hints"):
            body["os:scheduler_hints"] = dict(props["scheduler_hints"])
        answer = await self.api("POST", "/servers", body)
        self.resource_id = str(answer["server"]["id"])
        if answer["server"].get("adminPass"):
            self.data["password"] = answer["server"]["adminPass"]
        return None

    async def _point_floating_ips(self, ports: list[dict[str, Any]]) -> None:
        for net in self._listed_networks():
            if not net.get("floating_ip") or net.get("port") or net.get("subnet") or \
                    net.get("port_extra_properties"):
                continue
            network = net.get("network")
            net_id = await find_id(self, "network", network) if network else None
            match = [p for p in ports if p["network_id"] == net_id]
            if match:
                await self.api("PUT", f"/floatingips/{net['floating_ip']}",
                               {"floatingip": {"port_id": match[0]["id"]}},
                               service="network")

    def _listed_networks(self) -> list[Any]:
        """The template's networks; none for a server adopted by ``external_id``, whose
        properties Heat neither needs nor validates."""
        try:
            return list(self.properties.get("networks") or [])
        except StackValidationFailed:
            return []

    # -- update --------------------------------------------------------------------------
    def needs_replace(self, prop_diff: Mapping[str, Any]) -> bool:
        return super().needs_replace(prop_diff) or self._replace_by_policy(
            self.properties, prop_diff)

    def _replace_by_policy(self, new: Mapping[str, Any], diff: Mapping[str, Any]) -> bool:
        props = {**dict(self.properties), **dict(diff)}
        if "flavor" in diff and props.get("flavor_update_policy") == "REPLACE":
            return True
        if "image" in diff and props.get("image_update_policy") == "REPLACE":
            return True
        return "user_data" in diff and props.get("user_data_update_policy") == "REPLACE"

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        if self._replace_by_policy(new_properties, prop_diff):
            raise UpdateReplace()
        path = f"/servers/{self.resource_id}"
        if prop_diff.get("name") is not None:
            # a name dropped from the template leaves the server's name as it is
            # (Heat passes None to novaclient's update, which then sends nothing)
            await self.api("PUT", path, {"server": {"name": prop_diff["name"]}})
        if "metadata" in prop_diff:
            meta = {str(k): v if isinstance(v, str) else json.dumps(v)
                    for k, v in (prop_diff["metadata"] or {}).items()}
            await self.api("PUT", f"{path}/metadata", {"metadata": meta})
        if "tags" in prop_diff:
            await self.api("PUT", f"{path}/tags", {"tags": list(prop_diff["tags"] or [])})
        if prop_diff.get("admin_pass"):
            await self.api("POST", f"{path}/action",
                           {"changePassword": {"adminPass": prop_diff["admin_pass"]}})
        nics: dict[str, list[str]] | None = None
        if "networks" in prop_diff:
            nics = await self._update_networks(new_properties)
        steps: list[dict[str, Any]] = []
        if "flavor" in prop_diff:
            flavor = await find_flavor(self, prop_diff["flavor"])
            steps.append({"do": "resize", "flavor": flavor})
        rebuild = "image" in prop_diff or (
            "user_data" in prop_diff and
            new_properties.get("user_data_update_policy") == "REBUILD")
        if rebuild:
            image = new_properties.get("image")
            step = {"do": "rebuild",
                    "image": await find_image(self, image) if image else None,
                    "preserve": new_properties.get("image_update_policy") ==
                    "REBUILD_PRESERVE_EPHEMERAL"}
            if "user_data" in prop_diff:
                # the new user data goes with the rebuild (Nova 2.57), so the server
                # boots with it; Heat 27 hands the text to Nova as the image instead
                text = await self._user_data(new_properties)
                step["user_data"] = base64.b64encode(text.encode()).decode() if text \
                    else None
            steps.append(step)
        return {"steps": steps, "at": 0, "started": False, **({"nics": nics} if nics else {})}

    async def replaces_when_failed(self) -> bool:
        if self.resource_id is None:
            return True
        server = await self._read()
        return server is None or server.get("status") in ("ERROR", "DELETED",
                                                          "SOFT_DELETED")

    # -- stack snapshots: a Nova image of the server (Heat's) ------------------------------
    async def _create_image(self) -> str:
        answer = await self.api("POST", f"/servers/{self.resource_id}/action",
                                {"createImage": {"name": self.physical_resource_name()}})
        return str(answer["image_id"])

    async def _image_status(self, image: str) -> str:
        found = await self.api("GET", f"/images/{image}", service="image")
        return str(found.get("status", "")).lower()

    async def handle_snapshot(self) -> Token:
        image = await self._create_image()
        self.data["snapshot_image_id"] = image
        return {"image": image}

    async def check_snapshot_complete(self, token: Token) -> bool:
        status = await self._image_status(token["image"])
        if status in ("killed", "deleted"):
            raise ResourceFailure(status)
        if status != "active":
            return False
        server = await self._read() or {}
        return server.get("OS-EXT-STS:task_state") not in (
            "image_uploading", "image_snapshot_pending", "image_snapshot",
            "image_pending_upload")

    async def handle_delete_snapshot(self, snapshot: Mapping[str, Any]) -> None:
        image = (snapshot.get("resource_data") or {}).get("snapshot_image_id")
        if image:
            await self.api("DELETE", f"/images/{image}", service="image", ok_missing=True)

    async def handle_restore(self, snapshot_data: Mapping[str, Any]) -> Token:
        """The server rebuilt from the snapshot's image, in place."""
        image = (snapshot_data.get("resource_data") or {}).get("snapshot_image_id")
        if not image or self.resource_id is None:
            return None
        return {"steps": [{"do": "rebuild", "image": image, "preserve": False}], "at": 0,
                "started": False}

    async def check_restore_complete(self, token: Token) -> bool:
        return await self.check_update_complete(token)

    async def handle_snapshot_delete(self, state: tuple[str, str]) -> Token:
        """``deletion_policy: Snapshot``: an image of the server, then the delete once
        the image is active (none of a server whose last action failed, as Heat)."""
        if state[1] == "FAILED" or self.resource_id is None:
            return await self.handle_delete()
        return {"image": await self._create_image(), "image_of": self.resource_id}

    async def check_delete_complete(self, token: Token) -> bool:
        if token and "image_of" in token:
            status = await self._image_status(token["image"])
            if status in ("killed", "deleted"):
                raise ResourceFailure(status)
            if status == "active":
                self.checkpoint(await self.handle_delete())
            return False
        return await super().check_delete_complete(token)

    async def _update_networks(self, new: Mapping[str, Any]) -> dict[str, list[str]]:
        """Detach the NICs no longer listed and attach the new ones, keeping those an
        entry still describes (kiln.resources.openstack.nova_server_networks, Heat's
        rules); the ports that go and come, to wait for (as Heat waits for each
        interface change)."""
        from kiln.resources.openstack import nova_server_networks as nets

        path = f"/servers/{self.resource_id}/os-interface"
        current = await self.api("GET", path)
        attached = (current or {}).get("interfaceAttachments", [])
        gone_nets, new_nets, _ = await nets.plan(
            self.properties.get("networks"), new.get("networks"), attached, _Lookups(self))
        internal = json.loads(self.data.get("internal_ports") or "[]")
        gone: list[str] = []
        for net in gone_nets:
            port = net.get("port")
            if port:
                await self.api("DELETE", f"{path}/{port}", ok_missing=True)
                gone.append(str(port))
                if any(p.get("id") == port for p in internal):
                    await self.api("DELETE", f"/ports/{port}", service="network",
                                   ok_missing=True)
                    internal = [p for p in internal if p.get("id") != port]
            if net.get("floating_ip"):
                await self.api("PUT", f"/floatingips/{net['floating_ip']}",
                               {"floatingip": {"port_id": None}}, service="network",
                               ok_missing=True)
        self.data["internal_ports"] = json.dumps(internal)
        came: list[str] = []
        groups = new.get("security_groups") or []
        for index, net in enumerate(new_nets):
            if net.get("allocate_network") == "none":
                continue
            body: dict[str, Any] = {}
            if net.get("port"):
                body["port_id"] = net["port"]
            elif net.get("subnet"):
                body["port_id"] = await internal_port(self, net, index, net.get("network"),
                                                      groups)
                internal.append({"id": body["port_id"]})
                self.data["internal_ports"] = json.dumps(internal)
            elif net.get("network"):
                body["net_id"] = net["network"]
                if net.get("fixed_ip"):
                    body["fixed_ips"] = [{"ip_address": net["fixed_ip"]}]
            answer = await self.api("POST", path, {"interfaceAttachment": body})
            port_id = ((answer or {}).get("interfaceAttachment") or {}).get("port_id")
            if port_id:
                came.append(str(port_id))
            if net.get("floating_ip") and port_id:
                fip: dict[str, Any] = {"port_id": port_id}
                if net.get("fixed_ip"):
                    fip["fixed_ip_address"] = net["fixed_ip"]
                await self.api("PUT", f"/floatingips/{net['floating_ip']}",
                               {"floatingip": fip}, service="network")
        return {"gone": gone, "came": came}

    # -- attributes ----------------------------------------------------------------------
    def _addresses(self) -> dict[str, Any]:
        server = self.shown()
        ports = json.loads(self.data.get("ports") or "[]")
        by_mac = {p.get("mac_address"): p for p in ports}
        out: dict[str, Any] = {}
        for net, items in (server.get("addresses") or {}).items():
            extended = []
            for item in items:
                entry = dict(item)
                port = by_mac.get(item.get("OS-EXT-IPS-MAC:mac_addr"))
                if port:
                    entry["port"] = port["id"]
                    entry["subnets"] = [{"id": ip.get("subnet_id")}
                                        for ip in port.get("fixed_ips") or []
                                        if ip.get("ip_address") == item.get("addr")]
                extended.append(entry)
            out[net] = extended
        return out

    def _networks_attr(self) -> dict[str, Any]:
        server = self.shown()
        names = json.loads(self.data.get("network_names") or "{}")
        out: dict[str, list[str]] = {}
        for net, items in (server.get("addresses") or {}).items():
            out[net] = [i["addr"] for i in items]
        for net_id, name in names.items():
            if name in out:
                out[net_id] = out[name]
        return out

    async def live_state(self, expected: Mapping[str, Any]) -> Any:
        from kiln.resources.openstack.nova_server_live import server_live_state

        return await server_live_state(self, expected)

    def resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        server = self.shown()
        if name == "name":
            return server.get("name") or self.server_name()
        if name == "addresses":
            return self._addresses()
        if name == "networks":
            return self._networks_attr()
        if name == "first_address":
            for items in (server.get("addresses") or {}).values():
                for item in items:
                    if item.get("version") == 4:
                        return item["addr"]
            return ""
        if name == "instance_name":
            return server.get("OS-EXT-SRV-ATTR:instance_name")
        if name == "os_collect_config":
            return self.metadata.get("os-collect-config", {})
        if name == "console_urls":
            return {}
        return server.get(name)


class _Lookups:
    """The server's name-or-ID lookups for nova_server_networks."""

    def __init__(self, server: Server) -> None:
        self.server = server

    async def ids(self, kind: str, value: str) -> str:
        return await find_id(self.server, kind, value)

    async def network_of_subnet(self, subnet: str) -> str:
        answer = await self.server.api("GET", f"/subnets/{subnet}", service="network")
        return str(answer["subnet"]["network_id"])
