#!/usr/bin/env python
"""Update behaviour of Kiln's OpenStack types side by side with Heat's, on the test cloud.

For each type a small stack is created, then one property is changed per stack update.
After every step the script records the stack's status (and reason on failure), whether
the resource's physical ID changed (a replacement) and the object's values as the cloud
reports them. Two runs, one against Kiln and one against Heat 27 on the same cloud, are
then compared with ``diff``: Heat's run is the reference for what Kiln should do.

Why a script and not only tests: the comparison needs the real Heat, which the test
suite does not run; the recorded JSON of a Heat run can be kept and diffed later.

Usage (the test cloud running: ``python -m tests.support.cloud start``)::

    # Kiln: started here in keystone mode, as tests/cloud starts it
    PYTHONPATH=$PWD python scripts/cloud_update_parity.py run --kiln --out kiln.json
    # Heat 27 (../shared/peer-cloud/heat-start.sh pointed at the test cloud's Keystone)
    PYTHONPATH=$PWD python scripts/cloud_update_parity.py run \
        --heat-url http://127.0.0.1:20304 --out heat.json
    PYTHONPATH=$PWD python scripts/cloud_update_parity.py diff heat.json kiln.json

``--only OS::Neutron::Port`` (repeatable) limits a run to some types.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.cloud import Cloud, CloudLayout, is_up
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
    volumes = [v for v in sdk.block_storage.volumes(details=True)
               if any(a.get("attachment_id") == rid or a.get("id") == rid
                      for a in v.attachments)]
    if not volumes:
        return {"attached": None}
    attached = next(a for a in volumes[0].attachments
                    if rid in (a.get("attachment_id"), a.get("id")))
    return {"device": attached.get("device"), "status": volumes[0].status}


def _image(sdk: Any, rid: str) -> dict[str, Any]:
    image = sdk.image.get_image(rid)
    return {"name": image.name, "tags": sorted(image.tags or []),
            "min_disk": image.min_disk, "visibility": image.visibility,
            "os_distro": image.os_distro, "protected": image.is_protected}


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


def scenarios(extra_image: str) -> list[Scenario]:
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


def template(scenario: Scenario, props: dict[str, Any]) -> dict[str, Any]:
    subject = {"type": scenario.type,
               "properties": {k: v for k, v in props.items() if v != DROP}}
    return {"heat_template_version": "2018-08-31",
            "resources": {**scenario.support, "r": subject}}


def _wait(heat: Any, stack: str, timeout: float) -> Any:
    """The stack once its action ended (Heat and Kiln both mark it IN_PROGRESS before
    the API answers a create, update or delete); None once the stack is gone."""
    deadline = time.monotonic() + timeout
    delay = 0.1
    from heatclient import exc

    while True:
        try:
            current = heat.stacks.get(stack)
        except exc.HTTPNotFound:            # Kiln forgets a deleted stack at once
            return None
        if not current.stack_status.endswith("_IN_PROGRESS"):
            return current
        if time.monotonic() > deadline:
            return current
        time.sleep(delay)  # status poll with backoff, bounded by the deadline
        delay = min(delay * 2, 1.0)


def _read(scenario: Scenario, sdk: Any, rid: str | None) -> Any:
    if not rid:
        return None
    try:
        return scenario.read(sdk, rid)
    except Exception as exc:  # noqa: BLE001 -- a gone object is a finding too
        return f"unreadable: {type(exc).__name__}"


def run_scenario(scenario: Scenario, heat: Any, admin: Any, user_sdk: Any
                 ) -> list[dict[str, Any]]:
    """Create, update step by step, delete; one record per step."""
    sdk = user_sdk if scenario.as_user else admin
    name = f"parity-{scenario.type.split('::')[-1].lower()}-{uuid.uuid4().hex[:6]}"
    props = dict(scenario.props)
    stack_id = heat.stacks.create(stack_name=name,
                                  template=template(scenario, props))["stack"]["id"]
    stack = _wait(heat, stack_id, scenario.timeout)
    rid = heat.resources.get(stack_id, "r").physical_resource_id
    records = [{"step": "create", "status": stack.stack_status,
                "reason": None if stack.stack_status.endswith("COMPLETE")
                else stack.stack_status_reason, "replaced": None,
                "cloud": _read(scenario, sdk, rid)}]
    try:
        for label, change in scenario.steps:
            if not stack.stack_status.endswith("COMPLETE"):
                break
            props.update(change)
            heat.stacks.update(stack_id, template=template(scenario, props))
            stack = _wait(heat, stack_id, scenario.timeout)
            new = heat.resources.get(stack_id, "r").physical_resource_id
            records.append({
                "step": label, "status": stack.stack_status,
                "reason": None if stack.stack_status.endswith("COMPLETE")
                else stack.stack_status_reason,
                "replaced": new != rid, "cloud": _read(scenario, sdk, new)})
            rid = new
    finally:
        heat.stacks.delete(stack_id)
        final = _wait(heat, stack_id, scenario.timeout)
        if final is not None and final.stack_status != "DELETE_COMPLETE":
            records.append({"step": "delete", "status": final.stack_status,
                            "reason": final.stack_status_reason})
    return records


@contextmanager
def _extra_image(sdk: Any) -> Iterator[str]:
    """A second image for the server's rebuild."""
    name = f"parity-img-{uuid.uuid4().hex[:6]}"
    image = sdk.image.create_image(name=name, disk_format="raw", container_format="bare",
                                   data=b"\0" * 1024, wait=True)
    try:
        yield name
    finally:
        sdk.image.delete_image(image, ignore_missing=True)


