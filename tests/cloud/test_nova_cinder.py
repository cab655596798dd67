"""Nova and Cinder resource types through kiln serve and heatclient, checked in the
real Nova and Cinder."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.cloud.helpers import delete_and_wait, find, outputs
from tests.support.clients import wait_for_stack_status

TEMPLATE = """
heat_template_version: 2018-08-31
parameters:
  size: {type: number, default: 1}
  key_label: {type: string}
resources:
  key:
    type: OS::Nova::KeyPair
    properties: {name: {get_param: key_label}, save_private_key: true}
  flavor:
    type: OS::Nova::Flavor
    properties: {ram: 256, vcpus: 1, disk: 1, extra_specs: {"hw:cpu_policy": shared}}
  group:
    type: OS::Nova::ServerGroup
    properties: {policies: [soft-anti-affinity]}
  vtype:
    type: OS::Cinder::VolumeType
    properties: {name: {list_join: ['-', [kiln, {get_param: key_label}]]},
                 metadata: {volume_backend_name: fake}}
  net:
    type: OS::Neutron::Net
  subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: net}, cidr: 10.50.0.0/24}
  server:
    type: OS::Nova::Server
    properties:
      flavor: {get_resource: flavor}
      image: cirros-kiln
      key_name: {get_resource: key}
      scheduler_hints: {group: {get_resource: group}}
      metadata: {role: db}
      networks: [{network: {get_resource: net}, subnet: {get_resource: subnet}}]
      user_data_format: RAW
  volume:
    type: OS::Cinder::Volume
    properties: {size: {get_param: size}, volume_type: {get_resource: vtype},
                 metadata: {purpose: data}}
  attachment:
    type: OS::Cinder::VolumeAttachment
    properties:
      instance_uuid: {get_resource: server}
      volume_id: {get_resource: volume}
outputs:
  public_key: {value: {get_attr: [key, public_key]}}
  private_key: {value: {get_attr: [key, private_key]}}
  first_address: {value: {get_attr: [server, first_address]}}
  networks: {value: {get_attr: [server, networks]}}
  volume_size: {value: {get_attr: [volume, size]}}
"""


def test_server_with_keypair_flavor_group_and_attached_volume(cloud_heat: Any,
                                                               sdk: Any) -> None:
    name = f"nc-{uuid.uuid4().hex[:8]}"
    key = f"kiln-{name}"
    cloud_heat.stacks.create(stack_name=name, template=TEMPLATE, parameters={"key_label": key})
    stack = wait_for_stack_status(cloud_heat, name, timeout=240)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    out = outputs(stack)

    keypair = sdk.compute.get_keypair(key)
    assert keypair.public_key == out["public_key"]
    assert out["private_key"].startswith("-----BEGIN")
    server_id = cloud_heat.resources.get(name, "server").physical_resource_id
    server = sdk.compute.get_server(server_id)
    assert server.status == "ACTIVE" and server.key_name == key
    assert server.metadata == {"role": "db"}
    assert server.flavor.extra_specs == {"hw:cpu_policy": "shared"}
    assert out["first_address"].startswith("10.50.0.")
    net_id = cloud_heat.resources.get(name, "net").physical_resource_id
    # Heat's networks attribute: the addresses under the network's name and its ID
    assert out["networks"][net_id] == [out["first_address"]]
    assert len(out["networks"]) == 2
    volume_id = cloud_heat.resources.get(name, "volume").physical_resource_id
    volume = sdk.block_storage.get_volume(volume_id)
    assert volume.status == "in-use" and volume.size == 1
    assert volume.attachments[0]["server_id"] == server_id
    assert volume.volume_type == f"kiln-{key}"
    internal_port = next(sdk.network.ports(device_id=server_id))
    assert internal_port.name == "server-port-0"       # the port the server made

    # a bigger size extends the attached volume in place
    cloud_heat.stacks.update(name, template=TEMPLATE, parameters={"key_label": key, "size": 2})
    stack = wait_for_stack_status(cloud_heat, name, timeout=240)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    assert cloud_heat.resources.get(name, "volume").physical_resource_id == volume_id
    assert sdk.block_storage.get_volume(volume_id).size == 2
    assert outputs(stack)["volume_size"] == "2"   # Heat 27 gives a volume's size as text

    assert delete_and_wait(cloud_heat, stack.id, timeout=240) == "DELETE_COMPLETE"
    assert find(sdk.compute.find_server, server_id) is None
    assert find(sdk.block_storage.find_volume, volume_id) is None
    assert find(sdk.compute.find_keypair, key) is None
    assert find(sdk.network.find_port, internal_port.id) is None


@pytest.mark.parametrize(("props", "message"), [
    ({"flavor": "m1.nonesuch"}, "Property error: resources.server.properties.flavor: "
     "Error validating value 'm1.nonesuch': No Flavor matching {'name': 'm1.nonesuch'}. "
     "(HTTP 404)"),
    ({"image": "noimage"}, "Property error: resources.server.properties.image: Error "
     "validating value 'noimage': No images matching {'name': 'noimage'}."),
    ({"key_name": "nokey"}, "Property error: resources.server.properties.key_name: Error "
     "validating value 'nokey': The Key (nokey) could not be found."),
])
def test_missing_flavor_image_or_key_is_a_400_naming_them(cloud_heat: Any,
                                                          props: dict[str, str],
                                                          message: str) -> None:
    """Heat 27's answers, recorded against the same cloud; nothing is stored."""
    from heatclient import exc

    name = f"nf-{uuid.uuid4().hex[:8]}"
    properties = {"flavor": "m1.tiny", "image": "cirros-kiln",
                  "networks": [{"network": "public"}], **props}
    template = {"heat_template_version": "2018-08-31",
                "resources": {"server": {"type": "OS::Nova::Server",
                                         "properties": properties}}}
    with pytest.raises(exc.HTTPBadRequest) as caught:
        cloud_heat.stacks.create(stack_name=name, template=template)
    assert message in str(caught.value)
    assert not [s for s in cloud_heat.stacks.list() if s.stack_name == name]


def test_a_missing_volume_type_is_a_400(cloud_heat: Any) -> None:
    from heatclient import exc

    template = {"heat_template_version": "2018-08-31", "resources": {"v": {
        "type": "OS::Cinder::Volume", "properties": {"size": 1, "volume_type": "novt"}}}}
    with pytest.raises(exc.HTTPBadRequest) as caught:
        cloud_heat.stacks.create(stack_name=f"vt-{uuid.uuid4().hex[:8]}",
                                 template=template)
    assert ("Property error: resources.v.properties.volume_type: Error validating value "
            "'novt': The VolumeType (novt) could not be found.") in str(caught.value)
