"""EngineService: the read-only calls (stacks, resources, events, outputs, templates)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from kiln.db.records import (
    EventQuery,
    RawTemplateRecord,
    ResourceRecord,
    SortDir,
    StackQuery,
    StackRecord,
)
from kiln.engine.model import live_outputs
from kiln.engine.model.context import RequestContext
from kiln.engine.model.live_stack import LiveStack
from kiln.engine.model.outputs import resolve_all
from kiln.engine.model.shapes import OutputReply
from kiln.engine.model.states import IN_PROGRESS
from kiln.engine.service import masking
from kiln.engine.service import replies as fmt
from kiln.engine.service.interface import JSON, Identity
from kiln.engine.service.shapes import (
    EventReply,
    OutputSummaryReply,
    ResourceReply,
    StackDetailReply,
    StackSummaryReply,
)
from kiln.engine.service.shared import ResourceNotFound, ServiceCore
from kiln.engine.service.single_flight import SingleFlight
from kiln.engine.store.loader import environment_from_stored, info_from_record
from kiln.errors import EntityNotFound, HTTPNotFound, KilnError
from kiln.resources.base import Resource
from kiln.template.template import Template


def _required_by(rows: Sequence[ResourceRecord]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {r.name: [] for r in rows}
    for row in rows:
        for req in row.requires or ():
            if req in out and row.name not in out[req]:
                out[req].append(row.name)
    return out


def _current_rows(rows: Sequence[ResourceRecord]) -> list[ResourceRecord]:
    """One row per name: the live one (a replaced row only while nothing replaced it)."""
    by_name: dict[str, ResourceRecord] = {}
    for row in sorted(rows, key=lambda r: r.id):
        best = by_name.get(row.name)
        if best is None or row.replaced_by is None:
            by_name[row.name] = row
    return list(by_name.values())


T = TypeVar("T")

#: The list filter of Kiln's own name search (the API passes it among the filters):
#: stacks whose name contains the value, in any case.
NAME_CONTAINS = "name_contains"

#: Stacks whose show parameters/description are kept (see ``Reads._show_static``).
_SHOW_CACHE_SIZE = 2048


def sort_direction(value: str | None) -> SortDir | None:
    """The API has already refused any other value (kiln.api.params.extract_sort_dir)."""
    if value == "asc":
        return "asc"
    return "desc" if value == "desc" else None


class Reads:
    """Stack, resource, output and event reads, with per-template caches."""

    def __init__(self, core: ServiceCore) -> None:
        self.core = core
        #: per (stack, raw template) derived values, by cache name (``_per_template``)
        self._caches: dict[str, dict[tuple[str, int], Any]] = {}
        self._generation_reader: SingleFlight[int | None] | None = None

    # -- stacks ---------------------------------------------------------------------------
    def _query(self, ctx: RequestContext, *, global_tenant: bool = False,
               filters: Mapping[str, Any] | None = None,
               sort_keys: Sequence[str] | str | None = None,
               sort_dir: str | None = None, limit: int | None = None, marker: str | None = None,
               tags: Sequence[str] | None = None, tags_any: Sequence[str] | None = None,
               not_tags: Sequence[str] | None = None,
               not_tags_any: Sequence[str] | None = None, show_deleted: bool = False,
               show_nested: bool = False, show_hidden: bool = False) -> StackQuery:
        if isinstance(sort_keys, str):
            sort_keys = [sort_keys]
        filters = dict(filters or {})
        contains = filters.pop(NAME_CONTAINS, None)
        return StackQuery(
            name_contains=str(contains) if contains else None,
            project_id=None if global_tenant and (ctx.is_admin or ctx.lists_all_projects)
            else ctx.project_id,
            filters=filters, tags=tuple(tags or ()), tags_any=tuple(tags_any or ()),
            not_tags=tuple(not_tags or ()), not_tags_any=tuple(not_tags_any or ()),
            show_hidden=show_hidden, show_deleted=show_deleted, show_nested=show_nested,
            limit=limit, marker=marker, sort_keys=tuple(sort_keys or ()),
            sort_dir=sort_direction(sort_dir))

    async def list_stacks(self, ctx: RequestContext, *, limit: int | None = None,
                          marker: str | None = None, sort_keys: Sequence[str] | None = None,
                          sort_dir: str | None = None, filters: Mapping[str, Any] | None = None,
                          show_deleted: bool = False, show_nested: bool = False,
                          show_hidden: bool = False, tags: Sequence[str] | None = None,
                          tags_any: Sequence[str] | None = None,
                          not_tags: Sequence[str] | None = None,
                          not_tags_any: Sequence[str] | None = None,
                          global_tenant: bool = False) -> list[StackSummaryReply]:
        q = self._query(ctx, limit=limit, marker=marker, sort_keys=sort_keys,
                        sort_dir=sort_dir, filters=filters, show_deleted=show_deleted,
                        show_nested=show_nested, show_hidden=show_hidden, tags=tags,
                        tags_any=tags_any, not_tags=not_tags, not_tags_any=not_tags_any,
                        global_tenant=global_tenant)
        rows = await self.core.store.stacks.summaries(q)
        return [fmt.stack_summary_row(r) for r in rows]

    async def stacks_generation(self) -> int | None:
        """The database's ``stacks`` change counter (see ``db.stacks.stacks_generation``):
        while it is unchanged, a stack list or show would return the same thing. Read
        once for every burst of concurrent callers (``SingleFlight``)."""
        reader = self._generation_reader
        if reader is None:
            reader = self._generation_reader = SingleFlight(self.core.store.stacks.generation)
        return await reader.get()

    async def count_stacks(self, ctx: RequestContext, *,
                           filters: Mapping[str, Any] | None = None,
                           show_deleted: bool = False, show_nested: bool = False,
                           show_hidden: bool = False, tags: Sequence[str] | None = None,
                           tags_any: Sequence[str] | None = None,
                           not_tags: Sequence[str] | None = None,
                           not_tags_any: Sequence[str] | None = None,
                           global_tenant: bool = False) -> int:
        q = self._query(ctx, filters=filters, show_deleted=show_deleted,
                        show_nested=show_nested, show_hidden=show_hidden, tags=tags,
                        tags_any=tags_any, not_tags=not_tags, not_tags_any=not_tags_any,
                        global_tenant=global_tenant)
        return await self.core.store.stacks.count(q)

    async def show_stack(self, ctx: RequestContext, stack_identity: Identity,
                         resolve_outputs: bool = True) -> StackDetailReply:
        rec = await self.core.find(ctx, stack_identity, show_deleted=True)
        params, description = await self._show_static(rec)
        outputs, live = await self._outputs_now(rec) if resolve_outputs else (None, False)
        reply = fmt.stack_detail(rec, parameters=params, description=description,
                                 outputs=outputs)
        if live:
            reply["outputs_live"] = True
        return reply

    async def _per_template(self, cache_name: str, rec: StackRecord,
                            derive: Callable[[Template, RawTemplateRecord], T]) -> T:
        """``derive(template, raw)`` for the stack's current raw template, kept per
        (stack, raw template) in a bounded most-recently-used cache: a raw template is
        never changed in place (an update stores a new one), so what is derived from it
        holds until the stack points elsewhere, and a repeated read then costs no
        template fetch, decode or bind."""
        cache: dict[tuple[str, int], T] = self._caches.setdefault(cache_name, {})
        key = (rec.id, rec.raw_template_id)
        if key in cache:
            found = cache.pop(key)
        else:
            raw = await self.core.store.stacks.raw_template(rec.raw_template_id)
            found = derive(self.core.engine.template_cache.get(raw), raw)
        cache[key] = found   # most recently used last
        while len(cache) > _SHOW_CACHE_SIZE:
            cache.pop(next(iter(cache)))
        return found

    async def _show_static(self, rec: StackRecord) -> tuple[Mapping[str, str], str]:
        """Stack show's parameters and description."""
        return await self._per_template(
            "_show_cache", rec,
            lambda tmpl, raw: (self._parameters_display(rec, tmpl, raw),
                               tmpl.description or "No description"))

    async def descriptions(self, rec: StackRecord) -> Mapping[str, str]:
        """Each resource's ``description`` as the stack's template declares it (resource
        show and the detailed list show it, as Heat does)."""
        return await self._per_template(
            "_description_cache", rec,
            lambda tmpl, raw: {name: snippet.description
                               for name, snippet in tmpl.resources.items()
                               if isinstance(snippet.description, str)
                               and snippet.description})

    async def get_template(self, ctx: RequestContext, stack_identity: Identity) -> JSON:
        rec = await self.core.find(ctx, stack_identity, show_deleted=True)
        raw = await self.core.store.stacks.raw_template(rec.raw_template_id)
        return dict(raw.template)

    async def get_environment(self, ctx: RequestContext, stack_identity: Identity) -> JSON:
        rec = await self.core.find(ctx, stack_identity, show_deleted=True)
        raw = await self.core.store.stacks.raw_template(rec.raw_template_id)
        env = dict(raw.environment)
        hidden = set(self._hidden_params(raw))
        params = dict(env.get("parameters") or {})
        for name in hidden & set(params):
            params[name] = masking.MASK
        return {"parameters": params,
                "resource_registry": env.get("resource_registry") or {},
                "parameter_defaults": env.get("parameter_defaults") or {},
                "event_sinks": env.get("event_sinks") or [],
                "encrypted_param_names": list(env.get("encrypted_param_names") or [])}

    async def get_files(self, ctx: RequestContext, stack_identity: Identity) -> JSON:
        rec = await self.core.find(ctx, stack_identity, show_deleted=True)
        raw = await self.core.store.stacks.raw_template(rec.raw_template_id)
        return dict(raw.files)

    async def _outputs(self, rec: StackRecord) -> list[OutputReply]:
        return (await self._outputs_now(rec))[0]

    async def _outputs_now(self, rec: StackRecord) -> tuple[list[OutputReply], bool]:
        """The outputs stored at the end of the last action; while an action runs, they
        are resolved on demand from the resources as they are now, as Heat does (a
        resource not created yet gives None). The flag says they were resolved now (a
        body that must not be reused while no stack row changes)."""
        stored = list(rec.outputs or [])
        if not rec.raw_template_id:
            return stored, False
        if rec.status != IN_PROGRESS:
            return await self._outputs_at_rest(rec)
        stack = self.core.engine.live.get(rec.id)
        if stack is None or not stack.is_bound:   # the action runs in another engine
            try:
                stack = await self.core.engine.load(rec.id)
            except EntityNotFound:
                return stored, False
        return resolve_all(stack), True

    async def _outputs_at_rest(self, rec: StackRecord) -> tuple[list[OutputReply], bool]:
        """The stored outputs, unless the template's outputs name attributes Heat reads
        live (``show``, a volume's ``status``): those resources are re-read from the
        cloud and the outputs resolved again."""
        stored = list(rec.outputs or [])
        names = await self._per_template("_live_output_cache", rec, self._live_names)
        if not names:
            return stored, False
        try:
            stack = await self.core.engine.load(rec.id)
        except EntityNotFound:
            return stored, False
        for name in sorted(names):
            slot = stack.slots.get(name)
            if slot is not None and slot.physical_id is not None and \
                    slot.state.action not in ("INIT", "DELETE"):
                await slot.plugin.refresh_live()
        return resolve_all(stack), True

    def _live_names(self, tmpl: Template, raw: RawTemplateRecord) -> frozenset[str]:
        resources = tmpl.resources

        def plugin_class(name: str) -> type[Resource] | None:
            snippet = resources.get(name)
            if snippet is None or not isinstance(snippet.type, str):
                return None
            try:
                return self.core.engine.support.plugins(snippet.type, raw.files)
            except KilnError:
                return None

        return frozenset(live_outputs.live_resources(tmpl.outputs, plugin_class))

    async def list_outputs(self, ctx: RequestContext,
                           stack_identity: Identity) -> list[OutputSummaryReply]:
        rec = await self.core.find(ctx, stack_identity)
        return [{"output_key": o["output_key"], "description": o["description"]}
                for o in await self._outputs(rec)]

    async def show_output(self, ctx: RequestContext, stack_identity: Identity,
                          output_key: str) -> OutputReply:
        rec = await self.core.find(ctx, stack_identity)
        for out in await self._outputs(rec):
            if out["output_key"] == output_key:
                return out.copy()
        raise EntityNotFound(f"Specified output key {output_key} not found.")

    # -- resources ------------------------------------------------------------------------
    async def list_stack_resources(self, ctx: RequestContext, stack_identity: Identity,
                                   nested_depth: int = 0, with_detail: bool = False,
                                   filters: Mapping[str, Any] | None = None,
                                   ) -> list[ResourceReply]:
        rec = await self.core.find(ctx, stack_identity)
        groups, kids = await self.core.store.stacks.with_resources(rec, nested_depth)
        children = {(k.owner_id, k.parent_resource_name): k for k in kids}
        result: list[ResourceReply] = []
        for stack, rows in groups:
            current = _current_rows(rows)
            needed = _required_by(current)
            # with_detail adds what resource show adds (description, metadata, attributes)
            attrs = (await self._all_resource_attributes(stack.id)
                     if with_detail and current else {})
            described = await self.descriptions(stack) if with_detail and current else {}
            for row in current:
                item = fmt.resource(row, stack, required_by=needed.get(row.name, []),
                                    nested_stack=children.get((stack.id, row.name)),
                                    detail=with_detail, attributes=attrs.get(row.name),
                                    description=described.get(row.name, ""))
                if _matches(item, filters):
                    result.append(item)
        return result

    async def describe_stack_resource(self, ctx: RequestContext, stack_identity: Identity,
                                      resource_name: str,
                                      with_attr: Sequence[str] | None = None) -> ResourceReply:
        rec = await self.core.find(ctx, stack_identity)
        rows = _current_rows(await self.core.store.resources.of_stack(rec.id))
        row = next((r for r in rows if r.name == resource_name), None)
        if row is None:
            raise ResourceNotFound.in_stack(resource_name, rec.name)
        attributes = await self._resource_attributes(rec.id, resource_name, with_attr)
        description = (await self.descriptions(rec)).get(resource_name, "")
        nested = await self._nested_of(rec.id, resource_name)
        return fmt.resource(row, rec, required_by=_required_by(rows).get(row.name, []),
                            detail=True, description=description, attributes=attributes,
                            nested_stack=nested)

    async def describe_stack_resources(self, ctx: RequestContext, stack_identity: Identity,
                                       resource_name: str | None) -> list[ResourceReply]:
        items = await self.list_stack_resources(ctx, stack_identity)
        return [i for i in items if resource_name is None or i["resource_name"] == resource_name]

    # -- events ---------------------------------------------------------------------------
    async def list_events(self, ctx: RequestContext, stack_identity: Identity | None,
                          filters: Mapping[str, Any] | None = None, limit: int | None = None,
                          marker: str | None = None, sort_keys: Sequence[str] | None = None,
                          sort_dir: str | None = None, nested_depth: int | None = None,
                          ) -> list[EventReply]:
        if stack_identity is None:
            raise EntityNotFound("The Stack (None) could not be found.")
        rec = await self.core.find(ctx, stack_identity, show_deleted=True)
        stacks = {rec.id: rec}
        if nested_depth:
            tree = await self.core.store.stacks.tree(rec.root_stack_id)
            for child in tree:
                if 0 < child.nested_depth - rec.nested_depth <= nested_depth:
                    stacks[child.id] = child
        q = EventQuery(stack_ids=tuple(stacks), filters=dict(filters or {}), limit=limit,
                       marker=marker, sort_keys=tuple(sort_keys or ()),
                       sort_dir=sort_direction(sort_dir))
        rows = await self.core.store.events.query(q)
        hidden = await self._hidden_values(
            [stacks[ev.stack_id] for ev in rows if ev.resource_properties])
        out = []
        for ev in rows:
            item = fmt.event(ev, stacks[ev.stack_id])
            if ev.stack_id in hidden:
                item["resource_properties"] = masking.mask(item["resource_properties"],
                                                           hidden[ev.stack_id])
            if nested_depth:
                item["root_stack_id"] = fmt.identity(rec)
            out.append(item)
        return out

    async def show_event(self, ctx: RequestContext, stack_identity: Identity,
                         resource_name: str, event_id: str) -> EventReply:
        rec = await self.core.find(ctx, stack_identity, show_deleted=True)
        ev = await self.core.store.events.get(rec.id, event_id)
        if ev is None or (resource_name and ev.resource_name != resource_name):
            # Heat's API finds the event by filtering the list: webob's 404, its words
            raise HTTPNotFound(f"No event {event_id} found")
        item = fmt.event(ev, rec)
        hidden = await self._hidden_values([rec] if ev.resource_properties else [])
        if rec.id in hidden:
            item["resource_properties"] = masking.mask(item["resource_properties"],
                                                       hidden[rec.id])
        return item

    async def _hidden_values(self, stacks: Sequence[StackRecord]) -> dict[str, list[Any]]:
        """Per stack id, the values of its hidden parameters (only stacks having any)."""
        out: dict[str, list[Any]] = {}
        for rec in {s.id: s for s in stacks}.values():
            raw = await self.core.store.stacks.raw_template(rec.raw_template_id)
            schemas = self.core.engine.template_cache.get(raw).parameter_schemas
            values = masking.hidden_values(raw.environment, schemas)
            if values:
                out[rec.id] = values
        return out

    # -- read helpers -------------------------------------------------------------------
    def _parameters_display(self, rec: StackRecord, tmpl: Template,
                            raw: RawTemplateRecord) -> dict[str, str]:
        """Stack show's ``parameters``: every value as text, hidden ones masked."""
        env = environment_from_stored(raw.environment, raw.files)
        stack = LiveStack(info_from_record(rec), template=tmpl, environment=env,
                          user_params=env.parameters, files=raw.files,
                          support=self.core.engine.support)
        try:
            stack.bind(validate_params=False)
            display: dict[str, str] = stack.bound.parameters.display_map()
        except KilnError:  # a stored stack whose parameters no longer bind: show raw
            display = {k: str(v) for k, v in env.parameters.items()}
        return display

    def _hidden_params(self, raw: RawTemplateRecord) -> list[str]:
        schemas = self.core.engine.template_cache.get(raw).parameter_schemas
        return [n for n, s in schemas.items() if s.hidden]

    async def _resource_attributes(self, stack_id: str, name: str,
                                   with_attr: Any = None) -> dict[str, Any]:
        """Heat's ``attributes`` of resource show: ``show`` if it is a map, else every
        declared attribute (plus any asked for with ``with_attr``)."""
        stack = await self.core.engine.load(stack_id)
        slot = stack.slots.get(name)
        if slot is None:
            return {}
        if slot.physical_id is not None and slot.state.action not in ("INIT", "DELETE"):
            # a cloud resource's attributes are the cloud's now, as Heat reads them
            await slot.plugin.refresh_live()
        return _shown_attributes(slot.plugin, with_attr)

    async def _all_resource_attributes(self, stack_id: str) -> dict[str, dict[str, Any]]:
        """Every resource's ``attributes`` as resource show gives them, from one load of
        the stack (the detailed resource list shows them all)."""
        stack = await self.core.engine.load(stack_id)
        return {name: _shown_attributes(slot.plugin, None)
                for name, slot in stack.slots.items()}

    async def _nested_of(self, stack_id: str, resource_name: str) -> StackRecord | None:
        children = await self.core.store.stacks.children(stack_id)
        for child in children:
            if child.parent_resource_name == resource_name:
                return child
        return None


