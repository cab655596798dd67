"""OS::Neutron::RouterGateway, which Heat hides from its type list but still runs for
the older templates that use it, through kiln serve and heatclient on the real Neutron."""

from __future__ import annotations

import uuid
from typing import Any

import yaml

from tests.cloud.helpers import delete_and_wait
from tests.support.clients import wait_for_stack_status

TEMPLATE = """
heat_template_version: 2013-05-23
resources:
  router:
    type: OS::Neutron::Router
    properties: {name: %(name)s}
  gateway:
    type: OS::Neutron::RouterGateway
    properties:
      router_id: {get_resource: router}
      network_id: public
outputs:
  router: {value: {get_resource: router}}
"""


def test_a_router_gateway_sets_the_gateway_and_its_removal_clears_it(cloud_heat: Any,
                                                                      sdk: Any) -> None:
    name = f"gw-{uuid.uuid4().hex[:8]}"
    template = TEMPLATE % {"name": name}
    cloud_heat.stacks.create(stack_name=name, template=template)
    stack = wait_for_stack_status(cloud_heat, name, timeout=120)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    public = sdk.network.find_network("public")
    router = sdk.network.find_router(name)
    assert router.external_gateway_info["network_id"] == public.id
    gateway = cloud_heat.resources.get(stack.id, "gateway")
    assert gateway.physical_resource_id == f"{router.id}:{public.id}"
    listed = [t.resource_type for t in cloud_heat.resource_types.list()]
    assert "OS::Neutron::Router" in listed and "OS::Neutron::RouterGateway" not in listed

    without = yaml.safe_load(template)
    del without["resources"]["gateway"]
    cloud_heat.stacks.update(stack.id, template=without)
    stack = wait_for_stack_status(cloud_heat, name, timeout=120)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    assert not sdk.network.get_router(router.id).external_gateway_info

    delete_and_wait(cloud_heat, stack.id)
    assert sdk.network.find_router(name) is None
