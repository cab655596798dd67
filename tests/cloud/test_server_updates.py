"""What OS::Nova::Server and OS::Cinder::Volume do beyond a create, checked in the real
Nova and Cinder: booting from a volume (block_device_mapping_v2) and attaching one at
boot (block_device_mapping), NICs added and removed by an update of ``networks``, a
volume retyped in place, and a stack suspended and resumed."""

from __future__ import annotations

import uuid
from typing import Any

from tests.cloud.helpers import delete_and_wait, find
from tests.support.clients import wait_for_stack_status


def _stack(heat: Any, template: dict[str, Any], timeout: float = 300) -> Any:
    name = f"su-{uuid.uuid4().hex[:8]}"
    heat.stacks.create(stack_name=name, template=template)
    return wait_for_stack_status(heat, name, timeout=timeout)


def _ids(heat: Any, stack: Any) -> dict[str, str]:
    return {r.resource_name: r.physical_resource_id for r in heat.resources.list(stack.id)}


def test_boot_from_volume_and_a_volume_attached_at_boot(cloud_heat: Any, sdk: Any) -> None:
    """The test cloud's Cinder cannot copy an image into a volume (its privsep needs
    sudo), so the boot volume is an empty one marked bootable."""
    root = sdk.block_storage.create_volume(size=1, name=f"kiln-root-{uuid.uuid4().hex[:6]}")
    sdk.block_storage.wait_for_status(root, "available", wait=120)
    sdk.block_storage.set_volume_bootable_status(root, True)
    template = {"heat_template_version": "2018-08-31", "resources": {
        "extra": {"type": "OS::Cinder::Volume", "properties": {"size": 1}},
        "booted": {"type": "OS::Nova::Server", "properties": {
            "flavor": "m1.tiny", "networks": [{"network": "public"}],
            "user_data_format": "RAW",
            "block_device_mapping_v2": [{"volume_id": root.id, "boot_index": 0,
                                         "delete_on_termination": True}]}},
        "legacy": {"type": "OS::Nova::Server", "properties": {
            "flavor": "m1.tiny", "image": "cirros-kiln",
            "networks": [{"network": "public"}], "user_data_format": "RAW",
            "block_device_mapping": [{"device_name": "vdb",
                                      "volume_id": {"get_resource": "extra"}}]}}}}
    try:
        stack = _stack(cloud_heat, template)
        assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
        ids = _ids(cloud_heat, stack)
        assert sdk.compute.get_server(ids["booted"]).status == "ACTIVE"
        found = sdk.block_storage.get_volume(root.id)
        assert found.status == "in-use"
        assert [a["server_id"] for a in found.attachments] == [ids["booted"]]
        extra = sdk.block_storage.get_volume(ids["extra"])
        assert extra.status == "in-use"
        assert [a["server_id"] for a in extra.attachments] == [ids["legacy"]]
        assert delete_and_wait(cloud_heat, stack.id, timeout=300) == "DELETE_COMPLETE"
        assert find(sdk.block_storage.find_volume, ids["extra"]) is None
        # delete_on_termination: Nova deletes the boot volume with the server
        assert _gone_soon(sdk, root.id)
    finally:
        if find(sdk.block_storage.find_volume, root.id) is not None:
            sdk.block_storage.delete_volume(root.id, ignore_missing=True)


def _eventually(check: Any, timeout: float = 60) -> bool:
    import time

    deadline = time.monotonic() + timeout
    delay = 0.1
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(delay)  # bounded poll with backoff
        delay = min(delay * 2, 1.0)
    return True


def _gone_soon(sdk: Any, volume_id: str, timeout: float = 60) -> bool:
    """Nova deletes a delete_on_termination volume after the server is gone."""
    return _eventually(lambda: find(sdk.block_storage.find_volume, volume_id) is None,
                       timeout)


