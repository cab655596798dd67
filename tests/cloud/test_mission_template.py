"""The mission's first template (tests/cloud/templates/mission.yaml, verbatim from the
documents the project started from, issue 25): it spells the subnet's network and the
router interface's router and subnet with Heat's deprecated names (``network_id``,
``router_id``, ``subnet_id``), which Heat's translation rules turn into the current ones
before validation. Created, grown from one server to three, deleted, checked in the
real Nova and Neutron. It is also docs/resources.md's worked example: the page's
template is this file, and its commands run here as written with python-openstackclient,
as a user of a project of its own, with Kiln behind the cloud's Keystone."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.cloud.helpers import delete_and_wait, find, settled
from tests.cloud.identity import CloudUser, keystone_options, new_user, remove_user
from tests.support import docs
from tests.support.cloud import Cloud
from tests.support.server import start_kiln

TEMPLATE = (Path(__file__).parent / "templates" / "mission.yaml").read_text()
#: docs/resources.md's worked example
EXAMPLE = docs.section(docs.page("resources.md"), "Worked example: the mission template")


def _prerequisites(sdk: Any) -> None:
    """What the template's parameter defaults name: the image ``cirros-0.3.5`` and the
    keypair ``dxl-key`` (the test cloud already has ``m1.tiny`` and ``public``)."""
    if find(sdk.image.find_image, "cirros-0.3.5") is None:
        sdk.image.create_image(
            name="cirros-0.3.5",
            data=b"\0" * 4096,
            disk_format="raw",
            container_format="bare",
            visibility="public",
            allow_duplicates=True,
        )
    if find(sdk.compute.find_keypair, "dxl-key") is None:
        sdk.compute.create_keypair(name="dxl-key")
    assert find(sdk.compute.find_flavor, "m1.tiny") is not None
    assert find(sdk.network.find_network, "public") is not None


def _servers(heat: Any, stack_id: str) -> list[str]:
    group = heat.resources.get(stack_id, "servers").physical_resource_id
    return sorted(
        r.physical_resource_id
        for r in heat.resources.list(group)
        if r.resource_type == "OS::Nova::Server"
    )


def test_mission_template_create_grow_delete(cloud_heat: Any, sdk: Any) -> None:
    _prerequisites(sdk)
    name = f"mission-{uuid.uuid4().hex[:8]}"
    stack_id = cloud_heat.stacks.create(stack_name=name, template=TEMPLATE)["stack"]["id"]
    settled(cloud_heat, stack_id, "CREATE_COMPLETE", timeout=300)

    ids = {r.resource_name: r.physical_resource_id for r in cloud_heat.resources.list(stack_id)}
    subnet = sdk.network.get_subnet(ids["private_subnet"])
    assert subnet.network_id == ids["private_net"]
    assert subnet.name == "private_test_subnet"
    router = sdk.network.get_router(ids["router"])
    assert router.external_gateway_info["network_id"] == find(sdk.network.find_network, "public").id
    assert [
        p.device_id
        for p in sdk.network.ports(
            device_owner="network:router_interface", network_id=ids["private_net"]
        )
    ] == [ids["router"]]
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
        "      network_id: public\n      network: public\n",
    )
    assert both != TEMPLATE
    try:
        cloud_heat.stacks.create(stack_name=f"both-{uuid.uuid4().hex[:8]}", template=both)
    except exc.HTTPBadRequest as caught:
        message = str(caught)
    else:
        raise AssertionError("create accepted both network and network_id")
    assert (
        "Property error: resources.private_subnet.properties.network: Cannot define "
        "the following properties at the same time: network, network_id"
    ) in message


def test_lookup_of_an_old_name_is_reported_under_the_new_one(cloud_heat: Any) -> None:
    """Heat checks ``neutron.network`` on the translated ``network``: a missing network
    given as ``network_id`` is an error of ``properties.network``."""
    from heatclient import exc

    template = {
        "heat_template_version": "2013-05-23",
        "resources": {
            "s": {
                "type": "OS::Neutron::Subnet",
                "properties": {"network_id": "kiln-no-such-net", "cidr": "10.9.0.0/24"},
            }
        },
    }
    try:
        cloud_heat.stacks.validate(template=template)
        cloud_heat.stacks.create(stack_name=f"nonet-{uuid.uuid4().hex[:8]}", template=template)
    except exc.HTTPBadRequest as caught:
        message = str(caught)
    else:
        raise AssertionError("a missing network was accepted")
    assert (
        "Property error: resources.s.properties.network: Error validating value 'kiln-no-such-net'"
    ) in message


def _block(lang: str) -> str:
    found = re.search(rf"^```{lang}\n(.*?)^```$", EXAMPLE, re.S | re.M)
    assert found, f"no {lang} block in the worked example"
    return found[1]


@pytest.fixture
def docs_user(cloud: Cloud, sdk: Any) -> Iterator[CloudUser]:
    made = new_user(cloud, sdk, "docs")
    try:
        yield made
    finally:
        for key in made.connect().compute.keypairs():
            made.connect().compute.delete_keypair(key, ignore_missing=True)
        remove_user(sdk, made)


@contextmanager
def _own_region(cloud: Cloud, sdk: Any, kiln_url: str) -> Iterator[str]:
    """A region of the catalog of its own, with the cloud's public endpoints and Kiln as
    ``orchestration``: the CLI finds Heat in the catalog, and a Kiln another test put
    in the shared catalog (the tempest run's) is not in this region."""
    idn = sdk.identity
    region = idn.create_region(id=f"docs-{uuid.uuid4().hex[:8]}")
    kinds = {s.id: s.type for s in idn.services()}
    service = idn.create_service(name=f"kiln-{region.id}", type="orchestration")
    made = [
        idn.create_endpoint(
            service_id=service.id,
            interface="public",
            url=f"{kiln_url}/v1/%(project_id)s",
            region_id=region.id,
        )
    ]
    try:
        for endpoint in idn.endpoints(region_id=cloud.region, interface="public"):
            if kinds.get(endpoint.service_id) != "orchestration":
                made.append(
                    idn.create_endpoint(
                        service_id=endpoint.service_id,
                        url=endpoint.url,
                        interface="public",
                        region_id=region.id,
                    )
                )
        yield region.id
    finally:
        for endpoint in made:
            idn.delete_endpoint(endpoint, ignore_missing=True)
        idn.delete_service(service, ignore_missing=True)
        idn.delete_region(region, ignore_missing=True)


def test_the_docs_worked_example_runs_as_written(
    cloud: Cloud, sdk: Any, docs_user: CloudUser, tmp_path: Path
) -> None:
    """The page's template is the mission template, and its commands, run one by one
    with the ``openstack`` CLI against Kiln in keystone mode, create the stack, grow it
    to three servers and delete everything from Nova and Neutron."""
    assert _block("yaml") == TEMPLATE
    _prerequisites(sdk)
    kiln = start_kiln(tmp_path / "kiln", options=keystone_options(cloud, sdk))
    try:
        with _own_region(cloud, sdk, kiln.url) as region:
            _run_commands(docs_user, region, tmp_path)
        conn = docs_user.connect()
        assert not list(conn.compute.servers())
        project = docs_user.project_id
        assert not list(sdk.network.networks(project_id=project))
        assert not list(sdk.network.ports(project_id=project))
        assert not list(sdk.network.routers(project_id=project))
    finally:
        kiln.stop()


def _run_commands(user: CloudUser, region: str, where: Path) -> None:
    (where / "mission.yaml").write_text(_block("yaml"))
    entry = {
        "auth": user.auth(),
        "region_name": region,
        "identity_api_version": "3",
        "interface": "public",
    }
    (where / "clouds.yaml").write_text(json.dumps({"clouds": {"docs": entry}}))
    env = {
        **os.environ,
        "OS_CLOUD": "docs",
        "OS_CLIENT_CONFIG_FILE": str(where / "clouds.yaml"),
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    conn = user.connect()
    seen: dict[str, list[str]] = {}
    for line in _block("sh").strip().splitlines():
        done = subprocess.run(
            ["bash", "-c", line],
            cwd=where,
            env=env,
            text=True,
            capture_output=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, f"{line}: {done.stderr}"
        if " stack create " in line or " stack update " in line:
            seen[line.split()[2]] = [s.id for s in conn.compute.servers()]
    assert len(seen["create"]) == 1 and len(seen["update"]) == 3
    assert set(seen["create"]) <= set(seen["update"])
