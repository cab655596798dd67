"""The new OpenStack types' own checks at validate, with Heat 27's messages: those a test
cloud cannot reach (a segment needs Neutron's segment plugin) and the combinations of
each rule."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.errors import StackValidationFailed
from tests.unit.resources.fakes import FakeRuntime, make

NET = {"network": "n"}


@pytest.mark.parametrize(("type_name", "props", "message"), [
    ("OS::Neutron::Segment", {**NET, "network_type": "vlan"},
     "physical_network is required for vlan provider network."),
    ("OS::Neutron::Segment", {**NET, "network_type": "flat"},
     "physical_network is required for flat provider network."),
    ("OS::Neutron::Segment", {**NET, "network_type": "vlan", "physical_network": "p"},
     "segmentation_id is required for vlan provider network."),
    ("OS::Neutron::Segment", {**NET, "network_type": "flat", "physical_network": "p",
                              "segmentation_id": 5},
     "segmentation_id is prohibited for flat provider network."),
    ("OS::Neutron::Segment", {**NET, "network_type": "vxlan", "physical_network": "p"},
     "physical_network is prohibited for vxlan provider network."),
    ("OS::Neutron::Segment", {**NET, "network_type": "vlan", "physical_network": "p",
                              "segmentation_id": 4095},
     "Up to 4094 VLAN network segments can exist on each physical_network."),
    ("OS::Neutron::SubnetPool", {"prefixes": ["10.0.0.0/8"], "max_prefixlen": 24,
                                 "default_prefixlen": 26},
     "Illegal prefix bounds: max_prefixlen=24, default_prefixlen=26."),
    ("OS::Neutron::SubnetPool", {"prefixes": ["10.0.0.0/8"], "min_prefixlen": 26,
                                 "default_prefixlen": 24},
     "Illegal prefix bounds: min_prefixlen=26, default_prefixlen=24."),
    ("OS::Nova::Quota", {"project": "p"},
     "At least one of the following properties must be specified: cores, fixed_ips, "
     "floating_ips, injected_file_content_bytes, injected_file_path_bytes, "
     "injected_files, instances, key_pairs, metadata_items, ram, security_group_rules, "
     "security_groups, server_group_members, server_groups."),
])
def test_heats_checks(type_name: str, props: dict[str, Any], message: str) -> None:
    with pytest.raises(StackValidationFailed) as caught:
        make(FakeRuntime(), "r", type_name, props)
    assert str(caught.value) == message


@pytest.mark.parametrize(("type_name", "props"), [
    ("OS::Neutron::Segment", {**NET, "network_type": "vlan", "physical_network": "p",
                              "segmentation_id": 100}),
    ("OS::Neutron::Segment", {**NET, "network_type": "vxlan", "segmentation_id": 7}),
    ("OS::Neutron::SubnetPool", {"prefixes": ["10.0.0.0/8"], "min_prefixlen": 16,
                                 "default_prefixlen": 24, "max_prefixlen": 28}),
    ("OS::Nova::Quota", {"project": "p", "cores": -1}),
])
def test_valid_combinations_pass(type_name: str, props: dict[str, Any]) -> None:
    make(FakeRuntime(), "r", type_name, props)
