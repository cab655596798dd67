"""OS::Neutron::Segment through kiln serve and heatclient, checked in the real Neutron.

Segments need Neutron's ``segments`` service plugin (tests/support/cloud/configs.py turns
it on). On a cloud started without it, the type is refused with Heat's message instead,
and that is what is checked then; ``KILN_TEST_CLOUD_INSTANCE=seg
KILN_TEST_CLOUD_PORT_BASE=<free base>`` runs the suite on a cloud of its own that has it.
"""

from __future__ import annotations

import random
import uuid
from typing import Any

import pytest

from tests.cloud.helpers import delete_and_wait, find, physical_ids, settled


def _template(vlan: int, name: str, description: str) -> dict[str, Any]:
    return {"heat_template_version": "2018-08-31", "resources": {
        "net": {"type": "OS::Neutron::Net"},
        "segment": {"type": "OS::Neutron::Segment", "properties": {
            "network": {"get_resource": "net"}, "network_type": "vlan",
            # physnet2 has no tenant VLAN range: any id is the admin's to take
            "physical_network": "physnet2", "segmentation_id": vlan,
            "name": name, "description": description}}}}


def test_segment_created_renamed_in_place_replaced_on_a_new_vlan_and_deleted(
        cloud_heat: Any, sdk: Any) -> None:
    from heatclient import exc

    name = f"seg-{uuid.uuid4().hex[:6]}"
    vlan = random.randint(1000, 3999)
    if "segment" not in {e.alias for e in sdk.network.extensions()}:
        with pytest.raises(exc.HTTPBadRequest) as caught:
            cloud_heat.stacks.create(stack_name=name, template=_template(vlan, "a", "b"))
        assert ("Service neutron is not available for resource type OS::Neutron::Segment, "
                "reason: Required extension segment in neutron service is not available."
                ) in str(caught.value)
        assert "OS::Neutron::Segment" not in {
            t.resource_type for t in cloud_heat.resource_types.list()}
        return
    cloud_heat.stacks.create(stack_name=name, template=_template(vlan, "one", "first"))
    stack = settled(cloud_heat, name, "CREATE_COMPLETE", timeout=120)
    ids = physical_ids(cloud_heat, name)
    segment = sdk.network.get_segment(ids["segment"])
    assert (segment.network_id, segment.network_type, segment.physical_network,
            segment.segmentation_id, segment.name, segment.description) == (
        ids["net"], "vlan", "physnet2", vlan, "one", "first")

    # name and description change in place
    cloud_heat.stacks.update(name, template=_template(vlan, "two", "second"))
    settled(cloud_heat, name, "UPDATE_COMPLETE", timeout=120)
    assert physical_ids(cloud_heat, name)["segment"] == ids["segment"]
    segment = sdk.network.get_segment(ids["segment"])
    assert (segment.name, segment.description) == ("two", "second")

    # a new VLAN is a new segment; the old one goes
    cloud_heat.stacks.update(name, template=_template(vlan + 1, "two", "second"))
    settled(cloud_heat, name, "UPDATE_COMPLETE", timeout=120)
    replaced = physical_ids(cloud_heat, name)["segment"]
    assert replaced != ids["segment"]
    assert find(sdk.network.find_segment, ids["segment"]) is None
    assert sdk.network.get_segment(replaced).segmentation_id == vlan + 1

    assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"
    assert find(sdk.network.find_segment, replaced) is None
