"""OS::Heat::ResourceGroup: ``count`` copies of one resource definition, in a child stack.

Members are named "0", "1", ... as in Heat; names removed by ``removal_policies`` are
never reused (``removed_rsrc_list``), and shrinking ``count`` removes the highest
names. ``index_var`` (default ``%index%``) in the member properties becomes each
member's name. The child template carries outputs for every member's reference and
attributes, so ``refs``, ``refs_map``, ``attributes``, ``resource.N[.attr]`` and
plain member attribute names (a list over members) are answered from stored outputs.

``update_policy`` works as in Heat 27: ``batch_create`` (on create) and
``rolling_update`` (on an update that changes ``resource_def``) run the child stack
through a series of updates, one per batch (:mod:`kiln.resources.common.group_batches`
has the arithmetic, including how ``min_in_service`` briefly grows the group).
A batched create first makes an empty child, as Heat does. ``pause_time`` separates
consecutive batches, never follows the last one, and counts against the stack timeout
(Heat's "will result in stack update timeout" error when the pauses alone reach it).

A pause is a deadline in the progress token, not a sleep inside the plugin:
``check_*_complete`` returns False until it passes and ``poll_delay`` tells the engine
how long to wait, so a cancel or a delete ends a paused group at once, and each batch
is checkpointed (``NestedStackOps.checkpoint``) so a resumed create goes on from the
last batch with the deadline it had. An update without a change to ``resource_def``
(or without ``rolling_update``) is one child update, as in Heat.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from typing import Any, ClassVar

from kiln.errors import InvalidTemplateAttribute, KilnError, RequestLimitExceeded
from kiln.resources.base import (
    Attribute,
    Peers,
    Properties,
    Property,
    ResourceFailure,
    SupportStatus,
    Token,
    select_path,
)
from kiln.resources.common.group_batches import (
    Step,
    batch_steps,
    member_names,
    step_members,
    step_timeout,
)
from kiln.resources.heat.group_members import member_requirements
from kiln.resources.nested import NestedStackResource
from kiln.template.constraints import AllowedValues, Length, Range
from kiln.template.definitions import ResourceDefinition

NAMES_KEY = "member_names"
BLACKLIST_KEY = "name_blacklist"
REF_OUTPUT = "refs"
#: the child a batched create starts from (Heat creates the same empty stack)
EMPTY_CHILD = {"heat_template_version": "2013-05-23"}


def _replace_index(value: Any, index_var: str, index: str) -> Any:
    """``value`` with ``index_var`` replaced. A part with nothing to replace is returned
    itself, not copied: the members of a big group whose definition never mentions the
    index then share one properties document (templates are never changed in place)."""
    if isinstance(value, str):
        return value.replace(index_var, index)
    if isinstance(value, list):
        items = [_replace_index(v, index_var, index) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if isinstance(value, dict):
        out = {k: _replace_index(v, index_var, index) for k, v in value.items()}
        return value if all(out[k] is v for k, v in value.items()) else out
    return value


def _update_policy_schema() -> dict[str, Property]:
    def batch(what: str) -> Property:
        return Property("integer", f"The maximum number of resources to {what} at once.",
                        default=1, constraints=[Range(min=1)])

    pause = Property("number", "The number of seconds to wait between batches.",
                     default=0, constraints=[Range(min=0)])
    return {
        "rolling_update": Property("map", schema={
            "min_in_service": Property(
                "integer", "The minimum number of resources in service while rolling "
                "updates are being executed.", default=0, constraints=[Range(min=0)]),
            "max_batch_size": batch("replace"),
            "pause_time": Property("number", "The number of seconds to wait between "
                                   "batches of updates.", default=0,
                                   constraints=[Range(min=0)])}),
        "batch_create": Property("map", schema={"max_batch_size": batch("create"),
                                                "pause_time": pause}),
    }


def _batched(token: Token) -> bool:
    return isinstance(token, dict) and "steps" in token


def _definition_changed(old: Properties, new: Properties) -> bool:
    """Whether ``resource_def`` really changed. An absent ``properties``/``metadata`` may
    come back from stored properties as an empty map and from the template as None;
    both mean the same member definition."""
    def plain(rdef: Any) -> dict[str, Any]:
        return {k: v for k, v in dict(rdef or {}).items() if v not in (None, {}, [])}

    return plain(old["resource_def"]) != plain(new["resource_def"])


class ResourceGroup(NestedStackResource):
    type_name = "OS::Heat::ResourceGroup"
    support_status = SupportStatus(version="2014.1")
    description = ("Creates one or more identically configured nested resources.\n\n"
                   "In addition to the `refs` attribute, this resource implements "
                   "synthetic attributes that mirror those of the resources in the group.")
    #: Heat's update policy of the type (validated by the engine with the template)
    update_policy_schema: ClassVar[Mapping[str, Property]] = _update_policy_schema()
    properties_schema = {
        "count": Property("integer", "The number of resources to create.", default=1,
                          constraints=[Range(min=0)], update_allowed=True),
        "index_var": Property(
            "string", "A variable that this resource will use to replace with the current "
            "index of a given resource in the group. Can be used, for example, to customize "
            "the name property of grouped servers in order to differentiate them when "
            "listed with nova client.", default="%index%", constraints=[Length(min=3)],
            support_status=SupportStatus(version="2014.2")),
        "resource_def": Property(
            "map", "Resource definition for the resources in the group. The value of this "
            "property is the definition of a resource just as if it had been declared in "
            "the template itself.", required=True, update_allowed=True, schema={
                "type": Property("string", "The type of the resources in the group.",
                                 required=True),
                "properties": Property("map", "Property values for the resources in the "
                                       "group."),
                "metadata": Property("map", "Supplied metadata for the resources in the "
                                     "group.", support_status=SupportStatus(version="5.0.0")),
            }),
        "removal_policies": Property(
            "list", "Policies for removal of resources on update.", default=[],
            update_allowed=True, support_status=SupportStatus(version="2015.1"),
            schema=Property("map", "Policy to be processed when doing an update which "
                            "requires removal of specific resources.", schema={
                                "resource_list": Property(
                                    "list", "List of resources to be removed when doing an "
                                    "update which requires removal of specific resources.",
                                    default=[]),
                            })),
        "removal_policies_mode": Property(
            "string", 'How to handle changes to removal_policies on update. The default '
            '"append" mode appends to the internal list, "update" replaces it on update.',
            default="append", constraints=[AllowedValues(("append", "update"))],
            update_allowed=True, support_status=SupportStatus(version="10.0.0")),
    }
    attributes_schema = {
        "refs": Attribute("A list of resource IDs for the resources in the group.", "list"),
        "refs_map": Attribute("A map of resource names to IDs for the resources in the "
                              "group.", "map", SupportStatus(version="7.0.0")),
        "attributes": Attribute("A map of resource names to the specified attribute of each "
                                "individual resource. Requires heat_template_version: "
                                "2014-10-16.", "map", SupportStatus(version="2014.2")),
        "removed_rsrc_list": Attribute("A list of removed resource names.", "list",
                                       SupportStatus(version="7.0.0")),
    }

    # -- members ----------------------------------------------------------------------
    def _stored_list(self, key: str) -> list[str]:
        raw = self.data.get(key)
        return list(json.loads(raw)) if raw else []

    def member_names(self) -> list[str]:
        return self._stored_list(NAMES_KEY)

    def _update_skiplist(self, props: Properties) -> list[str]:
        """Add the members the removal policies name (by name or reference) to the names
        never used again ("update" mode starts the list afresh); returns the list."""
        current = self.member_names()
        refs = self._refs_by_name()
        skiplist = [] if props["removal_policies_mode"] == "update" \
            else self._stored_list(BLACKLIST_KEY)
        for policy in props["removal_policies"] or []:
            for item in policy.get("resource_list") or []:
                item = str(item)
                name = item if item in current else next(
                    (n for n, r in refs.items() if r == item), item)
                if name not in skiplist:
                    skiplist.append(name)
        self.data[BLACKLIST_KEY] = json.dumps(skiplist)
        return skiplist

    def implicit_requirements(self, peers: Peers) -> Iterable[str]:
        return member_requirements(self, peers, peers.value(self, "resource_def"))

    def _member_attribute_names(self, member_type: str) -> list[str]:
        """The attributes a member declares (a provider template's are its outputs);
        none for a type the stack cannot run, whose members fail on their own."""
        try:
            return list(self.runtime.plugin_class(member_type).attributes_schema)
        except KilnError:
            return []

    # -- the child template -------------------------------------------------------------
    def _count(self, props: Properties) -> int:
        """``count``, refused before a single member is built if the group alone would
        exceed ``max_resources_per_stack`` (the child stack counts its own resources again
        when it is made; 10^12 members would otherwise be built first). As in Heat,
        this fails the group's create (CREATE_FAILED), not the stack create request."""
        count = int(props["count"])
        limit = int(getattr(self.runtime.conf, "max_resources_per_stack", -1))
        if limit != -1 and count > limit:
            raise RequestLimitExceeded(
                "Request limit exceeded: Maximum resources per stack exceeded.")
        return count

    def _target(self, props: Properties) -> dict[str, Any]:
        """What a member's new definition is made from (JSON: it travels in tokens)."""
        return {"count": self._count(props), "index_var": props["index_var"],
                "resource_def": dict(props["resource_def"])}

    def _member(self, target: Mapping[str, Any], name: str) -> dict[str, Any]:
        rdef = target["resource_def"]
        member: dict[str, Any] = {"type": rdef["type"]}
        if rdef.get("properties"):
            member["properties"] = _replace_index(rdef["properties"], target["index_var"],
                                                  name)
        if rdef.get("metadata"):
            member["metadata"] = rdef["metadata"]
        return member

    def _assemble(self, members: list[tuple[str, Mapping[str, Any]]], names: list[str],
                  member_type: str) -> dict[str, Any]:
        """The child template of these members; the member order of the attributes is
        the order of ``names`` (remembered, so attributes match the stored outputs)."""
        resources = {name: dict(snippet) for name, snippet in members}
        order = [n for n in names if n in resources]
        order += [n for n in resources if n not in order]
        self.data[NAMES_KEY] = json.dumps(order)
        outputs: dict[str, Any] = {REF_OUTPUT: {"value": [{"get_resource": n} for n in order]}}
        for attr in self._member_attribute_names(member_type):
            outputs[f"attr.{attr}"] = {"value": [{"get_attr": [n, attr]} for n in order]}
        return {"heat_template_version": "2015-04-30", "resources": resources,
                "outputs": outputs}

    def child_template(self, properties: Properties) -> Mapping[str, Any]:
        target = self._target(properties)
        names = self._names(target, int(target["count"]), self._update_skiplist(properties))
        return self._assemble([(n, self._member(target, n)) for n in names], names,
                              self._member_type(target))

    # what a group of another shape (a deployment group: members named by a map's keys)
    # overrides to share the batched create and rolling update below
    def _names(self, target: Mapping[str, Any], capacity: int,
               skipped: Collection[str]) -> list[str]:
        """The names of the first ``capacity`` members."""
        return member_names(capacity, skipped)

    def _member_type(self, target: Mapping[str, Any]) -> str:
        return str(target["resource_def"]["type"])

    def _rolls(self, old: Properties, new: Properties, prop_diff: Mapping[str, Any]) -> bool:
        """Whether an update with ``rolling_update`` goes in batches (Heat: only when the
        member definition changed)."""
        return "resource_def" in prop_diff and _definition_changed(old, new)

    # -- update_policy: batches -----------------------------------------------------------
    def _policy(self, key: str) -> Mapping[str, Any] | None:
        """``update_policy[key]`` with its defaults, or None when the template has none."""
        schema = type(self).update_policy_schema
        raw = self.definition.update_policy
        if key not in schema or not raw:
            return None
        resolved = self.runtime.resolve(raw)
        if not isinstance(resolved, Mapping) or resolved.get(key) is None:
            return None
        policy: Mapping[str, Any] = Properties(schema, resolved)[key]
        return policy

    def _rollout(self, props: Properties, steps: list[Step], pause: float) -> dict[str, Any]:
        """The token of a batched action (the child's id is filled in by the caller)."""
        try:
            minutes = step_timeout(self.runtime.nested.action_timeout(self), len(steps),
                                   float(pause))
        except ValueError as exc:
            raise ResourceFailure(str(exc), exc_type="ValueError") from None
        return {"stack_id": self.child_id, "steps": [list(s) for s in steps], "started": 0,
                "running": False, "pause": float(pause), "resume_at": None,
                "timeout_mins": minutes, "target": self._target(props)}

    async def handle_create(self) -> Token:
        policy = self._policy("batch_create")
        props = self.properties
        if policy is None or not self._count(props):
            return await super().handle_create()
        self._update_skiplist(props)
        token = self._rollout(props, batch_steps(self._count(props), 0,
                                                 policy["max_batch_size"], 0),
                              policy["pause_time"])
        self.resource_id = await self.runtime.nested.create(
            self, template=EMPTY_CHILD, parameters={}, files=self.child_files(),
            timeout_mins=self.child_timeout())
        return {**token, "stack_id": self.resource_id, "running": True}

    async def check_create_complete(self, token: Token) -> bool:
        if _batched(token):
            return await self._advance(token)
        return await super().check_create_complete(token)

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        old = self.properties   # read before the definition changes under it
        self.definition = new_definition
        child = self.child_id
        policy = self._policy("rolling_update")
        if (child is None or policy is None
                or not self._rolls(old, new_properties, prop_diff)):
            return await super().handle_update(new_definition, new_properties, prop_diff)
        skiplist = set(self._update_skiplist(new_properties))
        members = await self.runtime.nested.members(child)
        current = sum(1 for m in members if m.failed or m.name not in skiplist)
        steps = batch_steps(self._count(new_properties), current,
                            policy["max_batch_size"], policy.get("min_in_service", 0))
        return self._rollout(new_properties, steps, policy["pause_time"])

    async def check_update_complete(self, token: Token) -> bool:
        if _batched(token):
            return await self._advance(token)
        return await super().check_update_complete(token)

    def poll_delay(self, token: Token) -> float | None:
        if _batched(token) and token["resume_at"] is not None:
            return max(float(token["resume_at"]) - self.runtime.now(), 0.0)
        return None

    async def _advance(self, token: dict[str, Any]) -> bool:
        """Wait for the running step; then pause (returning False until the deadline) or
        start the next step, until none is left."""
        while True:
            if token["running"]:
                await self._finish(token)
                token = self.next_token(token, running=False)
            if not token["steps"]:
                return True
            if token["started"] and token["pause"] > 0:
                if token["resume_at"] is None:
                    token = self.next_token(token,
                                            resume_at=self.runtime.now() + token["pause"])
                    await self.runtime.nested.checkpoint(self, token)
                if self.runtime.now() < token["resume_at"]:
                    return False
            token = await self._start_step(token)

    async def _start_step(self, token: dict[str, Any]) -> dict[str, Any]:
        """Update the child to the next step's members, read from the child as it is;
        the token that records it (handed on and persisted)."""
        child = token["stack_id"]
        first, *rest = token["steps"]
        step = Step(*first)
        target = token["target"]
        skiplist = set(self._stored_list(BLACKLIST_KEY))
        existing = [(m.name, m.snippet) for m in await self.runtime.nested.members(child)
                    if not m.failed and m.snippet is not None and m.name not in skiplist]
        names = self._names(target, step.capacity, skiplist)
        members = step_members(existing, names, target=int(target["count"]), step=step,
                               new=lambda name: self._member(target, name))
        template = self._assemble(members, names, self._member_type(target))
        await self.runtime.nested.update(self, child, template=template, parameters={},
                                         files=self.child_files(),
                                         timeout_mins=token["timeout_mins"])
        token = self.next_token(token, steps=rest, started=token["started"] + 1,
                                running=True, resume_at=None)
        await self.runtime.nested.checkpoint(self, token)
        return token

    # -- attributes -------------------------------------------------------------------
    def _refs(self) -> list[Any]:
        return list(self.nested_outputs().get(REF_OUTPUT) or [])

    def _refs_by_name(self) -> dict[str, Any]:
        return dict(zip(self.member_names(), self._refs(), strict=False))

    def _member_values(self, attr: str) -> list[Any]:
        outputs = self.nested_outputs()
        key = f"attr.{attr}"
        if not outputs:
            return []  # no child stack yet: nothing to report, as Heat's None values
        if key not in outputs:
            raise InvalidTemplateAttribute(
                f"The Referenced Attribute ({self.name} {attr}) is incorrect.")
        return list(outputs[key] or [])

    def get_attribute(self, name: str, *path: Any) -> Any:
        names = self.member_names()
        if name == "refs":
            return select_path(self._refs(), path)
        if name == "refs_map":
            return select_path(self._refs_by_name(), path)
        if name == "removed_rsrc_list":
            return select_path(self._stored_list(BLACKLIST_KEY), path)
        if name == "attributes":
            if not path:
                raise InvalidTemplateAttribute(
                    f"The Referenced Attribute ({self.name} attributes) is incorrect.")
            by_name = dict(zip(names, self._member_values(str(path[0])), strict=False))
            return select_path(by_name, path[1:]) if len(path) > 1 else by_name
        if name == "show":
            return None
        if name.startswith("resource."):
            member, _, attr = name[len("resource."):].partition(".")
            if member not in names:
                raise InvalidTemplateAttribute(
                    f"Member '{member}' not found in group resource '{self.name}'.")
            index = names.index(member)
            if not attr and path:
                attr, path = str(path[0]), path[1:]
            if not attr:
                return self._refs()[index] if index < len(self._refs()) else None
            values = self._member_values(attr)
            return select_path(values[index] if index < len(values) else None, path)
        values = self._member_values(name)
        return [select_path(v, path) for v in values] if path else values

    def all_attributes(self) -> dict[str, Any]:
        return {"refs": self._refs(), "refs_map": self._refs_by_name(),
                "removed_rsrc_list": self._stored_list(BLACKLIST_KEY)}
