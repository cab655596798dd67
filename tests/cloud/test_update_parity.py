"""Updates Heat 27 makes in place and Kiln once did not (found by heat-tempest-plugin,
scripts/heat_tempest_cloud.sh), on the real Neutron and Nova: a Subnet whose
``gateway_ip`` or ``allocation_pools`` is removed from the template loses them, a Port's
``mac_address`` changes in place (Neutron lets the admin do it), and a server whose
``networks`` entry changes from its network to the subnet its address is on keeps its
interface and port, while a move to another subnet swaps them."""

from __future__ import annotations

import uuid
from typing import Any

from tests.cloud.helpers import delete_and_wait, find, physical_ids, settled
from tests.support.cloud.catalog import IMAGE


def _network(subnet_props: dict[str, Any], port_props: dict[str, Any]) -> dict[str, Any]:
    return {"heat_template_version": "2018-08-31", "resources": {
        "net": {"type": "OS::Neutron::Net"},
        "subnet": {"type": "OS::Neutron::Subnet",
                   "properties": {"network": {"get_resource": "net"},
                                  "cidr": "10.71.0.0/24", **subnet_props}},
        "port": {"type": "OS::Neutron::Port", "depends_on": ["subnet"],
                 "properties": {"network": {"get_resource": "net"}, **port_props}}}}


def test_subnet_and_port_updates_in_place(cloud_heat: Any, sdk: Any) -> None:
    name = f"upd-{uuid.uuid4().hex[:6]}"
    pools = [{"start": "10.71.0.10", "end": "10.71.0.20"}]
    cloud_heat.stacks.create(stack_name=name, template=_network(
        {"gateway_ip": "10.71.0.5", "allocation_pools": pools},
        {"mac_address": "fa:16:3e:00:00:01"}))
    settled(cloud_heat, name, "CREATE_COMPLETE")
    ids = physical_ids(cloud_heat, name)
    subnet = sdk.network.get_subnet(ids["subnet"])
    assert subnet.gateway_ip == "10.71.0.5" and len(subnet.allocation_pools) == 1

    cloud_heat.stacks.update(name, template=_network(
        {}, {"mac_address": "fa:16:3e:00:00:02"}))
    settled(cloud_heat, name, "UPDATE_COMPLETE")
    assert physical_ids(cloud_heat, name) == ids                 # all in place
    subnet = sdk.network.get_subnet(ids["subnet"])
    assert subnet.gateway_ip is None
    assert subnet.allocation_pools == []
    assert sdk.network.get_port(ids["port"]).mac_address == "fa:16:3e:00:00:02"
    assert delete_and_wait(cloud_heat, name) == "DELETE_COMPLETE"


def _server(networks: str) -> str:
    return f"""
heat_template_version: 2018-08-31
resources:
  net: {{type: OS::Neutron::Net}}
  subnet:
    type: OS::Neutron::Subnet
    properties: {{network: {{get_resource: net}}, cidr: 10.72.0.0/24}}
  subnet_b:
    type: OS::Neutron::Subnet
    properties: {{network: {{get_resource: net}}, cidr: 10.73.0.0/24}}
  server:
    type: OS::Nova::Server
    properties:
      image: {IMAGE}
      flavor: m1.tiny
      networks: {networks}
"""


def _ports(sdk: Any, server: str) -> list[tuple[str, str]]:
    return sorted((i.port_id, i.fixed_ips[0]["ip_address"])
                  for i in sdk.compute.server_interfaces(server))


def test_server_networks_update_keeps_what_an_entry_still_describes(
        cloud_heat: Any, sdk: Any) -> None:
    name = f"nets-{uuid.uuid4().hex[:6]}"
    cloud_heat.stacks.create(stack_name=name,
                             template=_server("[{network: {get_resource: net}}]"))
    settled(cloud_heat, name, "CREATE_COMPLETE")
    server = physical_ids(cloud_heat, name)["server"]
    first = _ports(sdk, server)
    assert len(first) == 1

    cloud_heat.stacks.update(name, template=_server("[{subnet: {get_resource: subnet}}]"))
    settled(cloud_heat, name, "UPDATE_COMPLETE")
    if first[0][1].startswith("10.72."):        # Nova chose the address on 'subnet'
        assert _ports(sdk, server) == first
    cloud_heat.stacks.update(name,
                             template=_server("[{subnet: {get_resource: subnet_b}}]"))
    settled(cloud_heat, name, "UPDATE_COMPLETE")
    moved = _ports(sdk, server)
    assert len(moved) == 1 and moved[0][1].startswith("10.73.")
    assert moved[0][0] != first[0][0]
    assert physical_ids(cloud_heat, name)["server"] == server         # in place
    assert delete_and_wait(cloud_heat, name, timeout=180) == "DELETE_COMPLETE"
    assert next(iter(sdk.network.ports(id=moved[0][0])), None) is None  # internal: gone


def _volume(props: dict[str, Any]) -> dict[str, Any]:
    return {"heat_template_version": "2018-08-31", "resources": {
        "volume": {"type": "OS::Cinder::Volume", "properties": {"size": 1, **props}}}}


