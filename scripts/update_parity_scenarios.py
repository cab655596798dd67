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
#: the key of a step that changes the subject's ``external_id`` (DROP: removes it)
EXTERNAL_ID = "<external_id>"

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
    #: the results' key when a type has more than one scenario (default: the type)
    key: str = ""
    #: makes the object ``r`` adopts with ``external_id`` (given the user's sdk and the
    #: admin's), returning its id; None: ``r`` is created by the stack
    external: Callable[[Any, Any], str] | None = None
    #: stack snapshot, these updates, restore, snapshot delete (None: no snapshot)
    snapshot: list[tuple[str, dict[str, Any]]] | None = None
    #: check, suspend and resume after the updates
    actions: bool = True
    deletion_policy: str | None = None
    #: the stack's timeout (a server snapshot waits for its image until then)
    timeout_mins: int | None = None

    @property
    def name(self) -> str:
        return self.key or self.type

    @property
    def extended(self) -> bool:
        """Whether each step also records the resource's state, what snapshots left in
        the project and what the delete left (the scenarios added after Heat's first
        recorded run; the older ones keep their records' shape)."""
        return bool(self.key)


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


def _server_boot(sdk: Any, rid: str) -> dict[str, Any]:
    """A server's keypair and user data (Nova shows the data to an admin, 2.3+)."""
    import base64

    server = sdk.compute.get_server(rid)
    data = server.user_data
    return {"name": server.name, "status": server.status, "key_name": server.key_name,
            "user_data": base64.b64decode(data).decode() if data else None}


def leftovers(sdk: Any) -> dict[str, Any]:
    """What snapshots left in the user's project: images, volume backups and volume
    snapshots, by status (the project is the run's own, so they are the stacks')."""
    project = sdk.current_project_id
    return {"images": sorted(i.status for i in sdk.image.images(owner=project)),
            "backups": sorted(b.status for b in sdk.block_storage.backups(details=True)),
            "volume_snapshots": sorted(
                v.status for v in sdk.block_storage.snapshots(details=True))}


def _tag() -> str:
    return f"ext-{uuid.uuid4().hex[:6]}"


def _ext_net(sdk: Any, admin: Any) -> str:
    return str(sdk.network.create_network(name=_tag()).id)


def _ext_subnet(sdk: Any, admin: Any) -> str:
    net = sdk.network.create_network(name=_tag())
    return str(sdk.network.create_subnet(network_id=net.id, name=_tag(), ip_version=4,
                                         cidr="10.88.0.0/24").id)


def _ext_port(sdk: Any, admin: Any) -> str:
    net = sdk.network.create_network(name=_tag())
    return str(sdk.network.create_port(network_id=net.id, name=_tag()).id)


def _ext_router(sdk: Any, admin: Any) -> str:
    return str(sdk.network.create_router(name=_tag()).id)


def _ext_secgroup(sdk: Any, admin: Any) -> str:
    return str(sdk.network.create_security_group(name=_tag()).id)


def _ext_volume(sdk: Any, admin: Any) -> str:
    volume = sdk.block_storage.create_volume(size=1, name=_tag())
    sdk.block_storage.wait_for_status(volume, "available", wait=120)
    return str(volume.id)


def _ext_server(sdk: Any, admin: Any) -> str:
    image = admin.image.find_image(IMAGE, ignore_missing=False)
    flavor = admin.compute.find_flavor("m1.tiny", ignore_missing=False)
    net = admin.network.find_network(PUBLIC_NET, ignore_missing=False)
    server = sdk.compute.create_server(name=_tag(), image_id=image.id,
                                       flavor_id=flavor.id, networks=[{"uuid": net.id}])
    sdk.compute.wait_for_server(server, wait=300)
    return str(server.id)


def _ext_keypair(sdk: Any, admin: Any) -> str:
    return str(sdk.compute.create_keypair(name=f"kpe-{uuid.uuid4().hex[:6]}",
                                          public_key=public_key()).name)


def _ext_image(sdk: Any, admin: Any) -> str:
    return str(sdk.image.create_image(name=_tag(), disk_format="raw",
                                      container_format="bare", data=b"\0" * 1024,
                                      wait=True).id)


def _external(rtype: str, make: Callable[[Any, Any], str], read: Reader,
              props: dict[str, Any], change: dict[str, Any], *,
              extra: list[tuple[str, dict[str, Any]]] | None = None,
              timeout: float = 240.0) -> Scenario:
    """An object made outside the stack, adopted, one property changed, deleted."""
    steps = [(", ".join(change), change), *(extra or [])]
    return Scenario(rtype, props, steps, read, key=f"external_id {rtype}", external=make,
                    actions=False, as_user=True, timeout=timeout)


