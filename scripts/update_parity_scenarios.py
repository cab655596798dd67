"""The types scripts/cloud_update_parity.py tries, the property changes made to each, and
how each object is read back from the cloud (kept apart from the runner so that adding a
type touches only this file)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.support.cloud.catalog import IMAGE, PUBLIC_NET

#: a value in a step that removes the property from the template
DROP = "<drop>"

Reader = Callable[[Any, str], dict[str, Any]]


def _pick(obj: Any, *names: str) -> dict[str, Any]:
    data = obj.to_dict() if hasattr(obj, "to_dict") else dict(obj)
    return {n: data.get(n) for n in names}


def _net(sdk: Any, rid: str) -> dict[str, Any]:
    return _pick(sdk.network.get_network(rid), "name", "is_admin_state_up", "is_shared",
                 "is_port_security_enabled", "tags", "dns_domain")


def _subnet(sdk: Any, rid: str) -> dict[str, Any]:
    return _pick(sdk.network.get_subnet(rid), "name", "cidr", "gateway_ip",
                 "allocation_pools", "is_dhcp_enabled", "dns_nameservers", "host_routes",
                 "tags")


#: addresses the scenarios ask for; others are the cloud's choice, shown by subnet only
GIVEN = {"10.96.0.50", "fa:16:3e:11:22:33"}


def _shown(address: str) -> str:
    return address if address in GIVEN else address.rsplit(".", 1)[0] + ".*"


def _port(sdk: Any, rid: str) -> dict[str, Any]:
    out = _pick(sdk.network.get_port(rid), "name", "is_admin_state_up", "mac_address",
                "fixed_ips", "security_group_ids", "allowed_address_pairs", "tags",
                "device_owner", "binding_vnic_type")
    out["fixed_ips"] = sorted(_shown(f["ip_address"]) for f in out["fixed_ips"] or [])
    if out["mac_address"] not in GIVEN:
        out["mac_address"] = "<allocated>"
    out["security_group_ids"] = len(out["security_group_ids"] or [])
    return out


def _router(sdk: Any, rid: str) -> dict[str, Any]:
    out = _pick(sdk.network.get_router(rid), "name", "is_admin_state_up",
                "external_gateway_info", "tags")
    gw = out["external_gateway_info"] or {}
    out["external_gateway_info"] = {"network_id": bool(gw.get("network_id")),
                                    "enable_snat": gw.get("enable_snat")}
    return out


def _router_interface(sdk: Any, rid: str) -> dict[str, Any]:
    router = rid.split(":")[0]
    ports = sdk.network.ports(device_id=router, device_owner="network:router_interface")
    return {"interfaces": sorted(p.fixed_ips[0]["ip_address"] for p in ports)}


def _secgroup(sdk: Any, rid: str) -> dict[str, Any]:
    group = sdk.network.get_security_group(rid)
    rules = sorted(f"{r['direction']}/{r.get('protocol')}/{r.get('port_range_min')}"
                   for r in group.security_group_rules)
    return {"name": group.name, "description": group.description, "rules": rules}


def _secgroup_rule(sdk: Any, rid: str) -> dict[str, Any]:
    return _pick(sdk.network.get_security_group_rule(rid), "direction", "protocol",
                 "port_range_min", "port_range_max", "remote_ip_prefix", "description")


def _fip(sdk: Any, rid: str) -> dict[str, Any]:
    out = _pick(sdk.network.get_ip(rid), "port_id", "fixed_ip_address", "description",
                "tags")
    out["port_id"] = bool(out["port_id"])
    if out["fixed_ip_address"]:
        out["fixed_ip_address"] = _shown(out["fixed_ip_address"])
    return out


def _server(sdk: Any, rid: str) -> dict[str, Any]:
    server = sdk.compute.get_server(rid)
    addresses = sorted(a["addr"] for nets in (server.addresses or {}).values()
                       for a in nets)
    image = sdk.image.get_image(server.image["id"]).name if server.image else None
    return {"name": server.name, "status": server.status, "metadata": server.metadata,
            "flavor": server.flavor.get("original_name"), "image": image,
            "addresses": [a.rsplit(".", 1)[0] for a in addresses]}


def _keypair(sdk: Any, rid: str) -> dict[str, Any]:
    pair = sdk.compute.get_keypair(rid)
    return {"name": pair.name, "type": pair.type}


def _flavor(sdk: Any, rid: str) -> dict[str, Any]:
    flavor = sdk.compute.get_flavor(rid)
    specs = sdk.compute.fetch_flavor_extra_specs(flavor).extra_specs
    return {"name": flavor.name, "ram": flavor.ram, "vcpus": flavor.vcpus,
            "is_public": flavor.is_public, "extra_specs": specs,
            "description": flavor.description}


def _volume(sdk: Any, rid: str) -> dict[str, Any]:
    return _pick(sdk.block_storage.get_volume(rid), "name", "size", "description",
                 "metadata", "status")


def _attachment(sdk: Any, rid: str) -> dict[str, Any]:
    """Nova's attachment ID is the volume's; Cinder's is listed on the volume too."""
    for volume in sdk.block_storage.volumes(details=True, all_projects=True):
        for attached in volume.attachments or []:
            if rid in (volume.id, attached.get("attachment_id"), attached.get("id")):
                return {"device": attached.get("device"), "status": volume.status,
                        "volume": volume.name}
    return {"attached": None}


