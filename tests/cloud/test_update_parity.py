"""Updates Heat 27 makes in place and Kiln once did not (found by heat-tempest-plugin,
scripts/heat_tempest_cloud.sh), on the real Neutron and Nova: a Subnet whose
``gateway_ip`` or ``allocation_pools`` is removed from the template loses them, a Port's
``mac_address`` changes in place (Neutron lets the admin do it), and a server whose
``networks`` entry changes from its network to the subnet its address is on keeps its
interface and port, while a move to another subnet swaps them."""

from __future__ import annotations

import uuid
from typing import Any

from tests.cloud.helpers import delete_and_wait, physical_ids, settled
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
