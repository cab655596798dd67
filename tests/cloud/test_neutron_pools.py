"""Neutron's address scopes, subnet pools, RBAC policies, extra route sets, quotas, QoS
policies and trunks through kiln serve and heatclient, checked in the real Neutron.

QoS and trunks need Neutron's ``qos`` and ``trunk`` service plugins: on a cloud without
them, their types are refused with Heat's message instead (what is checked then)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.cloud.helpers import delete_and_wait, find, outputs, physical_ids, settled
from tests.support.clients import wait_for_stack_status


def _template(suffix: str, *, later: bool = False) -> dict[str, Any]:
    pool_prefixes = ["10.60.0.0/16", "10.62.0.0/16"] if later else ["10.60.0.0/16"]
    route = "10.98.0.0/24" if later else "10.99.0.0/24"
    return {"heat_template_version": "2018-08-31", "resources": {
        "project": {"type": "OS::Keystone::Project",
                    "properties": {"name": f"kq-{suffix}"}},
        "scope": {"type": "OS::Neutron::AddressScope",
                  "properties": {"name": f"scope-{suffix}{'-2' if later else ''}",
                                 "ip_version": 4}},
        "pool": {"type": "OS::Neutron::SubnetPool",
                 "properties": {"name": f"pool-{suffix}", "prefixes": pool_prefixes,
                                "address_scope": {"get_resource": "scope"},
                                "default_prefixlen": 26, "tags": ["kiln"]}},
        "net": {"type": "OS::Neutron::Net", "properties": {"name": f"pnet-{suffix}"}},
        "pool_net": {"type": "OS::Neutron::Net"},
        "pooled": {"type": "OS::Neutron::Subnet",
                   "properties": {"network": {"get_resource": "pool_net"},
                                  "subnetpool": {"get_resource": "pool"}}},
        "subnet": {"type": "OS::Neutron::Subnet",
                   "properties": {"network": {"get_resource": "net"},
                                  "cidr": "10.61.0.0/24"}},
        "router": {"type": "OS::Neutron::Router"},
        "iface": {"type": "OS::Neutron::RouterInterface",
                  "properties": {"router": {"get_resource": "router"},
                                 "subnet": {"get_resource": "subnet"}}},
        "routes": {"type": "OS::Neutron::ExtraRouteSet", "depends_on": ["iface"],
                   "properties": {"router": {"get_resource": "router"},
                                  "routes": [{"destination": route,
                                              "nexthop": "10.61.0.7"}]}},
        "rbac": {"type": "OS::Neutron::RBACPolicy",
                 "properties": {"object_type": "network", "action": "access_as_shared",
                                "object_id": {"get_resource": "net"},
                                "target_tenant": {"get_resource": "project"}}},
        "quota": {"type": "OS::Neutron::Quota",
                  "properties": {"project": {"get_resource": "project"},
                                 "network": 9 if later else 7, "port": 30}},
    }, "outputs": {"pooled_cidr": {"value": {"get_attr": ["pooled", "cidr"]}}}}


def test_pools_scopes_routes_rbac_and_quotas(cloud_heat: Any, sdk: Any) -> None:
    suffix = uuid.uuid4().hex[:6]
    name = f"pools-{suffix}"
    cloud_heat.stacks.create(stack_name=name, template=_template(suffix))
    stack = settled(cloud_heat, name, "CREATE_COMPLETE", timeout=180)
    ids = physical_ids(cloud_heat, name)
    net = sdk.network
    scope = net.get_address_scope(ids["scope"])
    assert scope.name == f"scope-{suffix}" and scope.ip_version == 4
    pool = net.get_subnet_pool(ids["pool"])
    assert pool.prefixes == ["10.60.0.0/16"] and pool.address_scope_id == scope.id
    assert pool.tags == ["kiln"]
    assert outputs(stack)["pooled_cidr"].startswith("10.60.")
    assert outputs(stack)["pooled_cidr"].endswith("/26")
    assert net.get_router(ids["router"]).routes == [
        {"destination": "10.99.0.0/24", "nexthop": "10.61.0.7"}]
    rbac = net.get_rbac_policy(ids["rbac"])
    assert (rbac.object_id, rbac.target_project_id) == (ids["net"], ids["project"])
    assert net.get_quota(ids["project"]).networks == 7
    assert net.get_quota(ids["project"]).ports == 30

    # a second set adding a route the router already has is refused, and its delete
    # leaves the route alone
    dup = f"dup-{suffix}"
    cloud_heat.stacks.create(stack_name=dup, template={
        "heat_template_version": "2018-08-31", "resources": {"routes": {
            "type": "OS::Neutron::ExtraRouteSet",
            "properties": {"router": ids["router"], "routes": [
                {"destination": "10.99.0.0/24", "nexthop": "10.61.0.7"}]}}}})
    failed = settled(cloud_heat, dup, "CREATE_FAILED")
    assert (f"PhysicalResourceExists: resources.routes: The Resource ({ids['router']},"
            "10.99.0.0/24=10.61.0.7) already exists.") in failed.stack_status_reason
    assert delete_and_wait(cloud_heat, failed.id) == "DELETE_COMPLETE"
    assert net.get_router(ids["router"]).routes == [
        {"destination": "10.99.0.0/24", "nexthop": "10.61.0.7"}]

    # a route another party adds to the router survives the set's changes
    net.add_extra_routes_to_router(ids["router"], body={"router": {"routes": [
        {"destination": "10.97.0.0/24", "nexthop": "10.61.0.8"}]}})

    cloud_heat.stacks.update(name, template=_template(suffix, later=True))
    stack = settled(cloud_heat, name, "UPDATE_COMPLETE", timeout=180)
    after = physical_ids(cloud_heat, name)
    assert after == ids                                         # all updated in place
    assert net.get_address_scope(ids["scope"]).name == f"scope-{suffix}-2"
    assert sorted(net.get_subnet_pool(ids["pool"]).prefixes) == ["10.60.0.0/16",
                                                                  "10.62.0.0/16"]
    assert sorted((r["destination"], r["nexthop"])
                  for r in net.get_router(ids["router"]).routes) == [
        ("10.97.0.0/24", "10.61.0.8"), ("10.98.0.0/24", "10.61.0.7")]
    assert net.get_quota(ids["project"]).networks == 9

    cloud_heat.actions.check(stack.id)
    stack = settled(cloud_heat, name, "CHECK_COMPLETE", timeout=120)

    default_networks = net.get_quota_default(ids["project"]).networks
    # the other party takes its route away again (the interface cannot go before it)
    net.remove_extra_routes_from_router(ids["router"], body={"router": {"routes": [
        {"destination": "10.97.0.0/24", "nexthop": "10.61.0.8"}]}})
    assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"
    assert find(net.find_address_scope, ids["scope"]) is None
    assert find(net.find_subnet_pool, ids["pool"]) is None
    assert find(net.find_rbac_policy, ids["rbac"]) is None
    assert find(net.find_router, ids["router"]) is None
    assert net.get_quota(ids["project"]).networks == default_networks   # reset


def test_shrinking_a_subnet_pool_is_refused(cloud_heat: Any) -> None:
    suffix = uuid.uuid4().hex[:6]
    name = f"shrink-{suffix}"
    pool = {"type": "OS::Neutron::SubnetPool",
            "properties": {"prefixes": ["10.70.0.0/16"], "min_prefixlen": 20}}
    template = {"heat_template_version": "2018-08-31", "resources": {"pool": pool}}
    cloud_heat.stacks.create(stack_name=name, template=template)
    assert wait_for_stack_status(cloud_heat, name, timeout=120).stack_status == \
        "CREATE_COMPLETE"
    pool["properties"]["prefixes"] = ["10.70.0.0/17"]
    cloud_heat.stacks.update(name, template=template)
    stack = wait_for_stack_status(cloud_heat, name, timeout=120)
    assert stack.stack_status == "UPDATE_FAILED"
    assert ("Property prefixes updated value ['10.70.0.0/17'] should be superset of "
            "existing value ['10.70.0.0/16'].") in stack.stack_status_reason
    assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"


def test_bad_prefix_bounds_and_rbac_actions_are_400s(cloud_heat: Any) -> None:
    from heatclient import exc

    bad = {"pool": {"type": "OS::Neutron::SubnetPool",
                    "properties": {"prefixes": ["10.71.0.0/16"], "min_prefixlen": 28,
                                   "max_prefixlen": 24}},
           "rbac": {"type": "OS::Neutron::RBACPolicy",
                    "properties": {"object_type": "qos_policy", "object_id": "x",
                                   "action": "access_as_external",
                                   "target_tenant": "y"}}}
    for key, message in (("pool", "Illegal prefix bounds: max_prefixlen=24, "
                                  "min_prefixlen=28."),
                         ("rbac", 'Invalid action "access_as_external" for object type '
                                  "qos_policy. Valid actions: access_as_shared")):
        with pytest.raises(exc.HTTPBadRequest) as caught:
            cloud_heat.stacks.create(stack_name=f"bad-{uuid.uuid4().hex[:6]}", template={
                "heat_template_version": "2018-08-31", "resources": {key: bad[key]}})
        assert message in str(caught.value)


def _extensions(sdk: Any) -> set[str]:
    return {e.alias for e in sdk.network.extensions()}


QOS = {"heat_template_version": "2018-08-31", "resources": {
    "policy": {"type": "OS::Neutron::QoSPolicy", "properties": {"description": "one"}},
    "limit": {"type": "OS::Neutron::QoSBandwidthLimitRule",
              "properties": {"policy": {"get_resource": "policy"}, "max_kbps": 1000}},
    "dscp": {"type": "OS::Neutron::QoSDscpMarkingRule",
             "properties": {"policy": {"get_resource": "policy"}, "dscp_mark": 26}},
    "minimum": {"type": "OS::Neutron::QoSMinimumBandwidthRule",
                "properties": {"policy": {"get_resource": "policy"}, "min_kbps": 100}},
}, "outputs": {"rules": {"value": {"get_attr": ["policy", "rules"]}}}}


def test_qos_policy_and_rules(cloud_heat: Any, sdk: Any) -> None:
    from heatclient import exc

    name = f"qos-{uuid.uuid4().hex[:6]}"
    if "qos" not in _extensions(sdk):
        with pytest.raises(exc.HTTPBadRequest) as caught:
            cloud_heat.stacks.create(stack_name=name, template=QOS)
        assert ("Service neutron is not available for resource type "
                "OS::Neutron::QoSPolicy, reason: Required extension qos in neutron "
                "service is not available.") in str(caught.value)
        listed = {t.resource_type for t in cloud_heat.resource_types.list()}
        assert "OS::Neutron::QoSPolicy" not in listed
        return
    cloud_heat.stacks.create(stack_name=name, template=QOS)
    stack = settled(cloud_heat, name, "CREATE_COMPLETE", timeout=120)
    ids = physical_ids(cloud_heat, name)
    policy = sdk.network.get_qos_policy(ids["policy"])
    assert {r["type"] for r in policy.rules} == {"bandwidth_limit", "dscp_marking",
                                                 "minimum_bandwidth"}
    assert sdk.network.get_qos_bandwidth_limit_rule(ids["limit"], policy).max_kbps == 1000

    template = {**QOS, "resources": {**QOS["resources"]}}
    template["resources"]["limit"] = {"type": "OS::Neutron::QoSBandwidthLimitRule",
                                      "properties": {"policy": {"get_resource": "policy"},
                                                     "max_kbps": 2000}}
    template["resources"]["policy"] = {"type": "OS::Neutron::QoSPolicy",
                                       "properties": {"description": "two"}}
    cloud_heat.stacks.update(name, template=template)
    stack = settled(cloud_heat, name, "UPDATE_COMPLETE", timeout=120)
    assert sdk.network.get_qos_policy(ids["policy"]).description == "two"
    assert sdk.network.get_qos_bandwidth_limit_rule(ids["limit"], policy).max_kbps == 2000
    assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"
    assert find(sdk.network.find_qos_policy, ids["policy"]) is None


def test_trunk_with_sub_ports(cloud_heat: Any, sdk: Any) -> None:
    from heatclient import exc

    def template(vlan: int) -> dict[str, Any]:
        return {"heat_template_version": "2018-08-31", "resources": {
            "net": {"type": "OS::Neutron::Net"},
            "subnet": {"type": "OS::Neutron::Subnet",
                       "properties": {"network": {"get_resource": "net"},
                                      "cidr": "10.72.0.0/24"}},
            "parent": {"type": "OS::Neutron::Port", "depends_on": ["subnet"],
                       "properties": {"network": {"get_resource": "net"}}},
            "child": {"type": "OS::Neutron::Port", "depends_on": ["subnet"],
                      "properties": {"network": {"get_resource": "net"}}},
            "trunk": {"type": "OS::Neutron::Trunk",
                      "properties": {"port": {"get_resource": "parent"},
                                     "sub_ports": [{"port": {"get_resource": "child"},
                                                    "segmentation_type": "vlan",
                                                    "segmentation_id": vlan}]}}},
            "outputs": {"parent": {"value": {"get_attr": ["trunk", "port_id"]}}}}

    name = f"trunk-{uuid.uuid4().hex[:6]}"
    if "trunk" not in _extensions(sdk):
        with pytest.raises(exc.HTTPBadRequest) as caught:
            cloud_heat.stacks.create(stack_name=name, template=template(101))
        assert ("Service neutron is not available for resource type OS::Neutron::Trunk, "
                "reason: Required extension trunk in neutron service is not available."
                ) in str(caught.value)
        return
    cloud_heat.stacks.create(stack_name=name, template=template(101))
    stack = settled(cloud_heat, name, "CREATE_COMPLETE", timeout=120)
    ids = physical_ids(cloud_heat, name)
    assert outputs(stack)["parent"] == ids["parent"]
    trunk = sdk.network.get_trunk(ids["trunk"])
    assert [(s["port_id"], s["segmentation_id"]) for s in trunk.sub_ports] == [
        (ids["child"], 101)]
    cloud_heat.stacks.update(name, template=template(102))
    stack = settled(cloud_heat, name, "UPDATE_COMPLETE", timeout=120)
    trunk = sdk.network.get_trunk(ids["trunk"])
    assert [s["segmentation_id"] for s in trunk.sub_ports] == [102]
    assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"
    assert find(sdk.network.find_trunk, ids["trunk"]) is None