@contextmanager
def _user(cloud: Cloud, sdk: Any) -> Iterator[Any]:
    """A project and user of its own, admin there (flavors, Keystone objects and a
    port's MAC need it; the cloud's policy makes a project admin a cloud admin)."""
    from tests.cloud.identity import new_user, remove_user

    user = new_user(cloud, sdk, "parity")
    idn = sdk.identity
    found = idn.find_user(user.name, domain_id="default")
    idn.assign_project_role_to_user(user.project_id, found, idn.find_role("admin"))
    try:
        yield user
    finally:
        purge(sdk, user.project_id)
        remove_user(sdk, user)


def purge(sdk: Any, project_id: str) -> None:
    """What a failed delete left in the project: servers, volumes, floating IPs,
    routers' interfaces and gateways, ports, subnets, networks, security groups."""
    net = sdk.network
    for server in sdk.compute.servers(all_projects=True, project_id=project_id):
        sdk.compute.delete_server(server)
        sdk.compute.wait_for_delete(server)
    for volume in sdk.block_storage.volumes(all_projects=True, project_id=project_id):
        sdk.block_storage.delete_volume(volume, force=True)
    for fip in net.ips(project_id=project_id):
        net.delete_ip(fip)
    for router in net.routers(project_id=project_id):
        for port in net.ports(device_id=router.id):
            if port.device_owner == "network:router_interface":
                net.remove_interface_from_router(router, port_id=port.id)
        net.update_router(router, external_gateway_info={})
        net.delete_router(router)
    for port in net.ports(project_id=project_id):
        net.delete_port(port)
    for subnet in net.subnets(project_id=project_id):
        net.delete_subnet(subnet)
    for network in net.networks(project_id=project_id):
        net.delete_network(network)
    for group in net.security_groups(project_id=project_id):
        if group.name != "default":
            net.delete_security_group(group)


@contextmanager
def _kiln(cloud: Cloud, sdk: Any) -> Iterator[str]:
    from tests.cloud.identity import keystone_options
    from tests.support.server import start_kiln

    with tempfile.TemporaryDirectory(prefix="parity-kiln-") as workdir:
        proc = start_kiln(Path(workdir), options=keystone_options(cloud, sdk))
        try:
            yield proc.url
        finally:
            proc.stop()


