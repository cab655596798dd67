"""Resources that are a whole stack: the base of provider templates, OS::Heat::Stack,
ResourceGroup, ResourceChain and AWS::CloudFormation::Stack.

A nested-stack plugin only says *what* child stack it wants (:meth:`child_template`,
:meth:`child_parameters`); creating, updating and deleting the child, and waiting for it,
go through ``runtime.nested`` (:class:`NestedStackOps`), which the engine implements in
the same process — no RPC, no polling: ``wait`` returns when the child's action ends.

The child's outputs are copied into the resource's persisted ``data`` when an action
completes, so attributes (``get_attr``) are answered synchronously and survive restarts.

A plugin that drives its child through several actions in one of its own (a
ResourceGroup's batches) reads the child's members between steps (``members``) and
records each step as its new progress token (``checkpoint``), so a resumed action goes
on from the last step rather than the first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from kiln.errors import KilnError, format_path
from kiln.resources.base import Properties, Resource, ResourceFailure, Token
from kiln.template.definitions import ResourceDefinition

_TYPED_REASON = re.compile(r"^(?P<kind>[A-Za-z_][\w.]*): resources(?P<rest>[.\[].*)$", re.S)
_ACTION_PREFIX = re.compile(r"^Resource [A-Z]+ failed: ")

OUTPUTS_KEY = "nested_outputs"
#: values of the child's resources that the parent's template asks for by
#: ``resource.<name>.<attribute>`` (a provider template's), see ``member_attributes``
MEMBER_ATTRIBUTES_KEY = "nested_member_attributes"
#: the child's outputs that failed to resolve: key -> the child's ``output_error``
OUTPUT_ERRORS_KEY = "nested_output_errors"
NAME_KEY = "nested_stack_name"


@dataclass(frozen=True)
class ChildMember:
    """One resource of a child stack, as a group sees its members."""

    name: str
    #: its last action failed (a group counts it, but does not keep its definition)
    failed: bool
    #: its entry in the child's current template (None if the template no longer has it)
    snippet: Mapping[str, Any] | None


class NestedStackOps(Protocol):
    """Child-stack operations the engine offers nested-stack plugins."""

    async def create(self, parent: Resource, *, template: Mapping[str, Any],
                     parameters: Mapping[str, Any], files: Mapping[str, str] | None = None,
                     timeout_mins: int | None = None) -> str:
        """Store and start the child stack; returns its id at once and records its name
        in ``parent.data[NAME_KEY]`` (the ARN needs it)."""

    async def update(self, parent: Resource, stack_id: str, *, template: Mapping[str, Any],
                     parameters: Mapping[str, Any], files: Mapping[str, str] | None = None,
                     timeout_mins: int | None = None) -> None: ...

    async def delete(self, stack_id: str) -> bool:
        """Start deleting the child; False if it does not exist (nothing to wait for)."""

    async def action(self, stack_id: str, action: str) -> None:
        """Start SUSPEND / RESUME / CHECK on the child."""

    async def wait(self, stack_id: str) -> tuple[str, str, str]:
        """Wait for the child's running action; its (action, status, reason)."""

    async def outputs(self, stack_id: str) -> dict[str, Any]:
        """The child's outputs by key (values; errors become None)."""

    async def output_errors(self, stack_id: str) -> dict[str, str]:
        """The child's outputs that failed, by key: their ``output_error``."""

    async def member_attributes(self, parent: Resource, stack_id: str) -> dict[str, Any]:
        """What ``parent``'s stack asks of the child's resources through ``parent``
        (``get_attr: [parent, "resource.<name>.<attribute>"]``): ``{"members": the
        child's resource names, "values": {"<name>.<attribute>" (or ``<name>`` alone: its
        reference): the value now}}``; an attribute the resource does not have is left
        out. Empty when nothing is asked."""

    async def members(self, stack_id: str) -> list[ChildMember]:
        """The child's resources, failed ones first, then oldest first, then by name
        (the order Heat's group inspector lists them in)."""

    async def checkpoint(self, parent: Resource, token: Token) -> None:
        """Persist *token* (and ``parent.data``) as the progress of ``parent``'s running
        action, replacing the token its handle returned."""

    def action_timeout(self, parent: Resource) -> float:
        """Seconds the action running on ``parent``'s stack may take (its
        ``timeout_mins``, else ``stack_action_timeout``)."""


def nested_reason(resource_name: str, child_reason: str) -> str:
    """Heat's parent-resource reason for a failed child: the child's failing resource
    path prefixed with the parent resource (``ValueError: resources.bad.resources.t:
    ...``)."""
    reason = _ACTION_PREFIX.sub("", child_reason, count=1)
    match = _TYPED_REASON.match(reason)
    if match:
        where = format_path(("resources", resource_name))
        return f"{match['kind']}: {where}.resources{match['rest']}"
    return f"Error: {format_path(('resources', resource_name))}: {reason}"


