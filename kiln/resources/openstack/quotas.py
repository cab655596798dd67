"""OS::Nova::Quota, OS::Neutron::Quota and OS::Cinder::Quota: one project's quotas in
one service (admin only).

The quotas given are set at create and update (the ones left out keep the service's
value); a delete resets the project's quotas in that service to the defaults. The
resource's ID is its physical name, as in Heat; the project (named or by ID) is kept
in ``data``. Heat deletes a Neutron quota by that physical name, which resets nothing;
Kiln resets the project's, as the Nova and Cinder types do in both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from kiln.errors import StackValidationFailed
from kiln.resources.base import Properties, Property, ResourceFailure, SupportStatus, Token
from kiln.resources.common.cloud import OpenStackResource, custom
from kiln.resources.common.lookup import find_project
from kiln.resources.common.volume import MICROVERSION as CINDER_MICROVERSION
from kiln.template.constraints import Range
from kiln.template.definitions import ResourceDefinition


def _limit(description: str) -> Property:
    return Property("integer", description, update_allowed=True,
                    constraints=[Range(min=-1)])


def _schema(**limits: str) -> dict[str, Property]:
    return {"project": Property("string", "The project (name or ID) the quotas are for.",
                                required=True, constraints=custom("keystone.project")),
            **{key: _limit(f"{text} (-1: unlimited).") for key, text in limits.items()}}


class Quota(OpenStackResource):
    """One service's quotas of one project."""

    #: where the quotas live (``<path>/<project id>``) and the body's key
    quota_path: ClassVar[str] = ""
    quota_entity: ClassVar[str] = ""
    #: the limits named in the "at least one" error, in Heat's order (default: sorted)
    limits_order: ClassVar[tuple[str, ...]] = ()

    def validate(self) -> None:
        super().validate()
        limits = [k for k in self.properties_schema if k != "project"]
        if all(self.properties.get(k) is None for k in limits):
            names = self.limits_order or tuple(sorted(limits))
            raise StackValidationFailed("At least one of the following properties must be "
                                        f"specified: {', '.join(names)}.")

    def _limits(self, props: Mapping[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in props.items() if k != "project" and v is not None}

    async def check_usage(self, project: str, limits: Mapping[str, Any]) -> None:
        """Refuse limits below what the project uses already (Cinder's check)."""

    async def _set(self, props: Mapping[str, Any]) -> None:
        project = await find_project(self, props["project"])
        limits = self._limits(props)
        await self.check_usage(project, limits)
        await self.api("PUT", f"{self.quota_path}/{project}", {self.quota_entity: limits})
        self.data["project"] = project

    async def handle_create(self) -> Token:
        await self._set(self.properties)
        self.resource_id = self.physical_resource_name()
        return None

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        await self._set(new_properties)
        return None

    async def handle_delete(self) -> Token:
        project = self.data.get("project")
        if project:
            await self.api("DELETE", f"{self.quota_path}/{project}", ok_missing=True)
        return None


class NovaQuota(Quota):
    """A project's compute quotas."""

    type_name = "OS::Nova::Quota"
    support_status = SupportStatus(version="8.0.0")
    client_name = "nova"
    service_type = "compute"
    quota_path = "/os-quota-sets"
    quota_entity = "quota_set"
    properties_schema = _schema(
        cores="Number of cores", fixed_ips="Number of fixed IPs",
        floating_ips="Number of floating IPs", instances="Number of servers",
        injected_files="Number of injected files",
        injected_file_content_bytes="Bytes of an injected file's content",
        injected_file_path_bytes="Bytes of an injected file's path",
        key_pairs="Number of key pairs", metadata_items="Number of metadata items",
        ram="Megabytes of RAM", security_groups="Number of security groups",
        security_group_rules="Number of security group rules",
        server_groups="Number of server groups",
        server_group_members="Number of servers in a server group")


class NeutronQuota(Quota):
    """A project's networking quotas."""

    type_name = "OS::Neutron::Quota"
    support_status = SupportStatus(version="8.0.0")
    client_name = "neutron"
    service_type = "network"
    required_extension: ClassVar[tuple[str, ...]] = ("quotas",)
    quota_path = "/quotas"
    quota_entity = "quota"
    properties_schema = _schema(
        subnet="Number of subnets", network="Number of networks",
        floatingip="Number of floating IPs", security_group_rule="Number of security "
                                                                 "group rules",
        security_group="Number of security groups", router="Number of routers",
        port="Number of ports", subnetpool="Number of subnet pools",
        rbac_policy="Number of RBAC policies")


class CinderQuota(Quota):
    """A project's block storage quotas; a limit below the project's current usage is
    refused, as Heat refuses it."""

    type_name = "OS::Cinder::Quota"
    support_status = SupportStatus(version="7.0.0")
    client_name = "cinder"
    service_type = "block-storage"
    microversion = CINDER_MICROVERSION
    quota_path = "/os-quota-sets"
    quota_entity = "quota_set"
    limits_order = ("gigabytes", "snapshots", "volumes", "backups", "backup_gigabytes")
    properties_schema = _schema(
        gigabytes="Gigabytes of volumes and snapshots", volumes="Number of volumes",
        snapshots="Number of snapshots", backups="Number of backups",
        backup_gigabytes="Gigabytes of backups")

    async def _list(self, kind: str, project: str) -> list[dict[str, Any]]:
        answer = await self.api("GET", f"/{kind}/detail?all_tenants=1&project_id={project}")
        return list((answer or {}).get(kind, []))

    async def check_usage(self, project: str, limits: Mapping[str, Any]) -> None:
        wanted = {k: v for k, v in limits.items() if v != -1}
        if not wanted:
            return
        volumes = await self._list("volumes", project)
        snapshots = await self._list("snapshots", project)
        backups = await self._list("backups", project) if \
            {"backups", "backup_gigabytes"} & set(wanted) else []
        usage = {"gigabytes": sum(int(i.get("size") or 0) for i in volumes + snapshots),
                 "volumes": len(volumes), "snapshots": len(snapshots),
                 "backups": len(backups),
                 "backup_gigabytes": sum(int(i.get("size") or 0) for i in backups)}
        for key in ("gigabytes", "volumes", "backups", "backup_gigabytes", "snapshots"):
            if key in wanted and wanted[key] < usage[key]:
                raise ResourceFailure(
                    f"Invalid quota {key} value(s): {wanted[key]}. Can not be less than the "
                    f"current usage value(s): {usage[key]}.", exc_type="ValueError")