def _image(sdk: Any, rid: str) -> dict[str, Any]:
    image = sdk.image.get_image(rid)
    return {"name": image.name, "tags": sorted(image.tags or []),
            "min_disk": image.min_disk, "visibility": image.visibility,
            "os_distro": image.os_distro, "protected": image.is_protected,
            "status": image.status, "k": (image.properties or {}).get("k")}


def _project(sdk: Any, rid: str) -> dict[str, Any]:
    return _pick(sdk.identity.get_project(rid), "name", "description", "is_enabled",
                 "tags")


def _keystone_user(sdk: Any, rid: str) -> dict[str, Any]:
    user = sdk.identity.get_user(rid)
    return {"name": user.name, "email": user.email, "is_enabled": user.is_enabled,
            "description": user.description}


def _role(sdk: Any, rid: str) -> dict[str, Any]:
    return {"name": sdk.identity.get_role(rid).name}


@dataclass
class Scenario:
    """One type's stack: the subject resource ``r`` beside what it needs, and the
    property changes applied to ``r`` one update at a time (cumulatively)."""

    type: str
    props: dict[str, Any]
    steps: list[tuple[str, dict[str, Any]]]
    read: Reader
    support: dict[str, Any] = field(default_factory=dict)
    timeout: float = 240.0
    #: read the object as the stack's user (a keypair is seen by its owner only)
    as_user: bool = False


def _ref(name: str) -> dict[str, str]:
    return {"get_resource": name}


NET = {"type": "OS::Neutron::Net"}


def _subnet_of(net: str, cidr: str) -> dict[str, Any]:
    return {"type": "OS::Neutron::Subnet", "properties": {"network": _ref(net), "cidr": cidr}}


ROUTED = {"net": NET, "sub": _subnet_of("net", "10.91.0.0/24"),
          "router": {"type": "OS::Neutron::Router", "properties": {
              "external_gateway_info": {"network": PUBLIC_NET}}},
          "ri": {"type": "OS::Neutron::RouterInterface",
                 "properties": {"router": _ref("router"), "subnet": _ref("sub")}},
          "port": {"type": "OS::Neutron::Port", "depends_on": ["sub"],
                   "properties": {"network": _ref("net")}},
          "port2": {"type": "OS::Neutron::Port", "depends_on": ["sub"],
                    "properties": {"network": _ref("net")}}}