def more_scenarios() -> list[Scenario]:
    """Stack snapshots (and ``deletion_policy: Snapshot``), ``external_id`` adoption, a
    server's ``key_name`` and ``user_data`` changes."""
    one_net = {"net": NET, "sub": _subnet_of("net", "10.87.0.0/24")}
    server = {"image": IMAGE, "flavor": "m1.tiny", "networks": [{"network": _ref("net")}]}
    keys = {k: {"type": "OS::Nova::KeyPair", "properties": {
        "name": f"{k}-{uuid.uuid4().hex[:6]}", "public_key": public_key()}}
        for k in ("kpa", "kpb")}
    return [
        Scenario("OS::Cinder::Volume", {"size": 1, "name": "sv1"}, [], _volume,
                 key="snapshot OS::Cinder::Volume", actions=False,
                 snapshot=[("name after snapshot", {"name": "sv2"})]),
        Scenario("OS::Nova::Server", {**server, "name": "ss1"}, [], _server, one_net,
                 key="snapshot OS::Nova::Server", actions=False, timeout=400,
                 timeout_mins=2,
                 snapshot=[("name after snapshot", {"name": "ss2"})]),
        Scenario("OS::Neutron::Net", {"name": "sn1"}, [], _net,
                 key="snapshot OS::Neutron::Net", actions=False,
                 snapshot=[("name after snapshot", {"name": "sn2"})]),
        Scenario("OS::Cinder::Volume", {"size": 1}, [], _volume, actions=False,
                 key="deletion_policy Snapshot OS::Cinder::Volume",
                 deletion_policy="Snapshot"),
        Scenario("OS::Nova::Server", server, [], _server, one_net, actions=False,
                 key="deletion_policy Snapshot OS::Nova::Server",
                 deletion_policy="Snapshot", timeout=400, timeout_mins=2),
        Scenario("OS::Nova::Server", {
            **server, "key_name": _ref("kpa"), "user_data": "one",
            "user_data_format": "RAW"}, [
            ("key_name", {"key_name": _ref("kpb")}),
            ("user_data REPLACE", {"user_data": "two"}),
            ("user_data_update_policy IGNORE", {"user_data_update_policy": "IGNORE"}),
            ("user_data IGNORE", {"user_data": "three"}),
            ("user_data REBUILD", {"user_data_update_policy": "REBUILD",
                                   "user_data": "four"}),
            ("key_name dropped", {"key_name": DROP}),
            ("user_data dropped", {"user_data": DROP})],
            _server_boot, {**one_net, **keys}, key="OS::Nova::Server key_name, user_data",
            actions=False, timeout=400),
        _external("OS::Neutron::Net", _ext_net, _net, {"name": "e1"}, {"name": "e2"},
                  extra=[("external_id dropped", {EXTERNAL_ID: DROP})]),
        _external("OS::Neutron::Subnet", _ext_subnet, _subnet,
                  {"network": "x", "cidr": "10.88.0.0/24"}, {"name": "e2"}),
        _external("OS::Neutron::Port", _ext_port, _port, {"network": "x"},
                  {"name": "e2"}),
        _external("OS::Neutron::Router", _ext_router, _router, {}, {"name": "e2"}),
        _external("OS::Neutron::SecurityGroup", _ext_secgroup, _secgroup, {},
                  {"description": "e2"}),
        _external("OS::Cinder::Volume", _ext_volume, _volume, {"size": 1},
                  {"size": 2}),
        _external("OS::Nova::Server", _ext_server, _server, {
            "image": IMAGE, "flavor": "m1.tiny"}, {"name": "e2"}, timeout=400),
        _external("OS::Nova::KeyPair", _ext_keypair, _keypair, {"name": "x"},
                  {"public_key": public_key()}),
        _external("OS::Glance::WebImage", _ext_image, _image,
                  {"location": "http://127.0.0.1:1/x"}, {"name": "e2"}),
    ]


def scenarios(extra_image: str, image_url: str) -> list[Scenario]:
    """The types and the changes tried on each (what Heat's update_allowed allows, and
    a property it does not, to see the replacement)."""
    return [*update_scenarios(extra_image, image_url), *more_scenarios()]


def update_scenarios(extra_image: str, image_url: str) -> list[Scenario]:
    """One stack per type, one property changed per update."""
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