def run(args: argparse.Namespace) -> int:
    layout = CloudLayout()
    if not is_up(layout):
        print("the test cloud is not running (python -m tests.support.cloud start)")
        return 2
    cloud = Cloud(layout)
    sdk = cloud.connect()
    out = Path(args.out)
    results: dict[str, list[dict[str, Any]]] = {}
    if args.only and out.exists():      # a partial run replaces those types only
        results = json.loads(out.read_text())
    with _user(cloud, sdk) as user, _extra_image(sdk) as image, \
            (_kiln(cloud, sdk) if args.kiln else _given(args.heat_url)) as url:
        heat = user.heat(url)
        for scenario in scenarios(image):
            if args.only and scenario.type not in args.only:
                continue
            t0 = time.monotonic()
            try:
                results[scenario.type] = run_scenario(scenario, heat, sdk, user.connect())
            except Exception as exc:  # noqa: BLE001 -- recorded, the next type runs
                results[scenario.type] = [{"step": "error", "status": repr(exc)}]
            print(f"{scenario.type}: {time.monotonic() - t0:.0f}s", file=sys.stderr)
            out.write_text(json.dumps(results, indent=1, sort_keys=True))
    return 0


@contextmanager
def _given(url: str) -> Iterator[str]:
    yield url.rstrip("/")


#: names that differ from run to run: a stack's generated physical names, the random
#: names the scenarios give keypairs, Keystone objects and the rebuild image
_RANDOM = [(re.compile(r"parity-[a-z]+-[0-9a-f]{6}-r-[A-Za-z0-9]+"), "<physical name>"),
           (re.compile(r"\b(kp|pp|pu|pr|parity-img)-[0-9a-f]{6}\b"), r"\1-*")]


def _normal(value: Any) -> Any:
    text = json.dumps(value, sort_keys=True)
    for pattern, repl in _RANDOM:
        text = pattern.sub(repl, text)
    return json.loads(text)


def _line(rec: dict[str, Any]) -> str:
    verb = {None: "", True: "REPLACED ", False: "in place "}[rec.get("replaced")]
    reason = f" ({(rec.get('reason') or '')[:160]})" if rec.get("reason") else ""
    return f"{rec['status']} {verb}{json.dumps(_normal(rec.get('cloud')))}{reason}"


def diff(args: argparse.Namespace) -> int:
    """Print each step where the two runs differ; exit 1 if any does."""
    ref, other = (json.loads(Path(p).read_text()) for p in (args.reference, args.other))
    differences = 0
    for rtype in sorted(set(ref) | set(other)):
        left = {r["step"]: r for r in ref.get(rtype, [])}
        right = {r["step"]: r for r in other.get(rtype, [])}
        for step in list(dict.fromkeys([*left, *right])):
            a, b = left.get(step), right.get(step)
            la = _line(a) if a else "-"
            lb = _line(b) if b else "-"
            same = (a and b and a["status"] == b["status"]
                    and a.get("replaced") == b.get("replaced")
                    and _normal(a.get("cloud")) == _normal(b.get("cloud")))
            if not same:
                differences += 1
                print(f"{rtype} [{step}]\n  {args.reference}: {la}\n  {args.other}: {lb}")
    print(f"{differences} difference(s)")
    return 1 if differences else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    go = sub.add_parser("run", help="run the scenarios against one orchestrator")
    target = go.add_mutually_exclusive_group(required=True)
    target.add_argument("--kiln", action="store_true", help="start kiln serve here")
    target.add_argument("--heat-url", help="an orchestration API (http://host:port)")
    go.add_argument("--out", required=True)
    go.add_argument("--only", action="append", help="a type to run (repeatable)")
    cmp = sub.add_parser("diff", help="compare two runs (the first is the reference)")
    cmp.add_argument("reference")
    cmp.add_argument("other")
    args = parser.parse_args(argv)
    return run(args) if args.command == "run" else diff(args)


if __name__ == "__main__":
    sys.exit(main())