def public_key() -> str:
    """A fresh OpenSSH public key (Nova checks that it parses)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    key = ed25519.Ed25519PrivateKey.generate().public_key()
    return key.public_bytes(serialization.Encoding.OpenSSH,
                            serialization.PublicFormat.OpenSSH).decode()


def scenarios(extra_image: str, image_url: str) -> list[Scenario]:
    """The types and the changes tried on each (what Heat's update_allowed allows, and
    a property it does not, to see the replacement)."""
    server_nets = {"net": NET, "sub": _subnet_of("net", "10.92.0.0/24"),
                   "net2": NET, "sub2": _subnet_of("net2", "10.93.0.0/24")}
    return [
        Scenario("OS::Neutron::Net", {"name": "n1"}, [
            ("name", {"name": "n2"}), ("admin_state_up", {"admin_state_up": False}),
            ("shared", {"shared": True}),
            ("port_security_enabled", {"port_security_enabled": False}),
            ("tags", {"tags": ["a"]}), ("name dropped", {"name": DROP})], _net),
        Scenario("OS::Neutron::Subnet", {
            "network": _ref("net"), "cidr": "10.94.0.0/24", "name": "s1",
            "gateway_ip": "10.94.0.1",
            "allocation_pools": [{"start": "10.94.0.10", "end": "10.94.0.20"}]}, [
            ("name", {"name": "s2"}), ("gateway_ip", {"gateway_ip": "10.94.0.5"}),
            ("allocation_pools", {"allocation_pools": [
                {"start": "10.94.0.30", "end": "10.94.0.40"}]}),
            ("enable_dhcp", {"enable_dhcp": False}),
            ("dns_nameservers", {"dns_nameservers": ["8.8.8.8"]}),
            ("host_routes", {"host_routes": [
                {"destination": "10.200.0.0/24", "nexthop": "10.94.0.2"}]}),
            ("tags", {"tags": ["a"]}), ("gateway_ip null", {"gateway_ip": None}),
            ("allocation_pools dropped", {"allocation_pools": DROP}),
            ("cidr", {"cidr": "10.95.0.0/24"})], _subnet, {"net": NET}),
        Scenario("OS::Neutron::Port", {"network": _ref("net"), "name": "p1"}, [
            ("name", {"name": "p2"}), ("admin_state_up", {"admin_state_up": False}),
            ("mac_address", {"mac_address": "fa:16:3e:11:22:33"}),
            ("fixed_ips", {"fixed_ips": [{"ip_address": "10.96.0.50"}]}),
            ("security_groups []", {"security_groups": []}),
            ("allowed_address_pairs", {"allowed_address_pairs": [
                {"ip_address": "10.96.0.200"}]}),
            ("device_owner", {"device_owner": "compute:parity"}),
            ("binding:vnic_type", {"binding:vnic_type": "direct"}),
            ("tags", {"tags": ["a"]}),
            ("network", {"network": _ref("net2"), "fixed_ips": DROP})],
            _port, {"net": NET, "sub": _subnet_of("net", "10.96.0.0/24"), "net2": NET,
                    "sub2": _subnet_of("net2", "10.97.0.0/24")}),
        Scenario("OS::Neutron::Router", {"name": "r1"}, [
            ("name", {"name": "r2"}), ("admin_state_up", {"admin_state_up": False}),
            ("external_gateway_info", {"external_gateway_info": {"network": PUBLIC_NET}}),
            ("enable_snat", {"external_gateway_info": {"network": PUBLIC_NET,
                                                       "enable_snat": False}}),
            ("external_gateway_info dropped", {"external_gateway_info": DROP}),
            ("tags", {"tags": ["a"]})], _router),
        Scenario("OS::Neutron::RouterInterface",
                 {"router": _ref("router"), "subnet": _ref("sub")},
                 [("subnet", {"subnet": _ref("sub2")})], _router_interface,
                 {"router": {"type": "OS::Neutron::Router"}, "net": NET,
                  "sub": _subnet_of("net", "10.98.0.0/24"),
                  "sub2": _subnet_of("net", "10.99.0.0/24")}),
        Scenario("OS::Neutron::SecurityGroup", {"name": "g1", "rules": [
            {"protocol": "tcp", "port_range_min": 22, "port_range_max": 22}]}, [
            ("name", {"name": "g2"}), ("description", {"description": "d"}),
            ("rules", {"rules": [{"protocol": "tcp", "port_range_min": 80,
                                  "port_range_max": 80}]}),
            ("rules []", {"rules": []})], _secgroup),
        Scenario("OS::Neutron::SecurityGroupRule", {
            "security_group": _ref("sg"), "protocol": "tcp", "port_range_min": 22,
            "port_range_max": 22}, [
            ("description", {"description": "d"}),
            ("port_range", {"port_range_min": 23, "port_range_max": 23}),
            ("remote_ip_prefix", {"remote_ip_prefix": "10.0.0.0/8"})], _secgroup_rule,
            {"sg": {"type": "OS::Neutron::SecurityGroup"}}),
        Scenario("OS::Neutron::FloatingIP", {"floating_network": PUBLIC_NET}, [
            ("port_id", {"port_id": _ref("port")}),
            ("port_id other", {"port_id": _ref("port2")}),
            ("port_id dropped", {"port_id": DROP}),
            ("value_specs", {"value_specs": {"description": "d"}})], _fip, ROUTED),
        Scenario("OS::Nova::Server", {
            "image": IMAGE, "flavor": "m1.tiny", "name": "v1",
            "networks": [{"network": _ref("net")}]}, [
            ("name", {"name": "v2"}), ("metadata", {"metadata": {"a": "1"}}),
            ("flavor", {"flavor": "m1.small"}), ("image", {"image": extra_image}),
            ("networks", {"networks": [{"network": _ref("net2")}]}),
            ("metadata dropped", {"metadata": DROP}),
            ("name dropped", {"name": DROP})], _server, server_nets, timeout=400),
        Scenario("OS::Nova::KeyPair", {"name": f"kp-{uuid.uuid4().hex[:6]}",
                                       "public_key": public_key()}, [
            ("public_key", {"public_key": public_key()}),
            ("name", {"name": f"kp-{uuid.uuid4().hex[:6]}"})], _keypair, as_user=True),
        Scenario("OS::Nova::Flavor", {"ram": 256, "vcpus": 1, "disk": 1}, [
            ("extra_specs", {"extra_specs": {"hw:cpu_policy": "shared"}}),
            ("description", {"description": "d"}), ("is_public", {"is_public": False}),
            ("ram", {"ram": 512})], _flavor),
        Scenario("OS::Cinder::Volume", {"size": 1, "name": "vol1"}, [
            ("name", {"name": "vol2"}), ("description", {"description": "d"}),
            ("metadata", {"metadata": {"a": "1"}}), ("size", {"size": 2}),
            ("metadata dropped", {"metadata": DROP}),
            ("description dropped", {"description": DROP}),
            ("name dropped", {"name": DROP}), ("size smaller", {"size": 1})], _volume),
        Scenario("OS::Cinder::VolumeAttachment", {
            "instance_uuid": _ref("srv"), "volume_id": _ref("vol"),
            "mountpoint": "/dev/vdb"}, [
            ("mountpoint", {"mountpoint": "/dev/vdc"}),
            ("volume_id", {"volume_id": _ref("vol2")})], _attachment,
            {"vol": {"type": "OS::Cinder::Volume", "properties": {"size": 1}},
             "vol2": {"type": "OS::Cinder::Volume", "properties": {"size": 1}},
             "srv": {"type": "OS::Nova::Server", "properties": {
                 "image": IMAGE, "flavor": "m1.tiny", "networks": [{"network": PUBLIC_NET}]}}},
            timeout=400),
        Scenario("OS::Glance::WebImage", {
            "location": f"{image_url}/a.raw", "name": "i1", "disk_format": "raw",
            "container_format": "bare"}, [
            ("name", {"name": "i2"}), ("tags", {"tags": ["a"]}),
            ("min_disk", {"min_disk": 1}), ("os_distro", {"os_distro": "cirros"}),
            ("extra_properties", {"extra_properties": {"k": "v"}}),
            ("tags dropped", {"tags": DROP}), ("name dropped", {"name": DROP}),
            ("location", {"location": f"{image_url}/b.raw"})], _image),
        Scenario("OS::Keystone::Project", {"name": f"pp-{uuid.uuid4().hex[:6]}"}, [
            ("description", {"description": "d"}), ("enabled", {"enabled": False}),
            ("tags", {"tags": ["a"]}), ("name", {"name": f"pp-{uuid.uuid4().hex[:6]}"}),
            ("description dropped", {"description": DROP})], _project),
        Scenario("OS::Keystone::User", {"name": f"pu-{uuid.uuid4().hex[:6]}"}, [
            ("email", {"email": "a@example.org"}), ("enabled", {"enabled": False}),
            ("description", {"description": "d"}), ("password", {"password": "pw-x1"}),
            ("name", {"name": f"pu-{uuid.uuid4().hex[:6]}"}),
            ("email dropped", {"email": DROP})], _keystone_user),
        Scenario("OS::Keystone::Role", {"name": f"pr-{uuid.uuid4().hex[:6]}"}, [
            ("name", {"name": f"pr-{uuid.uuid4().hex[:6]}"})], _role),
    ]
