"""OS::Nova::Server's life beyond the seed template: user data formats, a rebuild on an
image change, and a server that Nova puts in ERROR."""

from __future__ import annotations

import base64
import email
import json
import uuid
from typing import Any

from tests.cloud.helpers import delete_and_wait, find, outputs
from tests.support.clients import wait_for_stack_status


def _template(image: str, fmt: str, flavor: str = "m1.tiny") -> dict[str, Any]:
    return {"heat_template_version": "2018-08-31",
            "resources": {"server": {"type": "OS::Nova::Server", "properties": {
                "flavor": flavor, "image": image, "networks": [{"network": "public"}],
                "user_data_format": fmt, "user_data": "#!/bin/sh\necho kiln\n"}}},
            "outputs": {"occ": {"value": {"get_attr": ["server", "os_collect_config"]}}}}


def _user_data(sdk: Any, server_id: str) -> dict[str, str]:
    """The server's user data as Nova keeps it: MIME part file name -> decoded text."""
    response = sdk.compute.get(f"/servers/{server_id}",
                               microversion="2.79").json()["server"]
    text = base64.b64decode(response["OS-EXT-SRV-ATTR:user_data"]).decode()
    message = email.message_from_string(text)
    assert message.is_multipart()
    return {str(part.get_filename()): part.get_payload(decode=True).decode()
            for part in message.get_payload()}


def test_user_data_formats_and_a_rebuild_on_an_image_change(cloud_heat: Any,
                                                             sdk: Any) -> None:
    image = f"kiln-rebuild-{uuid.uuid4().hex[:6]}"
    new_image = sdk.image.create_image(name=image, data=b"\1" * 4096, disk_format="raw",
                                       container_format="bare", allow_duplicates=True)
    try:
        name = f"ud-{uuid.uuid4().hex[:8]}"
        cloud_heat.stacks.create(stack_name=name,
                                 template=_template("cirros-kiln", "HEAT_CFNTOOLS"))
        stack = wait_for_stack_status(cloud_heat, name, timeout=180)
        assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
        server_id = cloud_heat.resources.get(name, "server").physical_resource_id
        parts = _user_data(sdk, server_id)
        assert parts["cfn-userdata"] == "#!/bin/sh\necho kiln\n"
        assert "cfn-init-data" in parts and "cfn-boto-cfg" in parts

        # a new image rebuilds the same server
        cloud_heat.stacks.update(name, template=_template(image, "HEAT_CFNTOOLS"))
        stack = wait_for_stack_status(cloud_heat, name, timeout=180)
        assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
        assert cloud_heat.resources.get(name, "server").physical_resource_id == server_id
        server = sdk.compute.get_server(server_id)
        assert server.status == "ACTIVE" and server.image.id == new_image.id
        assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"

        name = f"sc-{uuid.uuid4().hex[:8]}"
        cloud_heat.stacks.create(stack_name=name,
                                 template=_template("cirros-kiln", "SOFTWARE_CONFIG"))
        stack = wait_for_stack_status(cloud_heat, name, timeout=180)
        assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
        occ = outputs(stack)["occ"]
        assert occ["collectors"] == ["cfn", "local"]
        server_id = cloud_heat.resources.get(name, "server").physical_resource_id
        parts = _user_data(sdk, server_id)
        assert parts["cfn-userdata"] == "#!/bin/sh\necho kiln\n"
        cloud_config = json.loads(parts["cloud-config"].removeprefix("#cloud-config\n"))
        written = {f["path"]: f["content"] for f in cloud_config["write_files"]}
        init_data = json.loads(written["/var/lib/heat-cfntools/cfn-init-data"])
        assert init_data["os-collect-config"] == occ
        assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"
    finally:
        sdk.image.delete_image(new_image.id)


def test_a_server_nova_puts_in_error_fails_with_novas_fault(cloud_heat: Any,
                                                            sdk: Any) -> None:
    flavor = sdk.compute.create_flavor(name=f"kiln-huge-{uuid.uuid4().hex[:6]}",
                                       ram=64 * 1024 * 1024, vcpus=1, disk=1)
    try:
        name = f"err-{uuid.uuid4().hex[:8]}"
        cloud_heat.stacks.create(stack_name=name,
                                 template=_template("cirros-kiln", "RAW", flavor.name))
        stack = wait_for_stack_status(cloud_heat, name, timeout=180)
        assert stack.stack_status == "CREATE_FAILED"
        assert stack.stack_status_reason.startswith(
            "Resource CREATE failed: ResourceInError: resources.server: Went to status "
            'ERROR due to "Message: No valid host was found')
        server_id = cloud_heat.resources.get(name, "server").physical_resource_id
        assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"
        assert find(sdk.compute.find_server, server_id) is None
    finally:
        sdk.compute.delete_flavor(flavor.id)
