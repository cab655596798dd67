"""Drift of a server's ``networks`` and a port's ``fixed_ips``, on answers shaped as Nova's
``os-interface`` and Neutron's port show give them (the shapes seen on the test cloud:
tests/cloud/test_drift_cloud.py): what is compared, the differences drift reports, and
what an update with converge then does with the cloud's side."""

from __future__ import annotations

import asyncio
from typing import Any

from kiln.engine.model.drift import ADD, REMOVE, Difference, differences
from kiln.resources.openstack import nova_server_networks as nets
from kiln.resources.openstack.neutron_port import live_fixed_ips
from kiln.resources.openstack.nova_server_live import live_networks

NET = "3cb9bc59-5699-4588-a4b1-b87f96708bc6"
NET2 = "9d0a7e53-1f35-4b42-8b7e-0f0c1c2b6a11"
SUBNET = "f8a6e8f8-c2ec-497c-9f23-da9616de54ef"
SUBNET6 = "5b1c3c4e-7a55-4a6f-a1e0-2f3d9a8b7c61"
OWN_PORT = "ce531f90-199f-48c0-816c-13e38010b442"
EXTRA_PORT = "0f3a1b2c-4d5e-4f60-8a9b-0c1d2e3f4a5b"
USER_PORT = "7e6d5c4b-3a29-4180-9f7e-6d5c4b3a2918"


def interface(port: str, net: str, ip: str, subnet: str = SUBNET) -> dict[str, Any]:
    """One ``interfaceAttachments`` item as Nova 2.1 answers it."""
    return {"fixed_ips": [{"ip_address": ip, "subnet_id": subnet}],
            "mac_addr": "fa:16:3e:4c:2c:30", "net_id": net, "port_id": port,
            "port_state": "ACTIVE"}


def test_a_server_in_sync_shows_each_entry_as_the_template_gave_it() -> None:
    wanted = [{"network": NET, "fixed_ip": None, "port": None, "subnet": None,
               "floating_ip": None, "tag": None}]
    expected, actual = live_networks(wanted, [interface(OWN_PORT, NET, "10.0.0.5")],
                                     {OWN_PORT})
    assert expected == actual == [{"network": NET}]
    assert differences({"networks": expected}, {"networks": actual}) == []


def test_an_interface_attached_behind_kilns_back_is_added() -> None:
    # the extra interface is on the same network: the server's own port still answers
    # the template's entry, whichever order Nova lists them in
    interfaces = [interface(EXTRA_PORT, NET, "10.0.0.9"), interface(OWN_PORT, NET, "10.0.0.5")]
    expected, actual = live_networks([{"network": NET}], interfaces, {OWN_PORT})
    assert actual == [{"network": NET},
                      {"network": NET, "fixed_ip": "10.0.0.9", "port": EXTRA_PORT}]
    assert differences({"networks": expected}, {"networks": actual}) == [
        Difference("/networks/1", None,
                   {"network": NET, "fixed_ip": "10.0.0.9", "port": EXTRA_PORT}, ADD)]


def test_a_detached_interface_is_removed_and_ports_and_addresses_match_by_themselves() -> None:
    wanted = [{"port": USER_PORT}, {"network": NET2, "fixed_ip": "192.168.7.10"},
              {"subnet": SUBNET}]
    interfaces = [interface(OWN_PORT, NET, "10.0.0.5"),
                  interface(USER_PORT, NET2, "192.168.7.4", SUBNET6)]
    expected, actual = live_networks(wanted, interfaces, {OWN_PORT})
    assert expected == [{"port": USER_PORT}, {"network": NET2, "fixed_ip": "192.168.7.10"},
                        {"subnet": SUBNET}]
    assert actual == [{"port": USER_PORT}, {"subnet": SUBNET}]
    assert differences({"networks": expected}, {"networks": actual}) == [
        Difference("/networks/1", {"network": NET2, "fixed_ip": "192.168.7.10"}, None,
                   REMOVE)]


def test_entries_an_interface_cannot_tell_are_not_compared() -> None:
    expected, actual = live_networks([{"floating_ip": "f1", "tag": "x"}],
                                     [interface(OWN_PORT, NET, "10.0.0.5")], {OWN_PORT})
    assert expected == []
    assert actual == [{"network": NET, "fixed_ip": "10.0.0.5", "port": OWN_PORT}]


class _Ids:
    async def ids(self, kind: str, value: str) -> str:
        return value

    async def network_of_subnet(self, subnet: str) -> str:
        return NET


def test_converge_detaches_the_extra_interface_and_attaches_the_missing_one() -> None:
    """What the update does with the cloud's side put in place of the stored networks
    (kiln.engine.actions.converge): the server's own interface is kept."""
    template = [{"network": NET}, {"network": NET2}]
    interfaces = [interface(OWN_PORT, NET, "10.0.0.5"), interface(EXTRA_PORT, NET, "10.0.0.9")]
    _, live = live_networks(template, interfaces, {OWN_PORT})
    gone, new, kept = asyncio.run(nets.plan(live, template, interfaces, _Ids()))
    assert [g["port"] for g in gone] == [EXTRA_PORT]
    assert [(n["network"], n["port"]) for n in new] == [(NET2, None)]
    assert [k["port"] for k in kept] == [OWN_PORT]


def test_fixed_ips_keep_what_the_template_gave() -> None:
    neutron = [{"subnet_id": SUBNET, "ip_address": "10.77.4.10"},
               {"subnet_id": SUBNET6, "ip_address": "fd00:77::5"}]
    # a subnet alone is in sync with the address Neutron chose there
    expected, actual = live_fixed_ips([{"subnet": SUBNET6}, {"subnet": SUBNET,
                                                             "ip_address": "10.77.4.10"}],
                                      neutron)
    assert expected == actual == [{"subnet": SUBNET6},
                                  {"subnet": SUBNET, "ip_address": "10.77.4.10"}]
    assert differences({"fixed_ips": expected}, {"fixed_ips": actual}) == []
    # an address alone, or an empty item, takes one address each
    assert live_fixed_ips([{"ip_address": "fd00:77::5"}, {}], neutron) == (
        [{"ip_address": "fd00:77::5"}], [{"ip_address": "fd00:77::5"}])


def test_a_changed_address_is_removed_and_the_new_one_added() -> None:
    """`openstack port set --no-fixed-ip --fixed-ip subnet=S,ip-address=10.77.4.20`."""
    wanted = [{"subnet": SUBNET, "ip_address": "10.77.4.10"}]
    expected, actual = live_fixed_ips(wanted, [{"subnet_id": SUBNET,
                                                "ip_address": "10.77.4.20"}])
    assert differences({"fixed_ips": expected}, {"fixed_ips": actual}) == [
        Difference("/fixed_ips/0", {"subnet": SUBNET, "ip_address": "10.77.4.10"}, None,
                   REMOVE),
        Difference("/fixed_ips/0", None, {"subnet": SUBNET, "ip_address": "10.77.4.20"},
                   ADD)]


def test_an_item_with_an_address_is_matched_before_one_with_a_subnet_alone() -> None:
    neutron = [{"subnet_id": SUBNET, "ip_address": "10.77.4.10"},
               {"subnet_id": SUBNET, "ip_address": "10.77.4.11"}]
    expected, actual = live_fixed_ips([{"subnet": SUBNET},
                                       {"subnet": SUBNET, "ip_address": "10.77.4.11"}],
                                      neutron)
    assert differences({"fixed_ips": expected}, {"fixed_ips": actual}) == []
