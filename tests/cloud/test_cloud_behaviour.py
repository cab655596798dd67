"""Behaviour across the cloud types, against the real services: lookups inside lists
and at update, external_id adoption, attributes read live by resource show."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.cloud.helpers import delete_and_wait, find, outputs
from tests.support.clients import wait_for_stack_status


def _hot(resources: dict[str, Any], outputs: dict[str, Any] | None = None
         ) -> dict[str, Any]:
    body: dict[str, Any] = {"heat_template_version": "2018-08-31", "resources": resources}
    if outputs:
        body["outputs"] = outputs
    return body


def _server(**props: Any) -> dict[str, Any]:
    base = {"flavor": "m1.tiny", "image": "cirros-kiln", "user_data_format": "RAW",
            "networks": [{"network": "public"}]}
    return {"type": "OS::Nova::Server", "properties": {**base, **props}}


def _create(heat: Any, template: dict[str, Any], timeout: float = 240) -> Any:
    name = f"cb-{uuid.uuid4().hex[:8]}"
    heat.stacks.create(stack_name=name, template=template)
    return wait_for_stack_status(heat, name, timeout=timeout)


# -- lookups -------------------------------------------------------------------------------

def test_a_missing_network_inside_networks_is_a_400_naming_the_item(cloud_heat: Any) -> None:
    from heatclient import exc

    template = _hot({"server": _server(networks=[{"network": "public"},
                                                 {"network": "no-such-net"}])})
    with pytest.raises(exc.HTTPBadRequest) as caught:
        cloud_heat.stacks.create(stack_name=f"nn-{uuid.uuid4().hex[:8]}", template=template)
    assert ("Property error: resources.server.properties.networks[1].network: Error "
            "validating value 'no-such-net': Unable to find network with name or id "
            "'no-such-net'") in str(caught.value)


def test_a_missing_flavor_at_update_is_a_400_and_changes_nothing(cloud_heat: Any) -> None:
    from heatclient import exc

    template = _hot({"port": {"type": "OS::Neutron::Port",
                              "properties": {"network": "public"}}})
    stack = _create(cloud_heat, template)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    bad = _hot({"port": template["resources"]["port"],
                "server": _server(flavor="m1.nonesuch")})
    with pytest.raises(exc.HTTPBadRequest) as caught:
        cloud_heat.stacks.update(stack.id, template=bad)
    assert ("Property error: resources.server.properties.flavor: Error validating value "
            "'m1.nonesuch': No Flavor matching {'name': 'm1.nonesuch'}. (HTTP 404)"
            ) in str(caught.value)
    after = cloud_heat.stacks.get(stack.id)
    assert after.stack_status == "CREATE_COMPLETE"
    assert [r.resource_name for r in cloud_heat.resources.list(stack.id)] == ["port"]
    assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"


# -- external_id ---------------------------------------------------------------------------

def test_external_network_and_server_are_adopted_checked_and_shown(cloud_heat: Any,
                                                                   sdk: Any) -> None:
    """Heat 27: no properties needed, ADOPT then CHECK, the object's attributes; a
    property change leaves it alone, and so does the stack's delete once it was updated
    (as Heat 27.0.1 did on this cloud: bench/results/update_parity_heat27.json, the
    external_id scenarios)."""
    net = sdk.network.create_network(name=f"ext-{uuid.uuid4().hex[:6]}")
    keep = sdk.network.create_network(name=f"keep-{uuid.uuid4().hex[:6]}")
    server = None
    try:
        template = _hot({"net": {"type": "OS::Neutron::Net", "external_id": net.id},
                         "kept": {"type": "OS::Neutron::Net", "external_id": keep.id,
                                  "deletion_policy": "Retain"}},
                        {"net_name": {"value": {"get_attr": ["net", "name"]}}})
        stack = _create(cloud_heat, template)
        assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
        shown = cloud_heat.resources.get(stack.id, "net")
        assert (shown.resource_status, shown.physical_resource_id) == (
            "CHECK_COMPLETE", net.id)
        assert outputs(stack)["net_name"] == net.name
        template["resources"]["net"]["properties"] = {"name": "ignored"}
        cloud_heat.stacks.update(stack.id, template=template)
        stack = wait_for_stack_status(cloud_heat, stack.id, timeout=120)
        assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
        assert sdk.network.get_network(net.id).name == net.name
        assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"
        assert find(sdk.network.find_network, net.id) is not None
        assert find(sdk.network.find_network, keep.id) is not None

        server = sdk.compute.create_server(name=f"ext-{uuid.uuid4().hex[:6]}",
                                           flavor_id=sdk.compute.find_flavor("m1.tiny").id,
                                           image_id=sdk.image.find_image("cirros-kiln").id,
                                           networks=[{"uuid": sdk.network.find_network(
                                               "public").id}])
        sdk.compute.wait_for_server(server, wait=180)
        stack = _create(cloud_heat, _hot(
            {"server": {"type": "OS::Nova::Server", "external_id": server.id,
                        "deletion_policy": "Retain"}},
            {"addresses": {"value": {"get_attr": ["server", "networks", "public"]}}}))
        assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
        assert cloud_heat.resources.get(stack.id, "server").resource_status == \
            "CHECK_COMPLETE"
        assert len(outputs(stack)["addresses"]) == 1
        assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"
        assert sdk.compute.get_server(server.id).status == "ACTIVE"
    finally:
        for leftover in (net.id, keep.id):
            if find(sdk.network.find_network, leftover) is not None:
                sdk.network.delete_network(leftover)
        if server is not None:
            sdk.compute.delete_server(server.id, ignore_missing=True)


def test_a_missing_external_id_is_a_400(cloud_heat: Any) -> None:
    from heatclient import exc

    missing = str(uuid.uuid4())
    with pytest.raises(exc.HTTPBadRequest) as caught:
        cloud_heat.stacks.create(stack_name=f"ne-{uuid.uuid4().hex[:8]}", template=_hot(
            {"port": {"type": "OS::Neutron::Port", "external_id": missing}}))
    assert (f"Invalid external resource: Resource {missing} (OS::Neutron::Port) can not "
            "be found.") in str(caught.value)


# -- live attributes -----------------------------------------------------------------------

def test_resource_show_reads_the_attributes_from_the_cloud(cloud_heat: Any, sdk: Any) -> None:
    """A change made behind Kiln's back shows in ``resource show`` at once (Heat reads
    the object there), while the stored outputs keep the value of the last action."""
    stack = _create(cloud_heat, _hot(
        {"port": {"type": "OS::Neutron::Port",
                  "properties": {"network": "public", "name": "before"}}},
        {"name": {"value": {"get_attr": ["port", "name"]}}}))
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    port_id = cloud_heat.resources.get(stack.id, "port").physical_resource_id
    sdk.network.update_port(port_id, name="after")
    shown = cloud_heat.resources.get(stack.id, "port")
    assert shown.attributes["name"] == "after"
    assert outputs(cloud_heat.stacks.get(stack.id))["name"] == "before"
    assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"


def test_outputs_naming_uncached_attributes_are_read_live(cloud_heat: Any,
                                                           sdk: Any) -> None:
    """Heat reads ``show`` and a volume's ``status`` afresh for every stack show; the
    other attributes (``size``) keep the value of the last action."""
    stack = _create(cloud_heat, _hot(
        {"vol": {"type": "OS::Cinder::Volume", "properties": {"size": 1}}},
        {"name": {"value": {"get_attr": ["vol", "show", "name"]}},
         "status": {"value": {"get_attr": ["vol", "status"]}},
         "size": {"value": {"get_attr": ["vol", "size"]}}}))
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    assert outputs(stack)["status"] == "available"
    volume_id = cloud_heat.resources.get(stack.id, "vol").physical_resource_id
    sdk.block_storage.update_volume(volume_id, name="renamed")
    sdk.block_storage.reset_volume_status(volume_id, status="error", attach_status=None,
                                          migration_status=None)
    shown = outputs(cloud_heat.stacks.get(stack.id))
    assert (shown["name"], shown["status"], shown["size"]) == ("renamed", "error", "1")
    assert cloud_heat.stacks.output_show(stack.id, "status")["output"]["output_value"] \
        == "error"
    assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"


def test_a_volumes_plain_attributes_are_text(cloud_heat: Any) -> None:
    """Heat 27's volume answers its plain attributes as the text of Cinder's values
    (checked against Heat 27.0.1 on the same cloud)."""
    names = ("size", "bootable", "encrypted", "multiattach", "snapshot_id", "volume_type")
    stack = _create(cloud_heat, _hot(
        {"vol": {"type": "OS::Cinder::Volume", "properties": {"size": 1}}},
        {n: {"value": {"get_attr": ["vol", n]}} for n in names}))
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    assert outputs(stack) == {"size": "1", "bootable": "false", "encrypted": "False",
                              "multiattach": "False", "snapshot_id": "None",
                              "volume_type": "__DEFAULT__"}
    assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"


def test_an_external_keystone_project_is_adopted(cloud_heat: Any, sdk: Any) -> None:
    project = sdk.identity.create_project(name=f"kiln-ext-{uuid.uuid4().hex[:6]}")
    try:
        stack = _create(cloud_heat, _hot(
            {"p": {"type": "OS::Keystone::Project", "external_id": project.id,
                   "deletion_policy": "Retain"}},
            {"name": {"value": {"get_attr": ["p", "show", "name"]}}}))
        assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
        shown = cloud_heat.resources.get(stack.id, "p")
        assert (shown.resource_status, shown.physical_resource_id) == (
            "CHECK_COMPLETE", project.id)
        assert outputs(stack)["name"] == project.name
        assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"
        assert sdk.identity.get_project(project.id).name == project.name
    finally:
        sdk.identity.delete_project(project.id, ignore_missing=True)
