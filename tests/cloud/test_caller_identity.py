"""Kiln behind the cloud's Keystone with no credentials of its own ([kiln_clients]
unset): a template's lookups (``glance.image``, ``nova.flavor``, ``neutron.network``)
and the resources' calls act with the caller's identity, as Heat's do (the request's
token at validation, the stack's trust for the work). So a user of project A cannot
name project B's private network or image by ID: the create is refused with the same
400 Heat 27.0.1 gives on the same cloud (checked side by side with
``../shared/peer-cloud/heat-start.sh``): ``Property error:
resources.port.properties.network: Error validating value '<id>': Unable to find
network with name or id '<id>'`` and ``... Error validating value '<id>': No images
matching {'name': '<id>'}.``, while B, whose objects they are, uses them."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.cloud.helpers import delete_and_wait, settled
from tests.cloud.identity import CloudUser, keystone_options, new_user, remove_user
from tests.support.cloud import Cloud
from tests.support.cloud.catalog import IMAGE
from tests.support.server import KilnProcess, start_kiln


@pytest.fixture(scope="module")
def keystone_kiln(cloud: Cloud, sdk: Any, tmp_path_factory: pytest.TempPathFactory
                  ) -> Iterator[KilnProcess]:
    proc = start_kiln(tmp_path_factory.mktemp("keystone-kiln"),
                      options=keystone_options(cloud, sdk))
    try:
        yield proc
    finally:
        proc.stop()


@pytest.fixture(scope="module")
def users(cloud: Cloud, sdk: Any) -> Iterator[tuple[CloudUser, CloudUser]]:
    a, b = new_user(cloud, sdk, "ida"), new_user(cloud, sdk, "idb")
    try:
        yield a, b
    finally:
        remove_user(sdk, a)
        remove_user(sdk, b)


@pytest.fixture(scope="module")
def b_objects(users: tuple[CloudUser, CloudUser]) -> Iterator[dict[str, str]]:
    """Project B's private network (with a subnet) and private image, made by B."""
    b = users[1]
    conn = b.connect()
    net = conn.network.create_network(name=f"b-private-{uuid.uuid4().hex[:6]}")
    conn.network.create_subnet(network_id=net.id, ip_version=4, cidr="10.83.0.0/24")
    image = conn.image.create_image(name=f"b-image-{uuid.uuid4().hex[:6]}",
                                    data=b"\0" * 4096, disk_format="raw",
                                    container_format="bare", visibility="private",
                                    allow_duplicates=True)
    try:
        yield {"network": net.id, "image": image.id}
    finally:
        for port in conn.network.ports(network_id=net.id):
            conn.network.delete_port(port, ignore_missing=True)
        conn.network.delete_network(net, ignore_missing=True)
        conn.image.delete_image(image, ignore_missing=True)


def _port_template(network: str) -> dict[str, Any]:
    return {"heat_template_version": "2018-08-31", "resources": {"port": {
        "type": "OS::Neutron::Port", "properties": {"network": network}}}}


def _server_template(image: str) -> dict[str, Any]:
    return {"heat_template_version": "2018-08-31", "resources": {
        "net": {"type": "OS::Neutron::Net"},
        "subnet": {"type": "OS::Neutron::Subnet",
                   "properties": {"network": {"get_resource": "net"},
                                  "cidr": "10.84.0.0/24"}},
        "server": {"type": "OS::Nova::Server", "depends_on": ["subnet"],
                   "properties": {"image": image, "flavor": "m1.tiny",
                                  "networks": [{"network": {"get_resource": "net"}}]}}}}


def _refusal(heat: Any, template: dict[str, Any]) -> str:
    from heatclient import exc

    try:
        heat.stacks.create(stack_name=f"other-{uuid.uuid4().hex[:8]}", template=template)
    except exc.HTTPBadRequest as caught:
        return str(caught)
    raise AssertionError("the create was accepted")


def test_a_user_cannot_name_another_projects_network_or_image(
        keystone_kiln: KilnProcess, users: tuple[CloudUser, CloudUser],
        b_objects: dict[str, str]) -> None:
    a, _ = users
    heat = a.heat(keystone_kiln.url)
    net = b_objects["network"]
    message = _refusal(heat, _port_template(net))
    assert (f"Property error: resources.port.properties.network: Error validating value "
            f"'{net}': Unable to find network with name or id '{net}'") in message
    image = b_objects["image"]
    message = _refusal(heat, _server_template(image))
    assert (f"Property error: resources.server.properties.image: Error validating value "
            f"'{image}': No images matching {{'name': '{image}'}}.") in message
    assert heat.stacks.list() is not None and list(heat.stacks.list()) == []


def test_the_owner_uses_them_and_the_stack_acts_as_its_creator(
        keystone_kiln: KilnProcess, users: tuple[CloudUser, CloudUser],
        b_objects: dict[str, str], sdk: Any) -> None:
    """B's own network and image pass; what the stack makes is B's (the create acted
    with B's trust: Kiln has no cloud credentials of its own here), and a public image
    and flavor named in the template are found with B's token (once refused as 'no
    cloud is configured')."""
    _, b = users
    heat = b.heat(keystone_kiln.url)
    stack = heat.stacks.create(stack_name=f"own-{uuid.uuid4().hex[:8]}",
                               template=_port_template(b_objects["network"]))["stack"]
    settled(heat, stack["id"], "CREATE_COMPLETE", timeout=120)
    port = heat.resources.get(stack["id"], "port").physical_resource_id
    assert sdk.network.get_port(port).project_id == b.project_id
    assert delete_and_wait(heat, stack["id"]) == "DELETE_COMPLETE"

    for image in (b_objects["image"], IMAGE):
        stack = heat.stacks.create(stack_name=f"srv-{uuid.uuid4().hex[:8]}",
                                   template=_server_template(image))["stack"]
        settled(heat, stack["id"], "CREATE_COMPLETE", timeout=180)
        server = heat.resources.get(stack["id"], "server").physical_resource_id
        assert sdk.compute.get_server(server).project_id == b.project_id
        assert delete_and_wait(heat, stack["id"], timeout=180) == "DELETE_COMPLETE"
        assert next(iter(sdk.compute.servers(uuid=server, all_projects=True)), None) is None


def test_without_a_token_nothing_reaches_the_cloud(keystone_kiln: KilnProcess,
                                                   users: tuple[CloudUser, CloudUser]
                                                   ) -> None:
    """A request without a token is refused before any lookup (401)."""
    import requests

    a, _ = users
    answer = requests.post(f"{keystone_kiln.url}/v1/{a.project_id}/stacks", timeout=10,
                           json={"stack_name": "x", "template": _port_template("public")})
    assert answer.status_code == 401


def test_types_needing_a_neutron_extension_are_listed_with_the_callers_token(
        keystone_kiln: KilnProcess, users: tuple[CloudUser, CloudUser]) -> None:
    """A token's catalog names no Neutron extension: Kiln asks Neutron with that token,
    as Heat does, so ExtraRouteSet (``extraroute-atomic``) is listed and shown (it was
    left out in keystone mode, which skipped heat-tempest-plugin's ExtraRouteSet tests)."""
    heat = users[0].heat(keystone_kiln.url)
    listed = {t.resource_type for t in heat.resource_types.list()}
    assert {"OS::Neutron::ExtraRouteSet", "OS::Neutron::Net"} <= listed
    shown = heat.resource_types.get("OS::Neutron::ExtraRouteSet")
    assert set(shown["properties"]) == {"router", "routes"}
