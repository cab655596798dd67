"""Which values of a cloud type's properties are looked up in the cloud at create and
update, and under which path Heat names them (the lookups themselves run against the
real services in tests/cloud/test_cloud_behaviour.py)."""

from __future__ import annotations

from kiln.resources.common.cloud import _lookups
from kiln.resources.openstack.nova_server import Server


def test_lookups_reach_list_items_and_map_keys() -> None:
    """As Heat's schema: networks[].subnet, security_groups and metadata carry no
    lookup constraint, so they are not looked up."""
    values = {"flavor": "m1.tiny", "image": "",
              "networks": [{"network": "public", "fixed_ip": "10.0.0.5"},
                           {"port": "p1"}, {"subnet": "s1"}],
              "block_device_mapping_v2": [{"image": "cirros", "volume_size": 1}],
              "security_groups": ["default"], "metadata": {"network": "x"}}
    found = list(_lookups(Server.properties_schema, values, ()))
    assert found == [
        (("flavor",), "nova.flavor", "m1.tiny"),
        (("networks", 0, "network"), "neutron.network", "public"),
        (("networks", 1, "port"), "neutron.port", "p1"),
        (("block_device_mapping_v2", 0, "image"), "glance.image", "cirros"),
    ]
