"""The change set calls of the EngineService interface (:mod:`.interface`), kept apart
so the interface stays one screenful per concern. Implemented by
:class:`kiln.engine.service.changesets.ChangeSetOps`.

A change set is shown as a dict: ``id``, ``name``, ``stack_id``, ``stack_name``,
``tenant``, ``change_type`` (UPDATE, CREATE or IMPORT), ``description``, ``status``
(CREATE_COMPLETE or FAILED), ``status_reason``, ``execution_status`` (CloudFormation's:
UNAVAILABLE, AVAILABLE, EXECUTE_IN_PROGRESS, EXECUTE_COMPLETE, EXECUTE_FAILED,
OBSOLETE), ``creation_time``, ``execution_time``, and when shown alone ``parameters``
(hidden ones masked) and ``changes`` (``action`` Add/Modify/Remove/Import,
``logical_resource_id``, ``physical_resource_id``, ``resource_type``, ``replacement``,
``scope``, ``details``: ``target`` {``attribute``, ``name``, ``requires_recreation``},
``before``, ``after``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from kiln.engine.model.context import RequestContext
from kiln.engine.model.shapes import StackIdentityReply


class ChangeSetAPI(Protocol):
    """The change set and history calls (a Protocol, as the rest of the interface)."""

    async def create_change_set(
        self,
        ctx: RequestContext,
        stack_name: str,
        name: str,
        change_type: str,
        template: Mapping[str, Any] | str | None,
        params: Mapping[str, Any],
        files: Mapping[str, str],
        args: Mapping[str, Any],
        *,
        use_previous: Sequence[str] = (),
        description: str | None = None,
        environment_files: Sequence[str] | None = None,
        imports: Sequence[Mapping[str, Any]] = (),
        include_nested: bool = False,
    ) -> dict[str, Any]:
        """Plan an update of ``stack_name`` (a name or id), or the create of a new
        stack of that name, and store it; a plan that cannot be made is stored FAILED
        with the reason. ``use_previous``: parameters that keep the stack's value.
        ``imports`` (``change_type`` IMPORT): the resources adopted from existing
        objects, each ``logical_id``, ``resource_type`` and ``identifier`` (a map).
        ``include_nested``: a nested change set for each nested stack added or modified
        (:mod:`.changeset_nested`)."""
        ...

    async def describe_change_set(
        self, ctx: RequestContext, stack_name: str | None, name_or_id: str
    ) -> dict[str, Any]:
        """One change set by id (or ARN), or by name within the stack."""
        ...

    async def list_change_sets(self, ctx: RequestContext, stack_name: str) -> list[dict[str, Any]]:
        """The stack's change sets, oldest first, without their changes."""
        ...

    async def execute_change_set(
        self,
        ctx: RequestContext,
        stack_name: str | None,
        name_or_id: str,
        client_token: str | None = None,
    ) -> StackIdentityReply:
        """Run the change set if the stack and the plan are as it shows
        (``InvalidChangeSetStatus`` otherwise); returns once the action is accepted.
        Retried with the ``client_token`` that executed it, it answers as the first
        call did (CloudFormation's ``ClientRequestToken``)."""
        ...

    async def delete_change_set(
        self, ctx: RequestContext, stack_name: str | None, name_or_id: str
    ) -> None:
        ...

    async def review_stack(self, ctx: RequestContext, stack_name: str) -> dict[str, Any] | None:
        """The newest CREATE change set waiting to make a stack of that name (no stack
        of the name exists), or None."""
        ...

    async def review_stacks(self, ctx: RequestContext) -> list[dict[str, Any]]:
        """Every stack of the project in review: the newest CREATE change set of each
        stack name with no stack yet."""
        ...

    async def delete_review_stack(self, ctx: RequestContext, stack_name: str) -> bool:
        """Drop the CREATE change sets of a stack not made yet; whether there were any."""
        ...

    # -- a stack's history (:mod:`kiln.engine.service.history`) ---------------------------
    async def list_stack_versions(
        self, ctx: RequestContext, stack_identity: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        """The versions kept, oldest first: ``version``, ``action``, ``created_at``."""
        ...

    async def show_stack_version(
        self, ctx: RequestContext, stack_identity: Mapping[str, Any], version: int
    ) -> dict[str, Any]:
        """One version with its ``template``, ``environment`` (hidden parameters masked)
        and the names of its ``files``."""
        ...

    async def diff_stack_versions(
        self, ctx: RequestContext, stack_identity: Mapping[str, Any], old: int, new: int
    ) -> dict[str, Any]:
        """``{"from", "to", "diff"}``: a unified diff of two versions."""
        ...

    async def restore_version_change_set(
        self, ctx: RequestContext, stack_identity: Mapping[str, Any], version: int, name: str
    ) -> dict[str, Any]:
        """A change set (named ``name``) that updates the stack to that version."""
        ...