def test_networks_update_attaches_and_detaches_nics(cloud_heat: Any, sdk: Any) -> None:
    def template(nets: list[str]) -> dict[str, Any]:
        return {"heat_template_version": "2018-08-31", "resources": {
            "a": {"type": "OS::Neutron::Net"},
            "a_sub": {"type": "OS::Neutron::Subnet",
                      "properties": {"network": {"get_resource": "a"},
                                     "cidr": "10.71.0.0/24"}},
            "b": {"type": "OS::Neutron::Net"},
            "b_sub": {"type": "OS::Neutron::Subnet",
                      "properties": {"network": {"get_resource": "b"},
                                     "cidr": "10.72.0.0/24"}},
            "server": {"type": "OS::Nova::Server", "properties": {
                "flavor": "m1.tiny", "image": "cirros-kiln", "user_data_format": "RAW",
                "networks": [{"network": {"get_resource": n}} for n in nets]}}},
            "outputs": {"networks": {"value": {"get_attr": ["server", "networks"]}}}}

    stack = _stack(cloud_heat, template(["a"]))
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    ids = _ids(cloud_heat, stack)

    def nets_of_server() -> set[str]:
        return {p.network_id for p in sdk.network.ports(device_id=ids["server"])}

    assert nets_of_server() == {ids["a"]}
    for wanted in (["a", "b"], ["b"]):
        cloud_heat.stacks.update(stack.id, template=template(wanted))
        stack = wait_for_stack_status(cloud_heat, stack.id, timeout=300)
        assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
        assert cloud_heat.resources.get(stack.id, "server").physical_resource_id == \
            ids["server"]
        assert nets_of_server() == {ids[n] for n in wanted}
        listed = sdk.compute.get(f"/servers/{ids['server']}/os-interface").json()
        assert {i["net_id"] for i in listed["interfaceAttachments"]} == \
            {ids[n] for n in wanted}
        # resource show reads the server live; Nova refreshes its address cache a
        # moment after the interfaces change, so that view may take a moment to follow
        names = {sdk.network.get_network(ids[n]).name for n in wanted}
        assert _eventually(lambda sid=stack.id, want=names: set(cloud_heat.resources.get(
            sid, "server").attributes["addresses"]) == want)
    assert delete_and_wait(cloud_heat, stack.id, timeout=300) == "DELETE_COMPLETE"


def test_a_new_volume_type_retypes_the_volume_in_place(cloud_heat: Any, sdk: Any) -> None:
    label = uuid.uuid4().hex[:6]
    types = [sdk.block_storage.create_type(name=f"kiln-{n}-{label}",
                                           extra_specs={"volume_backend_name": "fake"})
             for n in ("one", "two")]
    try:
        template = {"heat_template_version": "2018-08-31",
                    "parameters": {"vt": {"type": "string"}},
                    "resources": {"volume": {"type": "OS::Cinder::Volume", "properties": {
                        "size": 1, "volume_type": {"get_param": "vt"}}}}}
        name = f"rt-{label}"
        cloud_heat.stacks.create(stack_name=name, template=template,
                                 parameters={"vt": types[0].name})
        stack = wait_for_stack_status(cloud_heat, name, timeout=300)
        assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
        volume_id = _ids(cloud_heat, stack)["volume"]
        cloud_heat.stacks.update(stack.id, template=template,
                                 parameters={"vt": types[1].name})
        stack = wait_for_stack_status(cloud_heat, stack.id, timeout=300)
        assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
        assert cloud_heat.resources.get(stack.id, "volume").physical_resource_id == \
            volume_id
        volume = sdk.block_storage.get_volume(volume_id)
        assert (volume.status, volume.volume_type) == ("available", types[1].name)
        assert delete_and_wait(cloud_heat, stack.id, timeout=300) == "DELETE_COMPLETE"
    finally:
        for vtype in types:
            sdk.block_storage.delete_type(vtype.id, ignore_missing=True)


def test_suspend_and_resume_a_server(cloud_heat: Any, sdk: Any) -> None:
    template = {"heat_template_version": "2018-08-31", "resources": {
        "server": {"type": "OS::Nova::Server", "properties": {
            "flavor": "m1.tiny", "image": "cirros-kiln", "user_data_format": "RAW",
            "networks": [{"network": "public"}]}}}}
    stack = _stack(cloud_heat, template)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    server_id = _ids(cloud_heat, stack)["server"]
    cloud_heat.actions.suspend(stack.id)
    stack = wait_for_stack_status(cloud_heat, stack.id, timeout=180)
    assert stack.stack_status == "SUSPEND_COMPLETE", stack.stack_status_reason
    assert sdk.compute.get_server(server_id).status == "SUSPENDED"
    cloud_heat.actions.resume(stack.id)
    stack = wait_for_stack_status(cloud_heat, stack.id, timeout=180)
    assert stack.stack_status == "RESUME_COMPLETE", stack.stack_status_reason
    assert sdk.compute.get_server(server_id).status == "ACTIVE"
    assert delete_and_wait(cloud_heat, stack.id, timeout=180) == "DELETE_COMPLETE"
