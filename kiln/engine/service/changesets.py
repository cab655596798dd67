"""EngineService: change sets, a plan stored for review and then executed exactly.

A change set keeps the request an update (or a create) would run and the changes it was
shown to make (:mod:`.changeset_plan`), with a fingerprint of the stack as it was. It
executes only while the stack is as it was then and the plan recomputed is the plan
shown; otherwise it is ``OBSOLETE`` and execution is refused.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from kiln.db.records import ChangeSetRecord, ChangeSetValues, StackRecord
from kiln.engine.actions import admit
from kiln.engine.actions import create as create_action
from kiln.engine.model.context import RequestContext
from kiln.engine.model.shapes import StackIdentityReply
from kiln.engine.model.states import CREATE, FAILED, IN_PROGRESS, ROLLBACK, UPDATE
from kiln.engine.runtime import acting
from kiln.engine.service import changeset_import as imported
from kiln.engine.service import changeset_nested as below
from kiln.engine.service import changeset_plan as plan
from kiln.engine.service.history import HistoryOps
from kiln.engine.service.replies import identity as identity_of
from kiln.engine.service.replies import isotime
from kiln.engine.service.shared import ServiceCore
from kiln.engine.service.stack_changes import StackOps, refuse_update
from kiln.errors import (
    ChangeSetNotFound,
    EntityNotFound,
    InvalidChangeSetStatus,
    InvalidInput,
    KilnError,
    RequestLimitExceeded,
    StackExists,
    reason_with_hint,
)

#: change sets kept per stack name (CloudFormation's own quota is of the same order)
MAX_PER_STACK = 100
#: AWS's rule for a change set's name
NAME = re.compile(r"[a-zA-Z][-a-zA-Z0-9]{0,127}")
#: Heat's rule for a new stack's name
STACK_NAME = re.compile(r"[a-zA-Z][a-zA-Z0-9_.-]{0,254}")
NO_CHANGES = (
    "The submitted information didn't contain changes. Submit different "
    "information to create a change set."
)
TYPES = ("UPDATE", "CREATE", "IMPORT")


def fingerprint(rec: StackRecord) -> str:
    """What must not have changed for a change set to run: the stack's template and its
    last action (a signal or an update since then changes one of them)."""
    text = f"{rec.raw_template_id}|{rec.updated_at}|{rec.action}|{rec.status}"
    return hashlib.sha256(text.encode()).hexdigest()


def kind(cs: ChangeSetRecord) -> str:
    """What executing the change set does: CREATE a stack (an IMPORT into a new
    stack too) or UPDATE one."""
    if cs.change_type == "CREATE" or (
        cs.change_type == "IMPORT" and (cs.request or {}).get("new_stack")
    ):
        return "CREATE"
    return "UPDATE"


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


class ChangeSetOps:
    """Change sets: planned with ``stacks``'s update preparation, executed through its
    launch; a create or update executed is kept by ``history``, and a kept version
    can be restored as a change set."""

    def __init__(self, core: ServiceCore, stacks: StackOps, history: HistoryOps) -> None:
        self.core = core
        self.stacks = stacks
        self.history = history

    # -- finding ------------------------------------------------------------------------
    async def _change_set(
        self, ctx: RequestContext, stack_name: str | None, name_or_id: str
    ) -> ChangeSetRecord:
        """A change set by id (or ARN), or by name within the named stack."""
        store = self.core.store.change_sets
        key = name_or_id.rsplit("/", 1)[-1] if name_or_id.startswith("arn:") else name_or_id
        found = await store.get(key)
        if found is None and stack_name:
            found = await store.find(ctx.project_id, await self._stack_name(ctx, stack_name), key)
        if (
            found is None
            or found.project_id != ctx.project_id
            or (stack_name and not await below.named_by(store, found, stack_name))
            or not await self._visible(ctx, found)
        ):
            raise ChangeSetNotFound(f"ChangeSet [{name_or_id}] does not exist")
        return found

    async def _visible(
        self, ctx: RequestContext, cs: ChangeSetRecord, rec: StackRecord | None = None
    ) -> bool:
        """Whether the change set still belongs to a stack of its name: an UPDATE one
        to the stack it was made for, a CREATE one to no stack yet or the one it made
        (a deleted stack's change sets go with it, as CloudFormation's do)."""
        rec = rec if rec is not None else await self._stack_or_none(ctx, cs)
        if kind(cs) == "UPDATE" or cs.execution is not None:
            return rec is not None and rec.id == cs.stack_id
        return rec is None or rec.id == cs.stack_id

    async def _stack_name(self, ctx: RequestContext, name_or_id: str) -> str:
        """The name of the stack a name, an id or a stack ARN names (itself if none)."""
        if name_or_id.startswith("arn:"):
            name_or_id = name_or_id.rsplit("/", 1)[-1]
        try:
            return (await self.core.find(ctx, name_or_id)).name
        except EntityNotFound:
            return name_or_id

    async def _stack_or_none(self, ctx: RequestContext, cs: ChangeSetRecord) -> StackRecord | None:
        try:
            rec = await self.core.find(ctx, cs.stack_id)
        except EntityNotFound:
            return None
        return rec if rec.name == cs.stack_name else None

    # -- creating -----------------------------------------------------------------------
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
        """Plan the change and store it; a plan that cannot be made is stored FAILED
        with the reason (a request naming a missing or taken stack is refused).
        ``imports`` (IMPORT): ``logical_id``, ``resource_type``, ``identifier``."""
        if not NAME.fullmatch(name or ""):
            raise InvalidInput(
                f"ChangeSetName {name!r} must start with a letter and hold "
                "only letters, digits and hyphens (at most 128)"
            )
        if change_type not in TYPES:
            raise InvalidInput(f"ChangeSetType must be one of {', '.join(TYPES)}")
        store = self.core.store.change_sets
        rec: StackRecord | None = None
        importing = change_type == "IMPORT"
        if importing:
            try:
                await self.core.find(ctx, stack_name)
            except EntityNotFound:
                pass
            else:
                change_type = "UPDATE"  # into an existing stack: checked as an update
        if change_type == "UPDATE":
            try:
                rec = await self.core.find(ctx, stack_name)
            except EntityNotFound:
                raise EntityNotFound(f"The Stack ({stack_name}) could not be found.") from None
            stack_name, stack_id = rec.name, rec.id
        else:
            try:
                await self.core.find(ctx, stack_name)
            except EntityNotFound:
                pass
            else:
                raise StackExists(
                    f"Stack [{stack_name}] already exists and cannot be "
                    f"created again with the changeSet [{name}]."
                )
            if not STACK_NAME.fullmatch(stack_name or ""):
                raise InvalidInput(
                    f"Invalid stack name {stack_name[:255]!r}: it must start with a letter, "
                    'hold only letters, digits and "_-." and be 255 characters or less'
                )
            stack_id = str(uuid.uuid4())
        kept = []
        for cs in await store.of_stack(ctx.project_id, stack_name):
            if await self._visible(ctx, cs, rec):
                kept.append(cs)
            else:  # left by a stack of this name that is gone
                await store.remove(cs.id)
        if any(cs.name == name for cs in kept):
            raise StackExists(f"ChangeSet [{name}] already exists for stack [{stack_name}]")
        if len(kept) >= MAX_PER_STACK:
            raise RequestLimitExceeded(
                f"Stack [{stack_name}] has {MAX_PER_STACK} change sets already; delete some first"
            )
        new_stack = rec is None
        if imports:
            template = imported.mark(template, imports, new_stack)
            change_type = "IMPORT"
        elif importing:
            raise imported.ImportRefused(
                "ResourcesToImport must be given for ChangeSetType IMPORT"
            )
        env = dict(params or {})
        if rec is not None and use_previous:
            env = await self._previous_values(rec, env, use_previous)
        request = _plain(
            {
                "template": template,
                "environment": env,
                "files": dict(files),
                "args": dict(args),
                "environment_files": list(environment_files or []) or None,
                **({"imports": list(imports), "new_stack": new_stack} if imports else {}),
                **({"include_nested": True} if include_nested else {}),
            }
        )
        values: dict[str, Any] = {
            "id": str(uuid.uuid4()),
            "name": name,
            "stack_id": stack_id,
            "stack_name": stack_name,
            "project_id": ctx.project_id,
            "change_type": change_type,
            "description": description,
            "request": request,
            "status": "CREATE_COMPLETE",
            "status_reason": "",
            "changes": [],
            "fingerprint": fingerprint(rec) if rec is not None else "",
        }
        hidden: set[str] = set()
        nested = {"id": values["id"], "name": name} if include_nested else None
        try:
            changes = await self._plan(ctx, "CREATE" if new_stack else "UPDATE", stack_name,
                                       stack_id, request, hidden, nested)
        except imported.ImportRefused:
            raise
        except (InvalidInput, EntityNotFound) as exc:
            hidden.update((request["environment"].get("parameters") or {}).keys())
            values.update(status="FAILED", status_reason=reason_with_hint(exc))
        else:
            values["changes"] = changes
            if not changes and change_type == "UPDATE":
                values.update(status="FAILED", status_reason=NO_CHANGES)
        request["hidden"] = sorted(hidden)
        if rec is not None and values["status"] != "FAILED":
            refuse_update(rec.action)
        rows = (nested or {}).get("rows") or [] if values["status"] != "FAILED" else []
        request["children"] = [row["id"] for row in rows]
        made = await store.add(values)
        for row in rows:
            await store.add(_plain(row))
        return await self.shown(ctx, made, rec)

    async def _previous_values(
        self, rec: StackRecord, env: dict[str, Any], names: Sequence[str]
    ) -> dict[str, Any]:
        """``UsePreviousValue``: the stack's stored value for each name."""
        raw = await self.core.store.stacks.raw_template_without_body(rec.raw_template_id)
        stored = dict((raw.environment or {}).get("parameters") or {})
        given = dict(env.get("parameters") or {})
        for key in names:
            if key in stored:
                given[key] = stored[key]
        return {**env, "parameters": given}

    async def _plan(
        self,
        ctx: RequestContext,
        change_type: str,
        stack_name: str,
        stack_id: str,
        request: Mapping[str, Any],
        hidden: set[str] | None = None,
        nested: dict[str, Any] | None = None,
    ) -> list[dict[str, Any]]:
        """The changes the stored request makes to the stack as it is now (and, into
        ``hidden``, the names of the parameters its template hides; into
        ``nested["rows"]``, given the change set's ``id`` and ``name``, its nested
        change sets)."""
        if change_type == "CREATE":
            with imported.parsing(request):
                stack = await admit.prepare(
                    self.core.engine,
                    ctx,
                    stack_name,
                    request["template"],
                    request["environment"],
                    request["files"],
                    request.get("environment_files"),
                    request["args"],
                    stack_id=stack_id,
                )
            made: list[dict[str, Any]] = imported.shown(_plain(plan.create_changes(stack)), request)
            if hidden is not None:
                hidden.update(stack.bound.parameters.hidden)
            if nested is not None:
                nested["rows"] = await below.children(self, ctx, stack, made, nested, nested)
            return made
        with imported.parsing(request):
            current, new = await self.stacks.prepare_update(
                ctx,
                {"stack_name": stack_name, "stack_id": stack_id},
                request["template"],
                request["environment"],
                request["files"],
                request["args"],
                request.get("environment_files"),
            )
        if hidden is not None:
            hidden.update(new.bound.parameters.hidden)
        changes: list[dict[str, Any]] = imported.shown(
            _plain(await asyncio.to_thread(plan.update_changes, current, new)), request
        )
        if nested is not None:
            nested["rows"] = await below.children(self, ctx, new, changes, nested, nested)
        return changes

    # -- reading ------------------------------------------------------------------------
    def _execution_status(self, cs: ChangeSetRecord, rec: StackRecord | None) -> str:
        if cs.status != "CREATE_COMPLETE":
            return "UNAVAILABLE"
        if cs.execution == "OBSOLETE":
            return "OBSOLETE"
        if cs.execution is None:
            if kind(cs) == "CREATE":
                return "AVAILABLE" if rec is None else "OBSOLETE"
            return (
                "AVAILABLE"
                if rec is not None and fingerprint(rec) == cs.fingerprint
                else "OBSOLETE"
            )
        if rec is None or (str(rec.raw_template_id) != cs.fingerprint and rec.action != ROLLBACK):
            return "EXECUTE_COMPLETE"
        if rec.status == IN_PROGRESS:
            return "EXECUTE_IN_PROGRESS"
        if rec.status == FAILED or rec.action == ROLLBACK:
            return "EXECUTE_FAILED"
        return "EXECUTE_COMPLETE"

    async def shown(
        self,
        ctx: RequestContext,
        cs: ChangeSetRecord,
        rec: StackRecord | None = None,
        *,
        with_changes: bool = True,
    ) -> dict[str, Any]:
        if rec is None:
            rec = await self._stack_or_none(ctx, cs)
        request = cs.request or {}
        shown: dict[str, Any] = {
            "id": cs.id,
            "name": cs.name,
            "stack_id": cs.stack_id,
            "stack_name": cs.stack_name,
            "tenant": cs.project_id,
            "change_type": cs.change_type,
            "description": cs.description,
            "status": cs.status,
            "status_reason": cs.status_reason or None,
            "execution_status": await self._root_status(ctx, cs, rec),
            "include_nested_stacks": bool(request.get("include_nested")),
            "parent_change_set": request.get("parent"),
            "root_change_set": request.get("root"),
            "creation_time": isotime(cs.created_at),
            "execution_time": isotime(cs.executed_at),
        }
        if with_changes:
            shown["parameters"] = self._parameters(request)
            shown["changes"] = list(cs.changes or [])
        return shown

    async def _root_status(
        self, ctx: RequestContext, cs: ChangeSetRecord, rec: StackRecord | None
    ) -> str:
        """A nested change set's execution status is its root's."""
        root_id = ((cs.request or {}).get("root") or {}).get("id")
        root = await self.core.store.change_sets.get(root_id) if root_id else None
        if root_id and root is None:
            return "UNAVAILABLE"
        if root is not None:
            return self._execution_status(root, await self._stack_or_none(ctx, root))
        return self._execution_status(cs, rec)

    def _parameters(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The parameters the request gives, the ones its template hides masked (all
        of them when the plan could not be made)."""
        given = dict((request.get("environment") or {}).get("parameters") or {})
        hidden = set(request.get("hidden") or ())
        return {k: (plan.MASK if k in hidden else v) for k, v in given.items()}

    async def describe_change_set(
        self, ctx: RequestContext, stack_name: str | None, name_or_id: str
    ) -> dict[str, Any]:
        return await self.shown(ctx, await self._change_set(ctx, stack_name, name_or_id))

    async def list_change_sets(self, ctx: RequestContext, stack_name: str) -> list[dict[str, Any]]:
        name = await self._stack_name(ctx, stack_name)
        found = await self.core.store.change_sets.of_stack(ctx.project_id, name)
        out = []
        for cs in found:
            rec = await self._stack_or_none(ctx, cs)
            if not await self._visible(ctx, cs, rec):
                continue
            out.append(await self.shown(ctx, cs, rec, with_changes=False))
        if not out and name == stack_name:
            await self.core.find(ctx, stack_name)  # an unknown stack is an error
        return out

    async def delete_change_set(
        self, ctx: RequestContext, stack_name: str | None, name_or_id: str
    ) -> None:
        cs = await self._change_set(ctx, stack_name, name_or_id)
        status = self._execution_status(cs, await self._stack_or_none(ctx, cs))
        if status == "EXECUTE_IN_PROGRESS":
            raise InvalidChangeSetStatus(
                f"Cannot delete ChangeSet [{cs.name}] while it is being executed"
            )
        _refuse_nested(cs, "deleted")
        for child in (cs.request or {}).get("children") or ():
            await self.core.store.change_sets.remove(child)
        await self.core.store.change_sets.remove(cs.id)

    # -- executing ----------------------------------------------------------------------
    async def execute_change_set(
        self,
        ctx: RequestContext,
        stack_name: str | None,
        name_or_id: str,
        client_token: str | None = None,
    ) -> StackIdentityReply:
        """Run the stored request, only if the stack and the plan are as shown. A retry
        with the ``client_token`` that executed it answers as the first call did."""
        cs = await self._change_set(ctx, stack_name, name_or_id)
        _refuse_nested(cs, "executed")
        rec = await self._stack_or_none(ctx, cs)
        if client_token and (cs.request or {}).get("client_token") == client_token and rec:
            return identity_of(rec)
        status = self._execution_status(cs, rec)
        if status != "AVAILABLE":
            raise InvalidChangeSetStatus(
                f"ChangeSet [{cs.name}] cannot be executed in its current execution "
                f"status of [{status}]"
                + (f": {cs.status_reason}" if cs.status_reason and status == "UNAVAILABLE" else "")
            )
        if rec is not None and rec.status == IN_PROGRESS:
            raise InvalidChangeSetStatus(
                f"Stack [{rec.name}] is in {rec.action}_{rec.status} state and can not be updated"
            )
        request = dict(cs.request or {})
        if client_token:
            request["client_token"] = client_token
        if kind(cs) == "CREATE":
            return await self._execute_create(ctx, cs, request)
        assert rec is not None
        return await self._execute_update(ctx, cs, rec, request)

    async def _obsolete(self, cs: ChangeSetRecord, why: str) -> InvalidChangeSetStatus:
        await self.core.store.change_sets.settle(
            cs.id, {"execution": "OBSOLETE", "status_reason": why}, only_if_execution=""
        )
        return InvalidChangeSetStatus(
            f"ChangeSet [{cs.name}] cannot be executed in its "
            f"current execution status of [OBSOLETE]: {why}"
        )

    async def _execute_update(
        self, ctx: RequestContext, cs: ChangeSetRecord, rec: StackRecord, request: Mapping[str, Any]
    ) -> StackIdentityReply:
        engine = self.core.engine
        identity = {"stack_name": rec.name, "stack_id": rec.id}
        refuse_update(rec.action)
        if rec.root_stack_id == rec.id:
            await acting.refresh_for_update(engine, rec.root_stack_id, rec.name, ctx)
        await acting.for_request(engine, rec.root_stack_id, rec.name, ctx)
        async with engine.claim(rec.id, rec.name, UPDATE) as claim:
            now = await self.core.find(ctx, rec.id)
            if fingerprint(now) != cs.fingerprint:
                raise await self._obsolete(cs, "the stack changed after the change set was created")
            nested: dict[str, Any] | None = (
                {"id": cs.id, "name": cs.name} if request.get("children") else None)
            try:
                again = await self._plan(ctx, "UPDATE", rec.name, rec.id, request, None, nested)
            except KilnError as exc:
                raise await self._obsolete(cs, f"the plan cannot be made again: {exc}") from None
            if below.bare(again) != below.bare(cs.changes):
                raise await self._obsolete(
                    cs, "the changes it would make now differ from the ones it shows"
                )
            if not await self._children_unchanged(ctx, request):
                raise await self._obsolete(
                    cs, "a nested stack changed after the change set was created"
                )
            if nested is not None and not await below.as_shown(self, nested["rows"], request):
                raise await self._obsolete(cs, "a nested stack's changes now differ from its own")
            if not await self.core.store.change_sets.settle(
                cs.id, _executed(request), only_if_execution=""
            ):
                raise InvalidChangeSetStatus(f"ChangeSet [{cs.name}] was executed already")
            with imported.parsing(request):
                current, new = await self.stacks.prepare_update(
                    ctx,
                    identity,
                    request["template"],
                    request["environment"],
                    request["files"],
                    request["args"],
                    request.get("environment_files"),
                )
            await self.stacks.launch_update(claim, current, new)
            await self.core.store.change_sets.settle(
                cs.id, {"fingerprint": str(new.info.raw_template_id)}
            )
        return new.identity_dict()

    async def _children_unchanged(self, ctx: RequestContext, request: Mapping[str, Any]) -> bool:
        """Whether each nested stack a nested change set showed is as it was then."""
        for child_id in request.get("children") or ():
            child = await self.core.store.change_sets.get(child_id)
            if child is None or child.change_type != "UPDATE":
                continue
            now = await self._stack_or_none(ctx, child)
            if now is None or fingerprint(now) != child.fingerprint:
                return False
        return True

    async def _execute_create(
        self, ctx: RequestContext, cs: ChangeSetRecord, request: Mapping[str, Any]
    ) -> StackIdentityReply:
        engine = self.core.engine
        with imported.parsing(request):
            stack = await admit.prepare(
                engine,
                ctx,
                cs.stack_name,
                request["template"],
                request["environment"],
                request["files"],
                request.get("environment_files"),
                request["args"],
                stack_id=cs.stack_id,
            )
        made = imported.shown(_plain(plan.create_changes(stack)), request)
        if made != below.bare(cs.changes) or not await below.still_shown(self, ctx, stack, cs):
            raise await self._obsolete(
                cs, "the changes it would make now differ from the ones it shows"
            )
        if not await self.core.store.change_sets.settle(
            cs.id, _executed(request), only_if_execution=""
        ):
            raise InvalidChangeSetStatus(f"ChangeSet [{cs.name}] was executed already")
        await acting.delegate(engine, ctx, stack.info.id, cs.stack_name)
        try:
            async with engine.claims.claim_new(stack.info.id, CREATE) as claim:
                await admit.store(engine, stack)
                self.history.remember_version(stack, CREATE)
                claim.launch(lambda: create_action.run_create(engine, stack), stack)
        except BaseException:
            await acting.undo_delegation(engine, ctx, stack.info.id)
            await self.core.store.change_sets.settle(cs.id, {"execution": None})
            raise
        rec = await self.core.find(ctx, stack.info.id)
        await self.core.store.change_sets.settle(cs.id, {"fingerprint": str(rec.raw_template_id)})
        return stack.identity_dict()


def _executed(request: Mapping[str, Any]) -> ChangeSetValues:
    return {"execution": "EXECUTED", "executed_at": _now(), "request": dict(request)}


def _refuse_nested(cs: ChangeSetRecord, verb: str) -> None:
    """A nested change set goes only with its root (as CloudFormation's)."""
    root = (cs.request or {}).get("root")
    if root:
        raise InvalidChangeSetStatus(
            f"ChangeSet [{cs.name}] is a nested change set and cannot be {verb} alone: "
            f"use its root change set [{root.get('name')}]"
        )


def _now() -> Any:
    from kiln.engine.store import utcnow

    return utcnow()
