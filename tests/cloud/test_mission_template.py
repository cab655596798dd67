"""The mission's first template (tests/cloud/templates/mission.yaml, verbatim from the
documents the project started from, issue 25): it spells the subnet's network and the
router interface's router and subnet with Heat's deprecated names (``network_id``,
``router_id``, ``subnet_id``), which Heat's translation rules turn into the current ones
before validation. Created, grown from one server to three, deleted, checked in the
real Nova and Neutron."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from tests.cloud.helpers import delete_and_wait, find, settled

TEMPLATE = (Path(__file__).parent / "templates" / "mission.yaml").read_text()


def _prerequisites(sdk: Any) -> None:
    """What the template's parameter defaults name: the image ``cirros-0.3.5`` and the
    keypair ``dxl-key`` (the test cloud already has ``m1.tiny`` and ``public``)."""
    if find(sdk.image.find_image, "cirros-0.3.5") is None:
        sdk.image.create_image(name="cirros-0.3.5", data=b"\0" * 4096, disk_format="raw",
                               container_format="bare", visibility="public",
                               allow_duplicates=True)
    if find(sdk.compute.find_keypair, "dxl-key") is None:
        sdk.compute.create_keypair(name="dxl-key")
    assert find(sdk.compute.find_flavor, "m1.tiny") is not None
    assert find(sdk.network.find_network, "public") is not None


def _servers(heat: Any, stack_id: str) -> list[str]:
    group = heat.resources.get(stack_id, "servers").physical_resource_id
    return sorted(r.physical_resource_id for r in heat.resources.list(group)
                  if r.resource_type == "OS::Nova::Server")


def test_mission_template_create_grow_delete(cloud_heat: Any, sdk: Any) -> None:
    _prerequisites(sdk)
    name = f"mission-{uuid.uuid4().hex[:8]}"
    stack_id = cloud_heat.stacks.create(stack_name=name, template=TEMPLATE)["stack"]["id"]
    settled(cloud_heat, stack_id, "CREATE_COMPLETE", timeout=300)

    ids = {r.resource_name: r.physical_resource_id
           for r in cloud_heat.resources.list(stack_id)}
    subnet = sdk.network.get_subnet(ids["private_subnet"])
    assert subnet.network_id == ids["private_net"]
    assert subnet.name == "private_test_subnet"
    router = sdk.network.get_router(ids["router"])
    assert router.external_gateway_info["network_id"] == \
        find(sdk.network.find_network, "public").id
    assert [p.device_id for p in sdk.network.ports(
        device_owner="network:router_interface", network_id=ids["private_net"])] == \
        [ids["router"]]
    first = _servers(cloud_heat, stack_id)
    assert len(first) == 1
    server = sdk.compute.get_server(first[0])
    assert server.status == "ACTIVE" and server.key_name == "dxl-key"
    assert list(server.addresses) == ["private_test_net"]

    grown = TEMPLATE.replace("count: 1\n", "count: 3\n")
    assert grown != TEMPLATE
    cloud_heat.stacks.update(stack_id, template=grown)
    settled(cloud_heat, stack_id, "UPDATE_COMPLETE", timeout=300)
    three = _servers(cloud_heat, stack_id)
    assert len(three) == 3 and set(first) <= set(three)
    assert {sdk.compute.get_server(i).status for i in three} == {"ACTIVE"}

    assert delete_and_wait(cloud_heat, stack_id, timeout=300) == "DELETE_COMPLETE"
    for server_id in three:
        assert next(iter(sdk.compute.servers(uuid=server_id)), None) is None
    assert next(iter(sdk.network.networks(id=ids["private_net"])), None) is None
    assert next(iter(sdk.network.subnets(id=ids["private_subnet"])), None) is None
    assert next(iter(sdk.network.routers(id=ids["router"])), None) is None
    assert next(iter(sdk.network.ports(network_id=ids["private_net"])), None) is None


def test_old_and_new_name_together_is_heats_conflict(cloud_heat: Any, sdk: Any) -> None:
    """Template validate checks only property names (Heat's ``validate_template``), so
    it accepts the mission template as it is; a create checks the values, translation
    included: a subnet given both ``network`` and ``network_id`` is refused with Heat's
    conflict, naming the property. (Kiln checks values that wait for a resource at the
    resource's create, hence literal names here.)"""
    from heatclient import exc

    _prerequisites(sdk)
    shown = cloud_heat.stacks.validate(template=TEMPLATE)
    assert set(shown["Parameters"]) >= {"key_name", "image", "flavor", "public_net"}

    both = TEMPLATE.replace(
        "      network_id: { get_resource: private_net }\n",
        "      network_id: public\n      network: public\n")
    assert both != TEMPLATE
    try:
        cloud_heat.stacks.create(stack_name=f"both-{uuid.uuid4().hex[:8]}", template=both)
    except exc.HTTPBadRequest as caught:
        message = str(caught)
    else:
        raise AssertionError("create accepted both network and network_id")
    assert ("Property error: resources.private_subnet.properties.network: Cannot define "
            "the following properties at the same time: network, network_id") in message


def test_lookup_of_an_old_name_is_reported_under_the_new_one(cloud_heat: Any) -> None:
    """Heat checks ``neutron.network`` on the translated ``network``: a missing network
    given as ``network_id`` is an error of ``properties.network``."""
    from heatclient import exc

    template = {"heat_template_version": "2013-05-23", "resources": {"s": {
        "type": "OS::Neutron::Subnet",
        "properties": {"network_id": "kiln-no-such-net", "cidr": "10.9.0.0/24"}}}}
    try:
        cloud_heat.stacks.validate(template=template)
        cloud_heat.stacks.create(stack_name=f"nonet-{uuid.uuid4().hex[:8]}",
                                 template=template)
    except exc.HTTPBadRequest as caught:
        message = str(caught)
    else:
        raise AssertionError("a missing network was accepted")
    assert ("Property error: resources.s.properties.network: Error validating value "
            "'kiln-no-such-net'") in message
