"""The EngineService interface: every method the APIs call (docs/contracts.md §5).

Method names and argument meanings mirror Heat's engine RPC API (heat/rpc/client.py) so
the API layer can translate Heat's REST calls one to one:

- ``stack_identity`` is a mapping with at least ``stack_id`` (Heat's identity dict:
  ``{"stack_name", "stack_id", "tenant", "path"}``); the API gets it from
  :meth:`identify_stack` when the URL names a stack without an id.
- ``params`` is the *environment* (``{"parameters": ..., "parameter_defaults": ...,
  "resource_registry": ..., "event_sinks": ...}``) exactly as Heat's API passes it.
- ``args`` carries the request options under Heat's names: ``timeout_mins``,
  ``disable_rollback``, ``tags`` (list or comma-separated string), ``adopt_stack_data``,
  ``existing`` (PATCH), ``clear_parameters``, ``converge``.

Every method returns plain JSON-able dicts keyed by Heat's REST field names (the API
adds ``links``) and raises :mod:`kiln.errors`; a reply with a fixed shape is one of the
TypedDicts of :mod:`kiln.engine.service.replies`. ``JSON`` is left for documents
(the user's templates, environments and files, exports, a type's schema and generated
template) and for previews and validation results, whose nested shapes are Heat's.
Mutating stack actions return once the action has been *accepted* (stack row in
``<ACTION>_IN_PROGRESS``); the work continues in background tasks owned by the service.
:meth:`wait_for_stack` lets tests and the CLI await the end of the running action
without polling.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from kiln.engine.model.context import RequestContext as RequestContext
from kiln.engine.model.shapes import IssuedKeypair, OutputReply, StackIdentityReply
from kiln.engine.service.changeset_interface import ChangeSetAPI
from kiln.engine.service.shapes import (
    EventReply,
    OutputSummaryReply,
    ResourceReply,
    ServiceReply,
    SnapshotReply,
    SoftwareConfigReply,
    SoftwareConfigSummaryReply,
    SoftwareDeploymentReply,
    StackDetailReply,
    StackSummaryReply,
    TemplateFunctionReply,
    TemplateVersionReply,
)

Identity = Mapping[str, Any]
JSON = dict[str, Any]


class EngineServiceAPI(ChangeSetAPI, Protocol):
    """What the APIs may call on the engine: a :class:`typing.Protocol` with no stubs
    left to fall through to. :class:`~kiln.engine.service.engine_service.EngineService`
    implements it (mypy refuses to build one that leaves a method out), and the APIs and
    the broker's server type against it alone, so they import nothing of the engine's
    machinery nor the database (docs/contracts.md)."""

    # -- lifecycle of the service itself -------------------------------------------------
    async def start(self) -> None:
        """Open the database, register this engine, start housekeeping."""

    async def stop(self) -> None:
        """Finish or hand off running work, close the database."""

    async def wait_for_stack(self, stack_id: str,
                             timeout: float | None = None) -> None:  # callers' bound  # noqa: ASYNC109
        """Return when no action (nor background work, a policy's signal) of this engine
        is running on the stack (tests, CLI);
        TimeoutError after ``timeout`` seconds (the callers' one-argument bound)."""

    # -- stacks ---------------------------------------------------------------------------
    async def identify_stack(self, ctx: RequestContext, stack_name: str) -> StackIdentityReply:
        """Name or id -> identity dict; EntityNotFound ("The Stack (x) could not be found.")."""
        ...

    async def list_stacks(self, ctx: RequestContext, *, limit: int | None = None,
                          marker: str | None = None, sort_keys: Sequence[str] | None = None,
                          sort_dir: str | None = None, filters: Mapping[str, Any] | None = None,
                          show_deleted: bool = False, show_nested: bool = False,
                          show_hidden: bool = False, tags: Sequence[str] | None = None,
                          tags_any: Sequence[str] | None = None,
                          not_tags: Sequence[str] | None = None,
                          not_tags_any: Sequence[str] | None = None,
                          global_tenant: bool = False) -> list[StackSummaryReply]:
        """Stack summaries as in GET /stacks (no outputs/parameters/template)."""
        ...

    async def count_stacks(self, ctx: RequestContext, *,
                           filters: Mapping[str, Any] | None = None,
                           show_deleted: bool = False, show_nested: bool = False,
                           show_hidden: bool = False, tags: Sequence[str] | None = None,
                           tags_any: Sequence[str] | None = None,
                           not_tags: Sequence[str] | None = None,
                           not_tags_any: Sequence[str] | None = None,
                           global_tenant: bool = False) -> int:
        ...

    async def show_stack(self, ctx: RequestContext, stack_identity: Identity,
                         resolve_outputs: bool = True) -> StackDetailReply:
        """One stack as in GET /stacks/{name}/{id} (``stack`` body, without links)."""
        ...

    async def stacks_generation(self) -> int | None:
        """A number that changes (grows) whenever any stack row or tag changes, in any
        process sharing the database; None when unknown. While it is unchanged,
        list_stacks/count_stacks/show_stack return the same thing for the same call, so
        the API may reuse a response it built under the same number."""
        return None

    async def create_stack(self, ctx: RequestContext, stack_name: str,
                           template: Mapping[str, Any] | str, params: Mapping[str, Any],
                           files: Mapping[str, str], args: Mapping[str, Any],
                           environment_files: Sequence[str] | None = None) -> StackIdentityReply:
        """Validate, store, start the create; returns the new stack's identity dict."""
        ...

    async def preview_stack(self, ctx: RequestContext, stack_name: str,
                            template: Mapping[str, Any] | str, params: Mapping[str, Any],
                            files: Mapping[str, str], args: Mapping[str, Any],
                            environment_files: Sequence[str] | None = None) -> JSON:
        """The ``stack`` body of POST /stacks/preview (resources listed, nothing created)."""
        ...

    async def update_stack(self, ctx: RequestContext, stack_identity: Identity,
                           template: Mapping[str, Any] | str | None,
                           params: Mapping[str, Any], files: Mapping[str, str],
                           args: Mapping[str, Any],
                           environment_files: Sequence[str] | None = None) -> StackIdentityReply:
        """PUT (new template) or PATCH (``args["existing"]``); returns the identity."""
        ...

    async def preview_update_stack(self, ctx: RequestContext, stack_identity: Identity,
                                   template: Mapping[str, Any] | str | None,
                                   params: Mapping[str, Any], files: Mapping[str, str],
                                   args: Mapping[str, Any],
                                   environment_files: Sequence[str] | None = None) -> JSON:
        """``{"resource_changes": {"added", "deleted", "replaced", "updated",
        "unchanged"}}`` — lists of resource summaries."""
        ...

    async def delete_stack(self, ctx: RequestContext, stack_identity: Identity) -> None:
        """Start the delete (returns once accepted)."""
        ...

    async def abandon_stack(self, ctx: RequestContext, stack_identity: Identity) -> JSON:
        ...

    async def export_stack(self, ctx: RequestContext, stack_identity: Identity) -> JSON:
        ...

    async def get_template(self, ctx: RequestContext, stack_identity: Identity) -> JSON:
        ...

    async def get_environment(self, ctx: RequestContext, stack_identity: Identity) -> JSON:
        ...

    async def get_files(self, ctx: RequestContext, stack_identity: Identity) -> JSON:
        ...

    async def list_outputs(self, ctx: RequestContext,
                           stack_identity: Identity) -> list[OutputSummaryReply]:
        """``[{"output_key", "description"}]`` as GET .../outputs."""
        ...

    async def show_output(self, ctx: RequestContext, stack_identity: Identity,
                          output_key: str) -> OutputReply:
        """``{"output_key", "output_value", "description"[, "output_error"]}``."""
        ...

    # -- stack actions --------------------------------------------------------------------
    async def stack_suspend(self, ctx: RequestContext, stack_identity: Identity) -> None:
        ...

    async def stack_resume(self, ctx: RequestContext, stack_identity: Identity) -> None:
        ...

    async def stack_check(self, ctx: RequestContext, stack_identity: Identity) -> None:
        ...

    async def stack_cancel_update(self, ctx: RequestContext, stack_identity: Identity,
                                  cancel_with_rollback: bool = True) -> None:
        ...

    # -- snapshots ------------------------------------------------------------------------
    async def stack_snapshot(self, ctx: RequestContext, stack_identity: Identity,
                             name: str | None) -> SnapshotReply:
        ...

    async def show_snapshot(self, ctx: RequestContext, stack_identity: Identity,
                            snapshot_id: str) -> SnapshotReply:
        ...

    async def delete_snapshot(self, ctx: RequestContext, stack_identity: Identity,
                              snapshot_id: str) -> None:
        ...

    async def list_snapshots(self, ctx: RequestContext, stack_identity: Identity,
                             ) -> list[SnapshotReply]:
        ...

    async def stack_restore(self, ctx: RequestContext, stack_identity: Identity,
                            snapshot_id: str) -> None:
        ...

    # -- resources ------------------------------------------------------------------------
    async def list_stack_resources(self, ctx: RequestContext, stack_identity: Identity,
                                   nested_depth: int = 0, with_detail: bool = False,
                                   filters: Mapping[str, Any] | None = None) -> list[ResourceReply]:
        ...

    async def describe_stack_resource(self, ctx: RequestContext, stack_identity: Identity,
                                      resource_name: str,
                                      with_attr: Sequence[str] | None = None) -> ResourceReply:
        ...

    async def resource_for_agent(self, ctx: RequestContext, stack_identity: Identity,
                                 resource_name: str, *, agent_stack_id: str | None = None,
                                 agent_owner: str | None = None) -> ResourceReply:
        """What agents poll: ``describe_stack_resource`` without attributes and
        ``required_by`` (metadata, status, physical id, type, description). With
        ``agent_stack_id`` (and ``agent_owner``), the caller is the keypair issued to
        that stack's resource: ``Forbidden`` for another stack, or for a resource the
        owner may not read."""
        ...

    async def find_ec2_keypair(self, access_key: str) -> IssuedKeypair | None:
        """An EC2 keypair Kiln issued, secret included (no context: the request's
        signature is what authenticates); None if unknown."""
        ...

    def ec2_keypair_revocations(self) -> int:
        """A number that grows whenever this process has deleted EC2 keypairs: a cache of
        ``find_ec2_keypair`` answers is emptied when it moves."""
        ...

    async def issue_ec2_keypair(self, *, project_id: str, user_id: str,
                                stack_id: str | None = None,
                                resource_name: str | None = None) -> IssuedKeypair:
        """A new keypair (``access_key``, ``secret``, ...), for a stack's resource or not."""
        ...

    async def resource_ec2_keypair(self, stack_id: str,
                                   resource_name: str) -> IssuedKeypair | None:
        ...

    async def delete_ec2_keypair(self, access_key: str) -> bool:
        ...

    # -- stack domain users (the engine's own use: plugins' servers' credentials) --------
    @property
    def stack_user_admin(self) -> Any:
        """The Keystone side of stack users in keystone mode (kiln.auth.stack_users),
        else None (Kiln issues its own keypairs)."""
        return None

    async def stack_domain_user(self, *, stack_id: str, root_stack_id: str,
                                owner_project_id: str, resource_name: str, username: str,
                                password: str | None = None) -> JSON:
        ...

    async def stack_user_keypair(self, *, stack_id: str, root_stack_id: str,
                                 owner_project_id: str, resource_name: str,
                                 user_resource: str, username: str) -> IssuedKeypair:
        ...

    async def set_stack_user_enabled(self, *, stack_id: str, resource_name: str,
                                     enabled: bool) -> None:
        ...

    async def revoke_ec2_keypair(self, access_key: str) -> bool:
        ...

    async def remove_stack_users(self, *, stack_id: str, owner_project_id: str,
                                 top_level: bool) -> None:
        ...

    async def ec2_access_allowed(self, ctx: RequestContext, stack_identity: Identity,
                                 owner: str, resource_name: str) -> bool:
        """Whether the keypair of the stack's resource *owner* may describe
        *resource_name*."""
        ...

    async def describe_stack_resources(self, ctx: RequestContext, stack_identity: Identity,
                                       resource_name: str | None) -> list[ResourceReply]:
        ...

    async def find_physical_resource(self, ctx: RequestContext,
                                     physical_resource_id: str) -> StackIdentityReply:
        ...

    async def resource_signal(self, ctx: RequestContext, stack_identity: Identity,
                              resource_name: str, details: Any,
                              sync_call: bool = False) -> Any:
        ...

    async def resource_note(self, ctx: RequestContext, stack_identity: Identity,
                            resource_name: str, reason: str) -> None:
        """Record a ``SIGNAL`` event of a resource that changes nothing else (an alarm
        resource's change of state, seen by the watcher)."""
        ...

    async def resource_mark_unhealthy(self, ctx: RequestContext, stack_identity: Identity,
                                      resource_name: str, mark_unhealthy: bool,
                                      resource_status_reason: str | None = None) -> None:
        ...

    # -- events ---------------------------------------------------------------------------
    async def list_events(self, ctx: RequestContext, stack_identity: Identity | None,
                          filters: Mapping[str, Any] | None = None, limit: int | None = None,
                          marker: str | None = None, sort_keys: Sequence[str] | None = None,
                          sort_dir: str | None = None, nested_depth: int | None = None,
                          ) -> list[EventReply]:
        ...

    async def show_event(self, ctx: RequestContext, stack_identity: Identity,
                         resource_name: str, event_id: str) -> EventReply:
        ...

    # -- templates and types --------------------------------------------------------------
    async def validate_template(self, ctx: RequestContext, template: Mapping[str, Any] | str,
                                params: Mapping[str, Any] | None = None,
                                files: Mapping[str, str] | None = None,
                                environment_files: Sequence[str] | None = None,
                                show_nested: bool = False,
                                ignorable_errors: Sequence[str] | None = None,
                                deep: bool = False) -> JSON:
        """POST /validate's body; ``deep`` (Kiln only) also checks what a create would."""
        ...

    async def list_template_versions(self, ctx: RequestContext,
                                     ) -> list[TemplateVersionReply]:
        ...

    async def list_template_functions(self, ctx: RequestContext, template_version: str,
                                      with_condition_func: bool = False,
                                      ) -> list[TemplateFunctionReply]:
        ...

    async def list_resource_types(self, ctx: RequestContext, support_status: str | None = None,
                                  type_name: str | None = None,
                                  heat_version: str | None = None,
                                  with_description: bool = False) -> list[Any]:
        ...

    async def resource_schema(self, ctx: RequestContext, type_name: str,
                              with_description: bool = False) -> JSON:
        ...

    async def generate_template(self, ctx: RequestContext, type_name: str,
                                template_type: str = "cfn") -> JSON:
        ...

    # -- software configs and deployments ---------------------------------------------------
    async def create_software_config(self, ctx: RequestContext, group: str, name: str,
                                     config: Any, inputs: Sequence[Any],
                                     outputs: Sequence[Any], options: Mapping[str, Any],
                                     ) -> SoftwareConfigReply:
        ...

    async def show_software_config(self, ctx: RequestContext,
                                   config_id: str) -> SoftwareConfigReply:
        ...

    async def list_software_configs(self, ctx: RequestContext, limit: int | None = None,
                                    marker: str | None = None,
                                    ) -> list[SoftwareConfigSummaryReply]:
        ...

    async def delete_software_config(self, ctx: RequestContext, config_id: str) -> None:
        ...

    async def create_software_deployment(self, ctx: RequestContext, server_id: str,
                                         config_id: str | None, input_values: Any,
                                         action: str, status: str, status_reason: str,
                                         stack_user_project_id: str | None = None,
                                         deployment_id: str | None = None,
                                         ) -> SoftwareDeploymentReply:
        ...

    async def show_software_deployment(self, ctx: RequestContext,
                                       deployment_id: str) -> SoftwareDeploymentReply:
        ...

    async def list_software_deployments(self, ctx: RequestContext,
                                        server_id: str | None = None,
                                        ) -> list[SoftwareDeploymentReply]:
        ...

    async def update_software_deployment(self, ctx: RequestContext, deployment_id: str,
                                         config_id: str | None, input_values: Any,
                                         output_values: Any, action: str | None,
                                         status: str | None, status_reason: str | None,
                                         updated_at: str | None = None,
                                         ) -> SoftwareDeploymentReply:
        ...

    async def delete_software_deployment(self, ctx: RequestContext, deployment_id: str) -> None:
        ...

    async def get_software_deployment_metadata(self, ctx: RequestContext,
                                               server_id: str) -> list[SoftwareConfigReply]:
        ...

    async def signal_software_deployment(self, ctx: RequestContext, deployment_id: str,
                                         details: Any, updated_at: str | None = None) -> Any:
        ...

    async def temp_url_resource(self, stack_id: str, resource_name: str) -> Any:
        """The resource a temp URL names (:class:`kiln.tempurl.Published`: project, stack
        name, signing key, metadata and when it last changed), or None when gone."""
        ...

    # -- drift (Kiln's; kiln.engine.service.drift) -----------------------------------------
    async def detect_stack_drift(self, ctx: RequestContext, stack_identity: Identity) -> JSON:
        """Start a drift detection of the stack (nested stacks included); the detection
        in ``DETECTION_IN_PROGRESS``. ActionInProgress while an action runs."""
        ...

    async def detect_resource_drift(self, ctx: RequestContext, stack_identity: Identity,
                                    resource_name: str) -> JSON:
        """Detect one resource's drift now: its result."""
        ...

    async def drift_detection(self, ctx: RequestContext, detection_id: str) -> JSON:
        """One detection: status, stack drift status, count, time, results."""
        ...

    async def latest_drift(self, ctx: RequestContext, stack_identity: Identity) -> JSON:
        """The stack's newest detection, with each resource's newest result."""
        ...

    async def stacks_drift_status(self, stack_ids: list[str],
                                  ) -> dict[str, tuple[str, str | None]]:
        """(StackDriftStatus, time) of each checked stack."""
        ...

    async def resources_drift_status(self, ctx: RequestContext, stack_identity: Identity,
                                     ) -> dict[str, tuple[str, str | None]]:
        """(StackResourceDriftStatus, time) of each checked resource, by name."""
        ...

    # -- services -------------------------------------------------------------------------
    async def list_services(self, ctx: RequestContext) -> list[ServiceReply]:
        ...


class CloudWatchAPI(Protocol):
    """What the CloudWatch API calls (:class:`kiln.engine.service.cloudwatch.
    CloudWatchService`): the eleven CloudWatch actions over the process's alarms. A
    refused parameter raises :class:`kiln.errors.InvalidAlarmParameter`, a missing alarm
    :class:`kiln.errors.AlarmNotFound`."""

    #: the actions :meth:`call` takes, and those a stack's own keypair may call
    actions: frozenset[str]
    agent_actions: frozenset[str]

    async def call(self, project_id: str, action: str,
                   params: Mapping[str, Any]) -> dict[str, Any] | None:
        """Run one action for the caller's project; its answer in CloudWatch's field
        names, None for an action that answers nothing."""
        ...

    async def stack_tree_alarms(self, project_id: str, stack_id: str,
                                names: Sequence[str]) -> set[str]:
        """Which of ``names`` name alarms of ``stack_id``'s stack tree: what a stack's
        keypair may push metrics for (kiln.api.cloudwatch.reach)."""
        ...
