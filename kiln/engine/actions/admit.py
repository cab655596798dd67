"""Admitting a new stack (top-level or nested): validated and stored, ready for its create.

Validation happens before anything is written, with Heat's errors and order: name
taken, per-project stack limit, template (an invalid section is a
StackValidationFailed here), resource types and names, each parameter's schema and
value in declaration order, parameter groups, resource count (the stack's own
resources, as Heat 27 counts at create), the template's stack validation (references,
``get_attr`` attribute names in outputs, cycles), then each resource's properties
(:mod:`kiln.engine.actions.property_check`): values that wait for other resources are checked
when the resource is created. An OS::Heat::None's properties are neither resolved nor
checked (Heat keeps none).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kiln.clients import service_catalog
from kiln.db.records import NewEvent, NewResource, NewStack
from kiln.engine.actions import property_check
from kiln.engine.model.context import RequestContext
from kiln.engine.model.live_stack import LiveStack, StackInfo
from kiln.engine.model.settings import EngineConf
from kiln.engine.model.slots import add_template_slots, check_types
from kiln.engine.model.states import CREATE, IN_PROGRESS, stack_started
from kiln.engine.runtime import acting
from kiln.engine.runtime.engine import Engine
from kiln.errors import (
    InvalidTemplateSection,
    RequestLimitExceeded,
    StackExists,
    StackValidationFailed,
)
from kiln.template import load_template
from kiln.template.environment import Environment, build_environment
from kiln.template.template import Template
from kiln.template.validation import check_parameter_groups
from kiln.template.yaql_function import warm_in_background


@dataclass
class Parent:
    """Where a nested stack hangs: its owner stack and the resource that made it."""

    stack_id: str
    root_stack_id: str
    nested_depth: int
    resource_name: str
    facade: Mapping[str, Any]


@dataclass
class Options:
    timeout_mins: int | None = None
    disable_rollback: bool = True
    tags: tuple[str, ...] = ()

    @classmethod
    def from_args(cls, args: Mapping[str, Any]) -> Options:
        tags = args.get("tags") or ()
        if isinstance(tags, str):
            tags = tuple(t for t in tags.split(",") if t)
        timeout = args.get("timeout_mins", args.get("timeout"))
        disable = args.get("disable_rollback", True)
        if isinstance(disable, str):
            disable = disable.lower() in ("true", "1", "yes", "on")
        return cls(timeout_mins=int(timeout) if timeout not in (None, "") else None,
                   disable_rollback=bool(disable), tags=tuple(tags))


def parse_request(template: Mapping[str, Any] | str, params: Mapping[str, Any] | None,
                  files: Mapping[str, str] | None, environment_files: Sequence[str] | None,
                  conf: EngineConf) -> tuple[Template, Environment]:
    files = dict(files or {})
    tmpl = load_template(template, files=files, max_size=conf.max_template_size)
    env = build_environment(dict(params or {}), environment_files=environment_files or (),
                            files=files, param_schemas=tmpl.parameter_schemas)
    return tmpl, env


def build(engine: Engine, *, name: str, project_id: str, template: Template,
          environment: Environment, files: Mapping[str, str], opts: Options,
          username: str | None = None, user_id: str | None = None,
          parent: Parent | None = None, stack_id: str | None = None,
          action: str = CREATE) -> LiveStack:
    """Bind the template and make the slots; raises template/validation errors."""
    sid = stack_id or str(uuid.uuid4())
    info = StackInfo(id=sid, name=name, project_id=project_id, action=action,
                     status=IN_PROGRESS, status_reason=stack_started(action),
                     timeout_mins=opts.timeout_mins, disable_rollback=opts.disable_rollback,
                     tags=opts.tags, owner_id=parent.stack_id if parent else None,
                     root_stack_id=parent.root_stack_id if parent else sid,
                     nested_depth=parent.nested_depth + 1 if parent else 0,
                     parent_resource_name=parent.resource_name if parent else None,
                     username=username, user_id=user_id)
    stack = LiveStack(info, template=template, environment=environment,
                      user_params=environment.parameters, files=files, support=engine.support,
                      parent_facade=parent.facade if parent else None)
    # Heat makes every resource (its type, its name) before it validates the stack:
    # an unknown type is reported before parameter values, groups and references
    stack.bind(validate_params=None)
    check_types(stack)
    stack.bound.parameters.validate()
    check_parameter_groups(template)
    add_template_slots(stack)
    return stack


def snapshot_policy_refused(stack: LiveStack, name: str) -> StackValidationFailed:
    """A "Snapshot" deletion policy on a type that cannot snapshot, named with the
    template's own section words (CFN: ``Resources.r.DeletionPolicy``), as Heat does."""
    keys = stack.template.keys
    return StackValidationFailed(f'{keys.resources}.{name}.{keys.deletion_policy}: '
                                 '"Snapshot" deletion policy not supported')


def check_duplicate_names(stack: LiveStack) -> None:
    """Heat: a parameter and a resource may not share a name (validate, preview and
    create all refuse it)."""
    params = set(stack.bound.parameters)
    dup = sorted(params & set(stack.slots))
    if dup:
        raise StackValidationFailed("Duplicate names {" + ", ".join(map(repr, dup)) + "}")


