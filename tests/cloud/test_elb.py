"""AWS::ElasticLoadBalancing::LoadBalancer on the real cloud (Nova with the fake driver,
Neutron): the nested stack's haproxy server is created in Nova with the user data that
runs cfn-init and signals the wait condition, and its metadata carries the haproxy
configuration naming the balanced instance's address. The cloud's only image (cirros)
has no cfn tools, so the wait condition times out after the parent's LBTimeout (5 s
here) and fails the create, as it would on Heat; the delete then removes both servers."""

from __future__ import annotations

import base64
import email
import json
import uuid
from typing import Any

from tests.cloud.helpers import delete_and_wait, physical_ids
from tests.support.clients import wait_for_stack_status

TEMPLATE = {
    "heat_template_version": "2013-05-23",
    "parameters": {"LbImageId": {"type": "string", "default": "cirros-kiln"},
                   "LbFlavor": {"type": "string", "default": "m1.tiny"},
                   "LBTimeout": {"type": "string", "default": "5"}},
    "resources": {
        "web": {"type": "AWS::EC2::Instance",
                "properties": {"ImageId": "cirros-kiln", "InstanceType": "m1.tiny"}},
        "lb": {"type": "AWS::ElasticLoadBalancing::LoadBalancer", "properties": {
            "AvailabilityZones": [],
            "Instances": [{"get_resource": "web"}],
            "HealthCheck": {"HealthyThreshold": 3, "Interval": 10, "Target": "HTTP:8080/",
                            "Timeout": 5, "UnhealthyThreshold": 2},
            "Listeners": [{"LoadBalancerPort": 80, "InstancePort": 8080,
                           "Protocol": "HTTP"}]}}},
    "outputs": {"dns": {"value": {"get_attr": ["lb", "DNSName"]}}},
}


def _user_data(sdk: Any, server_id: str) -> str:
    """The template's own part of the server's user data (heat-cfntools' MIME wrapping
    around it, as Nova keeps it)."""
    response = sdk.compute.get(f"/servers/{server_id}", microversion="2.79").json()["server"]
    message = email.message_from_string(
        base64.b64decode(response["OS-EXT-SRV-ATTR:user_data"]).decode())
    parts = {str(part.get_filename()): part.get_payload(decode=True).decode()
             for part in message.get_payload()}
    return parts["cfn-userdata"]


def _address(server: Any) -> str:
    """The server's first address, networks in reverse name order (as Heat picks it)."""
    return str(next(a["addr"] for net in sorted(server.addresses, reverse=True)
                    for a in server.addresses[net]))


def test_the_haproxy_server_is_made_and_removed(cloud_heat: Any, sdk: Any) -> None:
    name = f"elb-{uuid.uuid4().hex[:8]}"
    cloud_heat.stacks.create(stack_name=name, template=TEMPLATE)
    stack = wait_for_stack_status(cloud_heat, name, timeout=300)
    servers: list[str] = []
    try:
        ids = physical_ids(cloud_heat, stack.id)
        assert ids["lb"], stack.stack_status_reason
        child = physical_ids(cloud_heat, ids["lb"])
        servers = [ids["web"], child["LB_instance"]]
        # cirros runs no cfn-signal: the wait condition times out and fails the create
        assert stack.stack_status == "CREATE_FAILED"
        assert "WaitConditionTimeout" in stack.stack_status_reason, stack.stack_status_reason
        lb_server = sdk.compute.get_server(child["LB_instance"])
        assert lb_server.flavor.original_name == "m1.tiny"
        user_data = _user_data(sdk, lb_server.id)
        assert "/opt/aws/bin/cfn-init -s " in user_data
        # the pre-signed URL of the nested stack's handle, which cfn-signal posts to
        assert "/v1/waitcondition/" in user_data and "WaitHandle" in user_data
        address = _address(sdk.compute.get_server(ids["web"]))
        meta = cloud_heat.resources.metadata(ids["lb"], "LB_instance")
        config = meta["AWS::CloudFormation::Init"]["config"]["files"][
            "/etc/haproxy/haproxy.cfg"]["content"]
        assert "    bind *:80\n" in config
        assert f"    server server1 {address}:8080 check inter 10s fall 2 rise 3\n" in config
    finally:
        assert delete_and_wait(cloud_heat, stack.id, timeout=300) == "DELETE_COMPLETE"
    for server_id in servers:
        assert sdk.compute.find_server(server_id) is None


def test_instances_change_in_place(cloud_heat: Any, sdk: Any) -> None:
    """With the wait condition mapped away (cirros cannot signal it), the create
    completes; a second instance added to Instances rewrites the haproxy configuration
    of the same server, which cfn-hup would pick up."""
    template: dict[str, Any] = json.loads(json.dumps(TEMPLATE))
    template["resources"]["web2"] = template["resources"]["web"]
    env = {"resource_registry": {"AWS::CloudFormation::WaitCondition": "OS::Heat::None"}}
    name = f"elb-{uuid.uuid4().hex[:8]}"
    cloud_heat.stacks.create(stack_name=name, template=template, environment=env)
    stack = wait_for_stack_status(cloud_heat, name, timeout=300)
    try:
        assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
        ids = physical_ids(cloud_heat, stack.id)
        lb_server = physical_ids(cloud_heat, ids["lb"])["LB_instance"]
        dns = next(o["output_value"] for o in cloud_heat.stacks.get(stack.id).outputs
                   if o["output_key"] == "dns")
        # DNSName: the nested stack's PublicIp, the haproxy server's address
        assert dns == _address(sdk.compute.get_server(lb_server))
        template["resources"]["lb"]["properties"]["Instances"].append(
            {"get_resource": "web2"})
        cloud_heat.stacks.update(stack.id, template=template, environment=env)
        stack = wait_for_stack_status(cloud_heat, stack.id, timeout=300)
        assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
        assert physical_ids(cloud_heat, ids["lb"])["LB_instance"] == lb_server
        meta = cloud_heat.resources.metadata(ids["lb"], "LB_instance")
        config = meta["AWS::CloudFormation::Init"]["config"]["files"][
            "/etc/haproxy/haproxy.cfg"]["content"]
        assert "    server server1 " in config and "    server server2 " in config
    finally:
        assert delete_and_wait(cloud_heat, stack.id, timeout=300) == "DELETE_COMPLETE"
    assert sdk.compute.find_server(lb_server) is None
