"""Keystone resource types through kiln serve and heatclient, checked in the real
Keystone."""

from __future__ import annotations

import uuid
from typing import Any

from tests.cloud.helpers import delete_and_wait
from tests.support.clients import wait_for_stack_status


def _template(suffix: str, description: str, *, swap_roles: bool = False
              ) -> dict[str, Any]:
    """The identity objects; *swap_roles* exchanges the user's and the group's project
    roles (an update that revokes one grant and makes another on each)."""
    custom = {"role": {"get_resource": "role"}, "project": {"get_resource": "project"}}
    member = {"role": "member", "project": {"get_resource": "project"}}
    group_role, user_role = (member, custom) if swap_roles else (custom, member)
    return {"heat_template_version": "2018-08-31", "resources": {
        "domain": {"type": "OS::Keystone::Domain",
                   "properties": {"name": f"kd-{suffix}"}},
        "project": {"type": "OS::Keystone::Project",
                    "properties": {"name": f"kp-{suffix}", "description": description,
                                   "domain": {"get_resource": "domain"}}},
        "role": {"type": "OS::Keystone::Role", "properties": {"name": f"kr-{suffix}"}},
        "group": {"type": "OS::Keystone::Group",
                  "properties": {"name": f"kg-{suffix}",
                                 "domain": {"get_resource": "domain"},
                                 "roles": [group_role]}},
        "user": {"type": "OS::Keystone::User",
                 "properties": {"name": f"ku-{suffix}", "password": "secret-1",
                                "domain": {"get_resource": "domain"},
                                "default_project": {"get_resource": "project"},
                                "groups": [{"get_resource": "group"}],
                                "roles": [user_role]}},
        "grant": {"type": "OS::Keystone::UserRoleAssignment",
                  "properties": {"user": {"get_resource": "user"},
                                 "roles": [{"role": {"get_resource": "role"},
                                            "domain": {"get_resource": "domain"}}]}},
        "region": {"type": "OS::Keystone::Region",
                   "properties": {"id": f"kreg-{suffix}", "description": description}},
        "service": {"type": "OS::Keystone::Service",
                    "properties": {"name": f"ks-{suffix}", "type": f"kiln-{suffix}"}},
        "endpoint": {"type": "OS::Keystone::Endpoint",
                     "properties": {"service": {"get_resource": "service"},
                                    "region": {"get_resource": "region"},
                                    "interface": "public",
                                    "url": "http://127.0.0.1:1/kiln"}},
    }}


def test_identity_objects_are_created_updated_and_deleted(cloud_heat: Any,
                                                          sdk: Any) -> None:
    suffix = uuid.uuid4().hex[:6]
    name = f"ks-{suffix}"
    cloud_heat.stacks.create(stack_name=name, template=_template(suffix, "one"))
    stack = wait_for_stack_status(cloud_heat, name, timeout=120)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    ids = {r.resource_name: r.physical_resource_id
           for r in cloud_heat.resources.list(name)}
    idn = sdk.identity
    project = idn.get_project(ids["project"])
    assert project.name == f"kp-{suffix}" and project.domain_id == ids["domain"]
    user = idn.get_user(ids["user"])
    assert user.default_project_id == ids["project"]
    assert [g.id for g in idn.user_groups(ids["user"])] == [ids["group"]]
    project_roles = {a.role["id"] for a in idn.role_assignments(
        user_id=ids["user"], scope_project_id=ids["project"])}
    assert idn.find_role("member", ignore_missing=False).id in project_roles
    domain_roles = {a.role["id"] for a in idn.role_assignments(
        user_id=ids["user"], scope_domain_id=ids["domain"])}
    assert domain_roles == {ids["role"]}
    group_roles = {a.role["id"] for a in idn.role_assignments(
        group_id=ids["group"], scope_project_id=ids["project"])}
    assert group_roles == {ids["role"]}
    endpoint = idn.get_endpoint(ids["endpoint"])
    assert endpoint.service_id == ids["service"] and endpoint.region_id == f"kreg-{suffix}"

    cloud_heat.stacks.update(name, template=_template(suffix, "two", swap_roles=True))
    stack = wait_for_stack_status(cloud_heat, name, timeout=120)
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    member = idn.find_role("member", ignore_missing=False).id
    assert {a.role["id"] for a in idn.role_assignments(
        user_id=ids["user"], scope_project_id=ids["project"])} == {ids["role"]}
    assert {a.role["id"] for a in idn.role_assignments(
        group_id=ids["group"], scope_project_id=ids["project"])} == {member}
    assert idn.get_project(ids["project"]).description == "two"
    assert idn.get_region(f"kreg-{suffix}").description == "two"

    assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"
    assert not list(idn.projects(name=f"kp-{suffix}"))
    assert not list(idn.users(name=f"ku-{suffix}"))
    assert not list(idn.domains(name=f"kd-{suffix}"))
    assert not list(idn.services(name=f"ks-{suffix}"))
