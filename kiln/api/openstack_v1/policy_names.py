"""Which of Heat's policy rules guards each v1 handler (Heat's ``<scope>:<handler>``).

Stack actions are the exception: their rule depends on the body (``actions:suspend``,
...), so that handler enforces it itself once the body names the action.
"""

from __future__ import annotations

from kiln.api.openstack_v1 import changesets, drift, info, resources, software, stacks
from kiln.api.openstack_v1.common import Handler

RULES: dict[Handler, str | None] = {
    info.validate: "stacks:validate_template",
    info.resource_types: "stacks:list_resource_types",
    info.resource_schema: "stacks:resource_schema",
    info.generate_template: "stacks:generate_template",
    info.template_versions: "stacks:list_template_versions",
    info.template_functions: "stacks:list_template_functions",
    info.build_info: "build_info:build_info",
    info.services: "service:index",
    stacks.index: "stacks:index",
    stacks.create: "stacks:create",
    stacks.preview: "stacks:preview",
    stacks.detail: "stacks:detail",
    stacks.lookup: "stacks:lookup",
    stacks.show: "stacks:show",
    stacks.update: "stacks:update",
    stacks.update_patch: "stacks:update_patch",
    stacks.delete: "stacks:delete",
    stacks.get_template: "stacks:template",
    stacks.get_environment: "stacks:environment",
    stacks.get_files: "stacks:files",
    stacks.preview_update: "stacks:preview_update",
    stacks.preview_update_patch: "stacks:preview_update_patch",
    stacks.abandon: "stacks:abandon",
    stacks.export: "stacks:export",
    stacks.snapshot: "stacks:snapshot",
    stacks.list_snapshots: "stacks:list_snapshots",
    stacks.show_snapshot: "stacks:show_snapshot",
    stacks.delete_snapshot: "stacks:delete_snapshot",
    stacks.restore_snapshot: "stacks:restore_snapshot",
    stacks.list_outputs: "stacks:list_outputs",
    stacks.show_output: "stacks:show_output",
    # Kiln's drift routes: a detection reads like a stack check, changing nothing
    drift.detect: "actions:check",
    drift.show: "stacks:show",
    drift.detect_resource: "actions:check",
    resources.list_resources: "resource:index",
    resources.show_resource: "resource:show",
    resources.mark_unhealthy: "resource:mark_unhealthy",
    resources.resource_metadata: "resource:metadata",
    resources.signal: "resource:signal",
    resources.list_events: "events:index",
    resources.show_event: "events:show",
    resources.action: None,  # actions:<name>, enforced by the handler
    # Kiln's change sets, under the rules of what each amounts to
    changesets.create: "stacks:preview_update",
    changesets.index: "stacks:show",
    changesets.show: "stacks:show",
    changesets.delete: "stacks:update",
    changesets.execute: "stacks:update",
    changesets.versions: "stacks:template",
    changesets.show_version: "stacks:template",
    changesets.diff_versions: "stacks:template",
    changesets.restore_version: "stacks:preview_update",
    software.list_configs: "software_configs:index",
    software.create_config: "software_configs:create",
    software.show_config: "software_configs:show",
    software.delete_config: "software_configs:delete",
    software.list_deployments: "software_deployments:index",
    software.create_deployment: "software_deployments:create",
    software.deployment_metadata: "software_deployments:metadata",
    software.show_deployment: "software_deployments:show",
    software.update_deployment: "software_deployments:update",
    software.delete_deployment: "software_deployments:delete",
}


def rule_for(handler: Handler) -> str | None:
    """The handler's rule; a handler missing here is a bug (KeyError at startup)."""
    return RULES[handler]