#: the resource list's filter keys (Heat's resource table columns) -> our item's keys
_FILTER_FIELDS = {"name": "resource_name", "action": "resource_action",
                  "status": "resource_status"}


def _matches(item: Mapping[str, Any], filters: Mapping[str, Any] | None) -> bool:
    """Heat 27 (observed): ``type`` matches any part of the type name, ``status`` the
    status alone or joined with the action ("COMPLETE", "CREATE_COMPLETE"), the others
    exactly; repeated values are alternatives (Heat answers a repeated ``type`` with a
    bare 400, which we do not copy)."""
    if not filters:
        return True
    for key, want in filters.items():
        values = want if isinstance(want, list | tuple) else [want]
        have = item.get(_FILTER_FIELDS.get(key, key))
        if key == "type":
            if not any(str(v) in str(item.get("resource_type", "")) for v in values):
                return False
        elif key in ("status", "resource_status"):
            have_alt = str(item.get("resource_status", "")).split("_", 1)[-1]
            if have not in values and have_alt not in values:
                return False
        elif have not in values:
            return False
    return True


def _shown_attributes(plugin: Resource, with_attr: Sequence[str] | None) -> dict[str, Any]:
    def value(attr: str) -> Any:
        try:
            return plugin.get_attribute(attr)
        except Exception:  # a plugin's failing attribute shows as null (Heat)  # noqa: BLE001
            return None

    shown = value("show")
    if isinstance(shown, dict):
        for attr in with_attr or ():
            shown.setdefault(attr, value(attr))
        return shown
    names = set(type(plugin).attributes_schema) | set(with_attr or ())
    return {attr: value(attr) for attr in sorted(names)}
