"""The Neutron types Heat offers without checking for their extension (metering labels
and rules, networking-sfc's flow classifiers and port pairs, NSX network gateways),
through kiln serve and heatclient on the real Neutron.

The test cloud turns on Neutron's ``metering`` service plugin
(tests/support/cloud/configs.py), so a label and its rule are made, read back in
Neutron, and deleted. It has no networking-sfc: a flow classifier is listed (as in
Heat 27's listing on this cloud) and its create fails with Neutron's own 404, leaving
the stack deletable.
"""

from __future__ import annotations

import uuid
from typing import Any

from tests.cloud.helpers import delete_and_wait, find, outputs, physical_ids, settled

EXTENSION_TYPES = {"OS::Neutron::MeteringLabel", "OS::Neutron::MeteringRule",
                   "OS::Neutron::FlowClassifier", "OS::Neutron::PortPair",
                   "OS::Neutron::NetworkGateway"}


def test_the_types_are_listed_as_heat_lists_them(cloud_heat: Any) -> None:
    listed = {t.resource_type for t in cloud_heat.resource_types.list()}
    assert EXTENSION_TYPES - listed == set()


def test_metering_label_and_rule_made_read_and_deleted(cloud_heat: Any, sdk: Any) -> None:
    if "metering" not in {e.alias for e in sdk.network.extensions()}:
        raise AssertionError("the test cloud should run Neutron's metering plugin "
                             "(tests/support/cloud/configs.py): restart it")
    name = f"meter-{uuid.uuid4().hex[:6]}"
    template = {"heat_template_version": "2018-08-31", "resources": {
        "label": {"type": "OS::Neutron::MeteringLabel", "properties": {
            "description": "counted traffic"}},
        "rule": {"type": "OS::Neutron::MeteringRule", "properties": {
            "metering_label_id": {"get_resource": "label"},
            "remote_ip_prefix": "10.20.0.0/16", "direction": "egress",
            "excluded": True}}},
        "outputs": {
            "label_name": {"value": {"get_attr": ["label", "name"]}},
            "rule_prefix": {"value": {"get_attr": ["rule", "remote_ip_prefix"]}}}}
    cloud_heat.stacks.create(stack_name=name, template=template)
    stack = settled(cloud_heat, name, "CREATE_COMPLETE", timeout=120)
    ids = physical_ids(cloud_heat, name)
    label = sdk.network.get_metering_label(ids["label"])
    # (read raw: openstacksdk warns on remote_ip_prefix, which Heat's type still sends)
    rule = sdk.network.get(f"/metering/metering-label-rules/{ids['rule']}").json()[
        "metering_label_rule"]
    assert label.name.startswith(f"{name}-label-"), label.name  # the physical name
    assert label.description == "counted traffic"
    assert (rule["metering_label_id"], rule["remote_ip_prefix"], rule["direction"],
            rule["excluded"]) == (ids["label"], "10.20.0.0/16", "egress", True)
    shown = outputs(cloud_heat.stacks.get(stack.id))
    assert shown == {"label_name": label.name, "rule_prefix": "10.20.0.0/16"}

    assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"
    assert find(sdk.network.find_metering_label, ids["label"]) is None


def test_a_flow_classifier_without_networking_sfc_fails_with_neutrons_answer(
        cloud_heat: Any, sdk: Any) -> None:
    assert "sfc" not in {e.alias for e in sdk.network.extensions()}
    name = f"sfc-{uuid.uuid4().hex[:6]}"
    template = {"heat_template_version": "2018-08-31", "resources": {
        "fc": {"type": "OS::Neutron::FlowClassifier", "properties": {
            "protocol": "tcp", "source_ip_prefix": "10.0.0.0/24"}}}}
    cloud_heat.stacks.create(stack_name=name, template=template)
    stack = settled(cloud_heat, name, "CREATE_FAILED", timeout=120)
    assert stack.stack_status_reason.startswith("Resource CREATE failed: NotFound: "
                                                "resources.fc: "), stack.stack_status_reason
    assert "could not be found" in stack.stack_status_reason
    assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"