def test_volume_keeps_a_dropped_name_and_description_and_refuses_to_shrink(
        cloud_heat: Any, sdk: Any) -> None:
    """Heat 27 (scripts/cloud_update_parity.py on the same cloud): a name or description
    removed from the template stays on the volume, since Heat sends the old property
    (else the physical name) for a missing one; so a name dropped after the description
    was sends the then empty description. A smaller size fails the update with Heat's
    NotSupported wording and leaves the volume as it was."""
    name = f"vol-{uuid.uuid4().hex[:6]}"
    cloud_heat.stacks.create(stack_name=name, template=_volume(
        {"name": "v1", "description": "first"}))
    settled(cloud_heat, name, "CREATE_COMPLETE")
    volume_id = physical_ids(cloud_heat, name)["volume"]

    cloud_heat.stacks.update(name, template=_volume({"name": "v1", "size": 2}))
    settled(cloud_heat, name, "UPDATE_COMPLETE")
    volume = sdk.block_storage.get_volume(volume_id)
    assert (volume.name, volume.description, volume.size) == ("v1", "first", 2)

    cloud_heat.stacks.update(name, template=_volume({"size": 2}))
    settled(cloud_heat, name, "UPDATE_COMPLETE")
    volume = sdk.block_storage.get_volume(volume_id)
    assert (volume.name, volume.description) == ("v1", None)

    cloud_heat.stacks.update(name, template=_volume({}))
    stack = settled(cloud_heat, name, "UPDATE_FAILED")
    assert stack.stack_status_reason == ("Resource UPDATE failed: NotSupported: "
                                         "resources.volume: Shrinking volume is not "
                                         "supported."), stack.stack_status_reason
    assert physical_ids(cloud_heat, name)["volume"] == volume_id
    assert sdk.block_storage.get_volume(volume_id).size == 2
    assert delete_and_wait(cloud_heat, name) == "DELETE_COMPLETE"


def _named_server(props: dict[str, Any]) -> dict[str, Any]:
    return {"heat_template_version": "2018-08-31", "resources": {
        "server": {"type": "OS::Nova::Server", "properties": {
            "image": IMAGE, "flavor": "m1.tiny", "networks": [{"network": "public"}],
            **props}}}}


def test_server_keeps_a_dropped_name(cloud_heat: Any, sdk: Any) -> None:
    """Heat 27 renames a server only to a name the template gives: a dropped ``name``
    (novaclient's update with None sends nothing) leaves the server's name alone."""
    name = f"srvname-{uuid.uuid4().hex[:6]}"
    cloud_heat.stacks.create(stack_name=name, template=_named_server({"name": "first"}))
    settled(cloud_heat, name, "CREATE_COMPLETE")
    server = physical_ids(cloud_heat, name)["server"]
    cloud_heat.stacks.update(name, template=_named_server({"name": "second"}))
    settled(cloud_heat, name, "UPDATE_COMPLETE")
    assert sdk.compute.get_server(server).name == "second"
    cloud_heat.stacks.update(name, template=_named_server({"metadata": {"a": "1"}}))
    settled(cloud_heat, name, "UPDATE_COMPLETE")
    found = sdk.compute.get_server(server)
    assert (found.name, found.metadata) == ("second", {"a": "1"})
    assert physical_ids(cloud_heat, name)["server"] == server
    assert delete_and_wait(cloud_heat, name, timeout=180) == "DELETE_COMPLETE"


def _keypair(name: str, key: str) -> dict[str, Any]:
    return {"heat_template_version": "2018-08-31", "resources": {
        "key": {"type": "OS::Nova::KeyPair",
                "properties": {"name": name, "public_key": key}}}}


def _public_key() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    key = ed25519.Ed25519PrivateKey.generate().public_key()
    return key.public_bytes(serialization.Encoding.OpenSSH,
                            serialization.PublicFormat.OpenSSH).decode()


def test_keypair_replaced_under_the_same_name(cloud_heat: Any, sdk: Any) -> None:
    """A new ``public_key`` replaces the keypair under the name it keeps: the old one is
    deleted first, as Heat's prepare_for_replace does, so Nova does not refuse the new
    one with a 409 (and, unlike Heat 27, whose clean-up of the old resource then deletes
    by the shared name, the new keypair is still there afterwards)."""
    name = f"kp-{uuid.uuid4().hex[:6]}"
    first, second = _public_key(), _public_key()
    cloud_heat.stacks.create(stack_name=name, template=_keypair(name, first))
    settled(cloud_heat, name, "CREATE_COMPLETE")
    assert sdk.compute.get_keypair(name).public_key.strip() == first
    cloud_heat.stacks.update(name, template=_keypair(name, second))
    settled(cloud_heat, name, "UPDATE_COMPLETE")
    assert sdk.compute.get_keypair(name).public_key.strip() == second
    assert delete_and_wait(cloud_heat, name) == "DELETE_COMPLETE"
    assert find(sdk.compute.find_keypair, name) is None
