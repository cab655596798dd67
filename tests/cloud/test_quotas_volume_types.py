"""Nova and Cinder quotas, Cinder QoS specs (and their association with a volume type)
and an encrypted volume type, through kiln serve and heatclient, checked in the real
Nova and Cinder. The quotas are those of a fresh project the test makes (named in the
template), so that their reset at delete can be read after the stack is gone."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.cloud.helpers import delete_and_wait, find, physical_ids, settled


def _template(suffix: str, *, later: bool = False) -> dict[str, Any]:
    project = f"kquota-{suffix}"        # by name: made by the test, outlives the stack
    return {"heat_template_version": "2018-08-31", "resources": {
        "nova_quota": {"type": "OS::Nova::Quota",
                       "properties": {"project": project, "cores": 9 if later else 7,
                                      "instances": 3}},
        "cinder_quota": {"type": "OS::Cinder::Quota",
                         "properties": {"project": project, "volumes": 4,
                                        "gigabytes": 50 if later else 40}},
        "vtype": {"type": "OS::Cinder::VolumeType",
                  "properties": {"name": f"kvt-{suffix}"}},
        "encryption": {"type": "OS::Cinder::EncryptedVolumeType",
                       "properties": {"volume_type": {"get_resource": "vtype"},
                                      "provider": "luks", "cipher": "aes-xts-plain64",
                                      "key_size": 512 if later else 256}},
        "specs": {"type": "OS::Cinder::QoSSpecs",
                  "properties": {"name": f"kqos-{suffix}",
                                 "specs": ({"total_iops_sec": "200"} if later else
                                           {"total_iops_sec": "100",
                                            "read_bytes_sec": "1000"})}},
        "association": {"type": "OS::Cinder::QoSAssociation",
                        "properties": {"qos_specs": {"get_resource": "specs"},
                                       "volume_types": [{"get_resource": "vtype"}]}},
    }}


@pytest.fixture
def project(sdk: Any) -> Iterator[tuple[str, Any]]:
    suffix = uuid.uuid4().hex[:6]
    made = sdk.identity.create_project(name=f"kquota-{suffix}", domain_id="default")
    try:
        yield suffix, made
    finally:
        sdk.identity.delete_project(made.id)


def test_quotas_qos_specs_and_encryption(cloud_heat: Any, sdk: Any,
                                         project: tuple[str, Any]) -> None:
    suffix, made = project
    name = f"quota-{suffix}"
    cloud_heat.stacks.create(stack_name=name, template=_template(suffix))
    stack = settled(cloud_heat, name, "CREATE_COMPLETE", timeout=180)
    ids = physical_ids(cloud_heat, name)
    project_id = made.id
    nova = sdk.compute.get_quota_set(project_id)
    assert (nova.cores, nova.instances) == (7, 3)
    cinder = sdk.block_storage.get_quota_set(project_id)
    assert (cinder.volumes, cinder.gigabytes) == (4, 40)
    encryption = sdk.block_storage.get_type_encryption(ids["vtype"])
    assert (encryption.provider, encryption.cipher, encryption.key_size) == (
        "luks", "aes-xts-plain64", 256)
    assert ids["encryption"] == ids["vtype"]
    specs = sdk.block_storage.get(f"/qos-specs/{ids['specs']}").json()["qos_specs"]
    assert specs["specs"] == {"total_iops_sec": "100", "read_bytes_sec": "1000"}
    associated = sdk.block_storage.get(f"/qos-specs/{ids['specs']}/associations").json()
    assert [a["id"] for a in associated["qos_associations"]] == [ids["vtype"]]

    cloud_heat.stacks.update(name, template=_template(suffix, later=True))
    stack = settled(cloud_heat, name, "UPDATE_COMPLETE", timeout=180)
    after = physical_ids(cloud_heat, name)
    assert after == ids
    assert sdk.compute.get_quota_set(project_id).cores == 9
    assert sdk.block_storage.get_quota_set(project_id).gigabytes == 50
    assert sdk.block_storage.get_type_encryption(ids["vtype"]).key_size == 512
    specs = sdk.block_storage.get(f"/qos-specs/{ids['specs']}").json()["qos_specs"]
    assert specs["specs"] == {"total_iops_sec": "200"}

    assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"
    assert find(sdk.block_storage.find_type, ids["vtype"]) is None
    gone = sdk.block_storage.get(f"/qos-specs/{ids['specs']}")
    assert gone.status_code == 404
    defaults = sdk.compute.get(f"/os-quota-sets/{project_id}/defaults").json()["quota_set"]
    assert sdk.compute.get_quota_set(project_id).cores == defaults["cores"] != 9   # reset
    limits = sdk.block_storage.get(f"/os-quota-sets/{project_id}/defaults").json()
    assert sdk.block_storage.get_quota_set(project_id).gigabytes == \
        limits["quota_set"]["gigabytes"] != 50


def test_a_quota_names_at_least_one_limit(cloud_heat: Any) -> None:
    from heatclient import exc

    for kind, names in (("OS::Cinder::Quota", "gigabytes, snapshots, volumes, backups, "
                                              "backup_gigabytes"),
                        ("OS::Neutron::Quota", "floatingip, network, port, rbac_policy, "
                                               "router, security_group, "
                                               "security_group_rule, subnet, subnetpool")):
        with pytest.raises(exc.HTTPBadRequest) as caught:
            cloud_heat.stacks.create(stack_name=f"q-{uuid.uuid4().hex[:6]}", template={
                "heat_template_version": "2018-08-31",
                "resources": {"q": {"type": kind, "properties": {"project": "admin"}}}})
        assert f"At least one of the following properties must be specified: {names}." \
            in str(caught.value)


def test_missing_specs_project_or_scope_are_400s_naming_them(cloud_heat: Any) -> None:
    """Heat's lookup constraints cinder.qos_specs, keystone.project and
    neutron.address_scope, with Heat's wording."""
    from heatclient import exc

    cases = (
        ("OS::Cinder::QoSAssociation", {"qos_specs": "no-such-specs",
                                        "volume_types": ["__DEFAULT__"]}, "qos_specs",
         "no-such-specs", "No QoSSpecs matching {'name': 'no-such-specs'}. (HTTP 404)"),
        ("OS::Nova::Quota", {"project": "no-such-project", "cores": 1}, "project",
         "no-such-project", "The KeystoneProject (no-such-project) could not be found."),
        ("OS::Neutron::SubnetPool", {"prefixes": ["10.80.0.0/16"],
                                     "address_scope": "no-such-scope"}, "address_scope",
         "no-such-scope", "Unable to find address_scope with name or id 'no-such-scope'"),
    )
    for kind, props, key, value, reason in cases:
        with pytest.raises(exc.HTTPBadRequest) as caught:
            cloud_heat.stacks.create(stack_name=f"miss-{uuid.uuid4().hex[:6]}", template={
                "heat_template_version": "2018-08-31",
                "resources": {"r": {"type": kind, "properties": props}}})
        assert (f"Property error: resources.r.properties.{key}: Error validating value "
                f"'{value}': {reason}") in str(caught.value)