def validate(engine: Engine, stack: LiveStack,
             catalog: frozenset[str] | None = None) -> None:
    """What a create checks of a built stack; with the *catalog*, each resource's service
    is checked before the resource's own definition, as Heat orders it."""
    from kiln.engine.actions.service_check import check_service

    limit = engine.conf.max_resources_per_stack
    if limit != -1 and len(stack.slots) > limit:
        raise RequestLimitExceeded(
            "Request limit exceeded: Maximum resources per stack exceeded.")
    check_duplicate_names(stack)
    # what a create checks of the template; OS::Heat::None's functions are not
    # validated (Heat's POST /validate checks them, a create does not)
    stack.bound.validate(placeholders=False)
    engine.graph(stack)
    for slot in stack.slots.values():
        check_service(slot, catalog)
        if slot.definition.deletion_policy == "Snapshot" and not (
                slot.plugin.supports("snapshot_delete")
                or slot.plugin.supports("SNAPSHOT")):
            raise snapshot_policy_refused(stack, slot.name)
        if not slot.plugin.validates_definition:
            slot.props_final = True  # its properties stay empty: nothing to resolve
            continue
        if slot.definition.external_id is not None:
            continue  # Heat checks only that the external object exists (check_external)
        final = property_check.check_new(stack, slot)
        if final is None:
            continue  # values that wait for resources are checked at their create
        slot.plugin.properties = final
        slot.plugin.validate()
        slot.props_final = True


async def check_new(engine: Engine, *, name: str, project_id: str, is_admin: bool) -> None:
    taken, count = await engine.store.stacks.admission(project_id, name,
                                                       count_stacks=not is_admin)
    if taken:
        raise StackExists(f"The Stack ({name}) already exists.")
    limit = engine.conf.max_stacks_per_tenant
    if not is_admin and limit >= 0 and count >= limit:
        raise RequestLimitExceeded(
            "Request limit exceeded: You have reached the maximum stacks per tenant, "
            f"{limit}. Please delete some stacks.")


def warm_yaql(engine: Engine) -> None:
    """On a process's first stack request, yaql is made ready on a thread of its own
    (:func:`kiln.template.yaql_function.warm_in_background`): not at start-up, which
    must fit its CPU budget, and not on the critical path of the first stack using yaql."""
    conf = engine.conf
    warm_in_background((conf.yaql.limit_iterators, conf.yaql.memory_quota))


async def prepare(engine: Engine, ctx: RequestContext, name: str,
                  template: Mapping[str, Any] | str, params: Mapping[str, Any] | None,
                  files: Mapping[str, str] | None, environment_files: Sequence[str] | None,
                  args: Mapping[str, Any], *, stack_id: str | None = None,
                  action: str = CREATE) -> LiveStack:
    """A new top-level stack from a request, checked as create checks it (name free,
    quota, template, environment, limits) — shared by create, preview and adopt."""
    warm_yaql(engine)
    await check_new(engine, name=name, project_id=ctx.project_id, is_admin=ctx.is_admin)
    catalog = await service_catalog(engine.conf, ctx)

    def parse_and_check() -> LiveStack:
        try:
            tmpl, env = parse_request(template, params, files, environment_files,
                                      engine.conf)
        except InvalidTemplateSection as exc:  # Heat's create reports its template check so
            raise StackValidationFailed(exc.message, path=exc.path) from None
        stack = build(engine, name=name, project_id=ctx.project_id, template=tmpl,
                      environment=env, files=dict(files or {}),
                      opts=Options.from_args(args), username=ctx.username,
                      user_id=ctx.user_id, stack_id=stack_id, action=action)
        validate(engine, stack, catalog)
        # the whole tree, once, from the top (nested creates skip it); validation
        # builds on this module
        from kiln.engine.actions.validation import check_children

        check_children(stack, catalog)
        from kiln.engine.actions.service_check import check_services

        check_services(stack, catalog)
        return stack

    # Off the event loop: a template's functions may take a while within their bounds
    # (max_function_output_size, a yaql evaluation's timeout), and every other request
    # is served meanwhile. Nothing here touches the engine's shared state.
    stack = await asyncio.to_thread(parse_and_check)
    from kiln.engine.actions.validation import check_external

    stack.requester = ctx  # the lookups act with the caller's token, as Heat's do
    await check_external(stack)
    acting.check_deferred_auth(engine, ctx, stack)
    return stack


async def store(engine: Engine, stack: LiveStack) -> None:
    """Write the stack row (locked by this engine), its INIT resources and its first
    event in one transaction."""
    info = stack.info
    hidden = sorted(stack.bound.parameters.hidden)
    new = NewStack(name=info.name, project_id=info.project_id, template=stack.template.raw,
                   environment=stack.environment.env_as_dict(), files=stack.files,
                   hidden_params=hidden, id=info.id, user_id=info.user_id,
                   username=info.username, owner_id=info.owner_id,
                   root_stack_id=info.root_stack_id, nested_depth=info.nested_depth,
                   parent_resource_name=info.parent_resource_name, action=info.action,
                   status=info.status, status_reason=info.status_reason,
                   timeout=info.timeout_mins, disable_rollback=info.disable_rollback,
                   tags=info.tags, engine_id=engine.engine_id)
    rows = [NewResource(stack_id=info.id, root_stack_id=info.root_stack_id, name=slot.name,
                        type=slot.definition.type, requires=sorted(slot.requires))
            for slot in stack.slots.values()]
    event = NewEvent(stack_id=info.id, resource_name=info.name,
                     resource_type="OS::Heat::Stack", resource_action=info.action,
                     resource_status=info.status, resource_status_reason=info.status_reason,
                     physical_resource_id=info.id)
    rec, records = await engine.store.stacks.admit(new, rows, event)
    info.raw_template_id, info.created_at = rec.raw_template_id, rec.created_at
    engine.recorder.notify_stored(stack)
    for name, (rid, ruuid, created_at) in records.items():
        slot = stack.slots[name]
        slot.db_id, slot.uuid, slot.created_at = rid, ruuid, created_at