class NestedFailure(ResourceFailure):
    """The child stack failed; ``status_reason`` is already in Heat's full form."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    def status_reason(self, resource_name: str) -> str:
        return self.reason


class NestedOutputError(KilnError):
    """An output of the child stack failed to resolve (Heat's TemplateOutputError)."""

    heat_type = "TemplateOutputError"


class NestedStackResource(Resource):
    """A resource backed by a child stack in the same engine."""

    #: tells the engine not to hold a concurrency slot while waiting for the child
    is_nested_stack: ClassVar[bool] = True
    requires_deferred_auth = True  # Heat's StackResource
    #: a create checks the services of the child's resources against the caller's
    #: catalog before anything is stored (Heat does for every nested stack; here only
    #: the plugins that set it: for all, a stack created through the CFN API with an
    #: EC2 credential was refused for a nested OS::Keystone::Role, not looked into yet)
    checks_child_services: ClassVar[bool] = False

    # -- what the child stack is -----------------------------------------------------
    def child_template(self, properties: Properties) -> Mapping[str, Any]:
        raise NotImplementedError

    def child_parameters(self, properties: Properties) -> Mapping[str, Any]:
        return {}

    def child_files(self) -> Mapping[str, str] | None:
        return None

    def child_timeout(self) -> int | None:
        return None

    # -- state ----------------------------------------------------------------------
    @property
    def child_id(self) -> str | None:
        return self.resource_id

    def nested_outputs(self) -> dict[str, Any]:
        raw = self.data.get(OUTPUTS_KEY)
        return dict(json.loads(raw)) if raw else {}

    def nested_output(self, key: str) -> Any:
        """One child output as an attribute: a failed one raises Heat's ``Error in
        <resource> output <key>: <the child's output_error>``, which becomes the
        parent output's own ``output_error``."""
        raw = self.data.get(OUTPUT_ERRORS_KEY)
        errors = json.loads(raw) if raw else {}
        if key in errors:
            raise NestedOutputError(f"Error in {self.name} output {key}: {errors[key]}")
        return self.nested_outputs().get(key)

    async def _finish(self, token: Token) -> bool:
        child = self.child_id
        if child is None:
            return True
        action, status, reason = await self.runtime.nested.wait(child)
        if status == "FAILED":
            raise NestedFailure(nested_reason(self.name, reason))
        if action != "DELETE":
            outputs = await self.runtime.nested.outputs(child)
            self.data[OUTPUTS_KEY] = json.dumps(outputs, sort_keys=True, default=str)
            errors = await self.runtime.nested.output_errors(child)
            if errors:
                self.data[OUTPUT_ERRORS_KEY] = json.dumps(errors, sort_keys=True)
            else:
                self.data.pop(OUTPUT_ERRORS_KEY, None)
            await self.remember_members(child)
        return True

    async def remember_members(self, child: str) -> None:
        """Keep what the child's resources will be asked for once the child is done
        (a plugin that answers ``resource.<name>.<attribute>`` from them overrides)."""

    # -- lifecycle --------------------------------------------------------------------
    async def handle_create(self) -> Token:
        props = self.properties
        self.resource_id = await self.runtime.nested.create(
            self, template=self.child_template(props), parameters=self.child_parameters(props),
            files=self.child_files(), timeout_mins=self.child_timeout())
        return {"stack_id": self.resource_id}

    async def check_create_complete(self, token: Token) -> bool:
        return await self._finish(token)

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        child = self.child_id
        if child is None:
            return None
        self.definition = new_definition
        await self.runtime.nested.update(
            self, child, template=self.child_template(new_properties),
            parameters=self.child_parameters(new_properties), files=self.child_files(),
            timeout_mins=self.child_timeout())
        return {"stack_id": child}

    async def check_update_complete(self, token: Token) -> bool:
        return await self._finish(token)

    async def handle_delete(self) -> Token:
        child = self.child_id
        if child is None or not await self.runtime.nested.delete(child):
            return None
        return {"stack_id": child}

    async def check_delete_complete(self, token: Token) -> bool:
        if token is None:
            return True
        return await self._finish(token)

    async def _simple(self, action: str) -> Token:
        child = self.child_id
        if child is None:
            return None
        await self.runtime.nested.action(child, action)
        return {"stack_id": child}

    async def handle_suspend(self) -> Token:
        return await self._simple("SUSPEND")

    async def check_suspend_complete(self, token: Token) -> bool:
        return await self._finish(token)

    async def handle_resume(self) -> Token:
        return await self._simple("RESUME")

    async def check_resume_complete(self, token: Token) -> bool:
        return await self._finish(token)

    async def handle_check(self) -> Token:
        return await self._simple("CHECK")

    async def check_check_complete(self, token: Token) -> bool:
        return await self._finish(token)

    # -- references -------------------------------------------------------------------
    def stack_arn(self) -> str | None:
        """Heat's identifier ARN of the child stack."""
        child = self.child_id
        if child is None:
            return None
        name = self.data.get(NAME_KEY, "")
        return f"arn:openstack:heat::{self.runtime.project_id}:stacks/{name}/{child}"
