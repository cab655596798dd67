"""Heat's translation rules (kiln.resources.translation): the rules alone, then as each
OpenStack type declares them, applied before its properties are validated. The conflict
messages and their paths are Heat 27's, as its own Properties and TranslationRule give
them for the same data (run in-process against Heat 27.0.1)."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.errors import StackValidationFailed
from kiln.resources.translation import Add, Delete, Replace, translate
from tests.unit.resources.fakes import FakeRuntime, make

CONFLICT = "Cannot define the following properties at the same time: "


def test_replace_moves_the_deprecated_value_and_leaves_the_input_alone() -> None:
    values = {"network_id": "n", "cidr": "10.0.0.0/24"}
    assert translate([Replace(("network",), "network_id")], values) == {
        "network": "n", "cidr": "10.0.0.0/24"}
    assert values == {"network_id": "n", "cidr": "10.0.0.0/24"}


def test_replace_without_the_old_name_changes_nothing() -> None:
    assert translate([Replace(("network",), "network_id")], {"network": "n"}) == \
        {"network": "n"}
    # an explicit null under the old name is as good as absent
    assert translate([Replace(("network",), "network_id")],
                     {"network": "n", "network_id": None}) == {"network": "n"}


def test_replace_both_given_is_heats_conflict() -> None:
    with pytest.raises(StackValidationFailed) as caught:
        translate([Replace(("network",), "network_id")], {"network": "a", "network_id": "b"})
    assert caught.value.message == CONFLICT + "network, network_id"
    assert caught.value.path == ("network",)


def test_replace_an_empty_new_value_is_no_conflict() -> None:
    # Heat compares truthiness: an empty new value gives way to the old one
    assert translate([Replace(("network",), "network_id")],
                     {"network": "", "network_id": "b"}) == {"network": "b"}


def test_replace_inside_list_items() -> None:
    rule = Replace(("networks", "network"), "uuid")
    values = {"networks": [{"uuid": "a"}, {"network": "b"}, {"port": "p"}, "odd"]}
    assert translate([rule], values) == {
        "networks": [{"network": "a"}, {"network": "b"}, {"port": "p"}, "odd"]}
    assert values["networks"][0] == {"uuid": "a"}
    with pytest.raises(StackValidationFailed) as caught:
        translate([rule], {"networks": [{"network": "b"}, {"network": "a", "uuid": "a"}]})
    assert caught.value.message == CONFLICT + "networks.network, networks.uuid"
    assert caught.value.path == ("networks", 1, "network")


def test_add_appends_the_single_value_and_deletes_it() -> None:
    rule = Add(("l3_agent_ids",), "l3_agent_id")
    assert translate([rule], {"l3_agent_id": "x"}) == {"l3_agent_ids": ["x"]}
    assert translate([rule], {"l3_agent_id": "x", "l3_agent_ids": ["y"]}) == \
        {"l3_agent_ids": ["y", "x"]}
    assert translate([rule], {"l3_agent_ids": ["y"]}) == {"l3_agent_ids": ["y"]}


def test_delete_and_unresolved_values() -> None:
    assert translate([Delete(("sequence",))], {"sequence": "a", "length": 3}) == {"length": 3}
    marker = object()
    assert translate([Delete(("sequence",))], marker) is marker


@pytest.mark.parametrize(("type_name", "given", "expected"), [
    ("OS::Neutron::Subnet", {"network_id": "n", "cidr": "10.0.0.0/24"}, {"network": "n"}),
    ("OS::Neutron::Port", {"network_id": "n", "fixed_ips": [{"subnet_id": "s"}]},
     {"network": "n", "fixed_ips": [{"subnet": "s", "subnet_id": None,
                                     "ip_address": None}]}),
    ("OS::Neutron::RouterInterface", {"router_id": "r", "subnet_id": "s"},
     {"router": "r", "subnet": "s"}),
    ("OS::Neutron::RouterInterface", {"router_id": "r", "port_id": "p"},
     {"router": "r", "port": "p"}),
    ("OS::Neutron::FloatingIP", {"floating_network_id": "public"},
     {"floating_network": "public"}),
    ("OS::Neutron::Router", {"l3_agent_id": "a"}, {"l3_agent_ids": ["a"]}),
    ("OS::Cinder::Volume", {"size": 1, "imageRef": "cirros"}, {"image": "cirros"}),
    ("OS::Nova::Server", {"flavor": "f", "image": "i", "networks": [{"uuid": "n"}]},
     {"networks": [{"network": "n"}]}),
])
def test_types_translate_deprecated_names(type_name: str, given: dict[str, Any],
                                          expected: dict[str, Any]) -> None:
    props = make(FakeRuntime(), "r", type_name, given).properties
    for key, value in expected.items():
        got = props[key]
        if key in {"networks", "fixed_ips"}:
            got = [{k: v for k, v in item.items() if k in value[0]} for item in got]
        assert got == value
    for old in set(given) - set(expected) - {"cidr", "size", "flavor", "image"}:
        assert props.get(old) is None, old


def test_server_block_device_image_id() -> None:
    props = make(FakeRuntime(), "r", "OS::Nova::Server", {
        "flavor": "f", "block_device_mapping_v2": [{"image_id": "i", "boot_index": 0}]},
    ).properties
    bdm = props["block_device_mapping_v2"][0]
    assert bdm["image"] == "i" and bdm.get("image_id") is None


@pytest.mark.parametrize(("type_name", "given", "message"), [
    ("OS::Neutron::Subnet", {"network": "a", "network_id": "b", "cidr": "10.0.0.0/24"},
     "Property error: resources.r.properties.network: " + CONFLICT + "network, network_id"),
    ("OS::Neutron::RouterInterface", {"router": "a", "router_id": "b", "subnet": "s"},
     "Property error: resources.r.properties.router: " + CONFLICT + "router, router_id"),
    ("OS::Nova::Server", {"flavor": "f", "image": "i",
                          "networks": [{"network": "a", "uuid": "b"}]},
     "Property error: resources.r.properties.networks[0].network: "
     + CONFLICT + "networks.network, networks.uuid"),
])
def test_both_names_given_is_a_property_error(type_name: str, given: dict[str, Any],
                                              message: str) -> None:
    with pytest.raises(StackValidationFailed) as caught:
        make(FakeRuntime(), "r", type_name, given)
    assert str(caught.value) == message


@pytest.mark.parametrize(("type_name", "old", "new"), [
    ("OS::Neutron::Subnet", "network_id", "network"),
    ("OS::Neutron::Port", "network_id", "network"),
    ("OS::Neutron::RouterInterface", "router_id", "router"),
    ("OS::Neutron::RouterInterface", "subnet_id", "subnet"),
    ("OS::Neutron::RouterInterface", "port_id", "port"),
    ("OS::Neutron::FloatingIP", "floating_network_id", "floating_network"),
    ("OS::Neutron::Router", "l3_agent_id", "l3_agent_ids"),
    ("OS::Cinder::Volume", "imageRef", "image"),
])
def test_schema_shows_the_old_names_as_heat_does(type_name: str, old: str, new: str) -> None:
    """Heat 27 keeps every translated name in the schema with status HIDDEN, so
    ``resource_types/{type}`` leaves it out while templates may still use it."""
    from kiln.resources.registry import global_registry
    from kiln.resources.typedocs import schema_body

    cls = global_registry().get(type_name)
    assert cls.properties_schema[old].support_status.status == "HIDDEN"
    shown = schema_body(type_name, cls)["properties"]
    assert new in shown and old not in shown
