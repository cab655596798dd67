"""One stack's view of a template: parameters bound, conditions decided, lazy resolution.

Resolution is lazy and memoised: a function node that reads no resource state (its
subtree has no get_resource/get_attr/Ref/...) is resolved once for the life of the
BoundTemplate; nodes that do are resolved again on every call, because resource state
changes during an action. Memoised values are shared: treat resolved data as
read-only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kiln.errors import KilnError
from kiln.template import dependencies as deps_mod
from kiln.template.checks import parse_noted, parse_tree, validate_tree
from kiln.template.conditions import Conditions
from kiln.template.definitions import (
    NO_NAMES,
    ResourceDefinition,
    ResourceResolver,
    StackIdentity,
    name_set,
)
from kiln.template.errors import StackValidationFailed, reference_error
from kiln.template.function import OMITTED, Function, touches_resources
from kiln.template.limits import DEFAULT_MAX_OUTPUT
from kiln.template.outputs import NO_DESCRIPTION, OutputResult, error_text
from kiln.template.versions import TemplateVersion
from kiln.template.yaql_function import DEFAULT_TIMEOUT as DEFAULT_YAQL_TIMEOUT

if TYPE_CHECKING:
    from kiln.template.template import ResourceSnippet, Template


class NullResolver:
    """Resources that do not exist yet (validation, preview): get_resource gives the
    name, attributes are None — what Heat shows before a resource is created."""

    def reference(self, name: str) -> Any:
        return name

    def attribute(self, name: str, attr: str, path: Sequence[Any]) -> Any:
        return None

    def all_attributes(self, name: str) -> Mapping[str, Any]:
        return {}

    def resource_type(self, name: str) -> str:
        return ""

    def facade(self, kind: str) -> Any:
        return None

    def availability_zones(self) -> list[str]:
        return []


_NULL_IDENTITY = StackIdentity(stack_name="", stack_id="", project_id="")

#: the plugin whose validation Heat 27 skips at create (its ``validate`` does nothing):
#: functions in its definition get only the parse checks
PLACEHOLDER_TYPE = "OS::Heat::None"


class BoundTemplate:
    """Template + environment + parameters + resolver: the ResolveContext of a stack."""

    def __init__(self, template: Template, *, environment: Any,
                 user_params: Mapping[str, Any], identity: StackIdentity | None,
                 resolver: ResourceResolver | None, validate_params: bool | None = True,
                 yaql_limits: tuple[int, int] = (200, 10000), context: Any = None,
                 max_output: int = DEFAULT_MAX_OUTPUT,
                 yaql_timeout: float = DEFAULT_YAQL_TIMEOUT) -> None:
        from kiln.template.parameters import bind_parameters

        self.template = template
        self._environment = environment
        self._identity = identity or _NULL_IDENTITY
        self._resolver: ResourceResolver = resolver or NullResolver()
        self._yaql_limits = yaql_limits
        self._max_output = max_output
        self._yaql_timeout = yaql_timeout
        self.parameters = bind_parameters(
            template.parameter_schemas, user_params, environment, identity,
            family=template.version.family, validate=validate_params, context=context)
        self._memo: dict[int, Any] = {}
        self._conditions = Conditions(
            template.condition_definitions,
            template.version.available_functions(conditions=True))
        self._enabled: dict[str, bool] = {}
        self._definitions: dict[str, ResourceDefinition] | None = None
        self._parsed = False
        self._outputs_parsed: set[str] = set()
        self._outputs_checked: set[str] = set()
        #: read by get_attr's reference check: attribute names are not checked for
        #: the resource being defined (see _unvalidated)
        self.skip_attribute_checks = False

    # -- ResolveContext -----------------------------------------------------------------

    @property
    def version(self) -> TemplateVersion:
        return self.template.version

    @property
    def resolver(self) -> ResourceResolver:
        return self._resolver

    @property
    def identity(self) -> StackIdentity:
        return self._identity

    @property
    def files(self) -> Mapping[str, str]:
        return self.template.files

    @property
    def mappings(self) -> Mapping[str, Any]:
        return self.template.mappings

    @property
    def yaql_limits(self) -> tuple[int, int]:
        return self._yaql_limits

    @property
    def max_output(self) -> int:
        return self._max_output

    @property
    def yaql_timeout(self) -> float:
        return self._yaql_timeout

    def resolve(self, node: Any, nullable: bool = False) -> Any:
        t = type(node)
        if t is dict:
            out = {}
            for k, v in node.items():
                tv = type(v)
                if tv is dict or tv is list or isinstance(v, Function):
                    v = self.resolve(v, True)
                    if v is OMITTED:
                        continue
                out[k] = v
            return out
        if t is list:
            items = []
            for v in node:
                tv = type(v)
                if tv is dict or tv is list or isinstance(v, Function):
                    v = self.resolve(v, True)
                    if v is OMITTED:
                        continue
                items.append(v)
            return items
        if isinstance(node, Function):
            if node.touches:
                value = node.result(self)
            else:
                key = id(node)
                try:
                    value = self._memo[key]
                except KeyError:
                    value = self._memo[key] = node.result(self)
            if value is OMITTED and not nullable:
                return None
            return value
        return node

    def parameter(self, name: str) -> Any:
        return self.parameters[name]

    def parameter_names(self) -> list[str]:
        return list(self.parameters)

    def condition(self, name: Any) -> bool:
        return self._conditions.is_enabled(name, self.resolve)

    def resource_enabled(self, name: str) -> bool:
        """False if the resource's condition is false; KeyError if never declared."""
        enabled = self._enabled.get(name)
        if enabled is not None:
            return enabled
        snippet = self.template.resources[name]
        self._enabled[name] = enabled = self._condition_at(
            snippet.condition, (self.template.keys.resources, name,
                                self.template.keys.condition))
        return enabled

    def _condition_at(self, tree: Any, path: tuple[str, ...]) -> bool:
        if tree is None:
            return True
        try:
            return self._conditions.is_enabled(self.resolve(tree), self.resolve)
        except ValueError as exc:
            raise StackValidationFailed(str(exc), path=path) from None

    # -- the stack's view -----------------------------------------------------------------

    @property
    def conditions(self) -> Mapping[str, bool]:
        return self._conditions.all(self.resolve)

    def enabled_resource_names(self) -> list[str]:
        return [n for n in self.template.resources if self.resource_enabled(n)]

    def validate(self, *, deep: bool = False, placeholders: bool = True) -> None:
        """What Heat's stack validation checks of the template (not property values):
        conditions, function arguments (see :mod:`kiln.template.checks`), references
        to missing or disabled resources, deletion policies, output references,
        dependency cycles.

        ``placeholders``: also run the function checks of ``OS::Heat::None`` resources,
        as Heat's POST /validate does; a create, update or preview does not (pass
        False there). ``deep`` also resolves every enabled resource's properties,
        metadata and update policy (an ``OS::Heat::None``'s metadata only: Heat never
        resolves the rest), with this BoundTemplate's resolver (a NullResolver when
        nothing exists yet), so function errors that Heat only reports at create time
        (``"list_join" delimiter must be a string``) are found without creating
        anything; it implies ``placeholders=False``. Property *schemas* are the
        resource layer's to check.
        """
        self._validate()
        if placeholders and not deep:
            self._check_placeholders()
        if deep:
            for name, definition in self.resource_definitions().items():
                trees = ((definition.metadata,)
                         if self._placeholder(self.template.resources[name])
                         else (definition.properties, definition.metadata,
                               definition.update_policy))
                for tree in trees:
                    self.resolve(tree)

    def _validate(self) -> None:
        # a condition is evaluated only where it is used (a resource's or output's
        # condition, an ``if``): an unused one naming an undeclared parameter, an
        # undefined condition or itself is never looked at, as in Heat
        self._conditions.check_types()
        definitions = self.resource_definitions()
        for name, output in self.template.outputs.items():
            path = (self.template.keys.outputs, name, self.template.keys.condition)
            if self._condition_at(output.condition, path):
                _check_references(output.value, self)
        # a resolver that knows plugins names them as Heat does (``plugin_class_name``)
        deps_mod.check_acyclic({n: d.depends_on for n, d in definitions.items()},
                               getattr(self._resolver, "plugin_class_name", None))

    def resource_definitions(self) -> dict[str, ResourceDefinition]:
        """Definitions of the enabled resources, in declaration order. The first call
        finishes Heat's parse of the template for this stack (``if`` conditions and
        branches of every resource, enabled outputs) and the function checks of the
        resources that exist, so every tree handed out has been checked."""
        if self._definitions is None:
            self._parse()
            self._definitions = {
                name: self._definition(snippet)
                for name, snippet in self.template.resources.items()
                if self.resource_enabled(name)}
        return self._definitions

    def _parse(self) -> None:
        """Heat's parse of the template for this stack, then its validation of the
        functions of what exists (see kiln.template.checks); once."""
        if self._parsed:
            return
        template = self.template
        for snippet in template.resources.values():
            if snippet.noted:
                parse_noted(snippet.noted, template, self)
        outputs = [name for name in template.outputs if self._output_enabled(name)]
        for name in outputs:
            self._parse_output(name)
        for name, snippet in template.resources.items():
            if (snippet.noted and self.resource_enabled(name)
                    and not self._external(snippet) and not self._placeholder(snippet)):
                self._validate_resource(snippet)
        for name in outputs:
            self._check_output(name)
        self._parsed = True

    def _output_enabled(self, name: str) -> bool:
        output = self.template.outputs[name]
        path = (self.template.keys.outputs, name, self.template.keys.condition)
        return self._condition_at(output.condition, path)

    def _parse_output(self, name: str) -> None:
        if name in self._outputs_parsed:
            return
        output = self.template.outputs[name]
        if output.checked:
            parse_noted(output.noted, self.template, self)
        else:
            parse_tree(output.value, self.template, self)
        self._outputs_parsed.add(name)

    def _check_output(self, name: str) -> None:
        """Parse and validate an enabled output's functions (once)."""
        if name in self._outputs_checked:
            return
        output = self.template.outputs[name]
        self._parse_output(name)
        if output.noted or not output.checked:
            keys = self.template.keys
            # Heat names a list value's items ``Value[0]`` whatever the template format
            section = "Value" if type(output.value) is list else keys.value
            validate_tree(output.value, (keys.outputs, name, section), self.template, self)
        self._outputs_checked.add(name)

    def _validate_resource(self, snippet: ResourceSnippet) -> None:
        keys = self.template.keys
        for key, tree in ((keys.properties, snippet.properties),
                          (keys.metadata, snippet.metadata),
                          (keys.deletion_policy, snippet.deletion_policy),
                          (keys.update_policy, snippet.update_policy)):
            if tree is not None:
                validate_tree(tree, (keys.resources, snippet.name, key), self.template, self)

    def _check_placeholders(self) -> None:
        """The checks a create skips for OS::Heat::None and Heat's /validate makes:
        its functions' validation and its get_attr attribute names."""
        attributes = getattr(self._resolver, "has_attribute", None) is not None
        for name, snippet in self.template.resources.items():
            if not (snippet.noted or (attributes and snippet.reference_nodes)):
                continue
            if (self.resource_enabled(name) and not self._external(snippet)
                    and self._placeholder(snippet)):
                if snippet.noted:
                    self._validate_resource(snippet)
                _references(list(snippet.reference_nodes), self)

    def _external(self, snippet: ResourceSnippet) -> bool:
        """Heat validates an adopted (``external_id``) resource against the cloud, not
        its definition's functions."""
        return snippet.external_id is not None and bool(self.resolve(snippet.external_id))

    def _placeholder(self, snippet: ResourceSnippet) -> bool:
        """Whether the resource's plugin skips Heat's definition validation: a
        resolver may say (``validates_definition(name)``); otherwise the type, mapped
        through the environment's registry, is OS::Heat::None."""
        validates = getattr(self._resolver, "validates_definition", None)
        if validates is not None:
            return not validates(snippet.name)
        rtype = snippet.type
        if not isinstance(rtype, str):
            return False
        registry = getattr(self._environment, "registry", None)
        if registry is not None:
            rtype = registry.resolve(rtype, snippet.name)
        return bool(rtype == PLACEHOLDER_TYPE)

    def _definition(self, snippet: ResourceSnippet) -> ResourceDefinition:
        name = snippet.name
        keys = self.template.keys
        static = snippet.static_refs
        if static is not None and self._static_refs_ok(snippet, *static):
            implied = static[0]
        else:  # the walk raises Heat's error for the bad reference, or handles `if`
            self.skip_attribute_checks = self._unvalidated(snippet)
            try:
                implied = frozenset(_references(list(snippet.reference_nodes), self))
            finally:
                self.skip_attribute_checks = False
        explicit = []
        for dep in snippet.depends_on:
            if dep not in self.template.resources:
                raise reference_error(dep, name, (keys.resources, name, keys.depends_on),
                                      known=self.template.resources)
            if self.resource_enabled(dep):
                explicit.append(dep)
        depends = name_set(implied) if not explicit else frozenset(explicit) | implied
        external = snippet.external_id
        if external is not None and touches_resources(external):
            # Heat reads an external_id once, when it makes the resource, before any
            # resource exists: a sibling's reference is its name, an attribute nothing
            external = self.resolve(external)
        if external is not None and self.resolve(external):
            if explicit:
                raise StackValidationFailed(
                    f"Invalid dependency with external {snippet.type} resource: "
                    f"{self.resolve(external)}", path=(keys.resources, name),
                    show_path=False)
            depends = NO_NAMES
        return ResourceDefinition(
            name=name, type=snippet.type, properties=snippet.properties,
            metadata=snippet.metadata, depends_on=depends,
            deletion_policy=self._deletion_policy(snippet),
            update_policy=snippet.update_policy, external_id=external,
            condition=snippet.condition if isinstance(snippet.condition, str) else None,
            raw=snippet.raw)

    def _static_refs_ok(self, snippet: ResourceSnippet, names: frozenset[str],
                        attrs: tuple[tuple[str, str], ...]) -> bool:
        resources = self.template.resources
        if not all(n in resources and self.resource_enabled(n) for n in names):
            return False
        has_attribute = getattr(self._resolver, "has_attribute", None)
        if has_attribute is None or not attrs or self._unvalidated(snippet):
            return True
        return all(has_attribute(n, a) for n, a in attrs)

    def _unvalidated(self, snippet: ResourceSnippet) -> bool:
        """Heat checks ``get_attr`` attribute names when it validates a resource, which
        it does not for an external one nor, at create, for an OS::Heat::None (their
        references must still exist)."""
        return self._external(snippet) or self._placeholder(snippet)

    def _deletion_policy(self, snippet: ResourceSnippet) -> str:
        if snippet.deletion_policy is None:
            return "Delete"
        policy = self.resolve(snippet.deletion_policy)
        policies = self.version.deletion_policies
        if not isinstance(policy, str) or policy not in policies:
            raise StackValidationFailed(
                f'Invalid deletion policy "{policy}"',
                path=(self.template.keys.resources, snippet.name,
                      self.template.keys.deletion_policy), show_path=False)
        return policies[policy]

    def dependencies(self) -> Mapping[str, frozenset[str]]:
        return {n: d.depends_on for n, d in self.resource_definitions().items()}

    def outputs(self) -> dict[str, OutputResult]:
        return {name: self.output(name) for name in self.template.outputs}

    def output(self, name: str) -> OutputResult:
        """One output; a failure becomes its ``error`` instead of propagating."""
        snippet = self.template.outputs[name]
        desc = NO_DESCRIPTION if snippet.description is None else str(snippet.description)
        try:
            path = (self.template.keys.outputs, name, self.template.keys.condition)
            if not self._condition_at(snippet.condition, path):
                return OutputResult(name=name, description=desc)
            self._check_output(name)
            value = self.resolve(snippet.value)
        except KilnError as exc:
            return OutputResult(name=name, error=error_text(exc), description=desc,
                                error_type=exc.error_type)
        return OutputResult(name=name, value=value, description=desc)


def _references(tree: Any, ctx: BoundTemplate) -> set[str]:
    """Check every reference in ``tree`` (Heat's messages) and return the names."""
    names: set[str] = set()
    stack: list[Any] = [tree]
    while stack:
        item = stack.pop()
        t = type(item)
        if t is dict:
            stack.extend(item.values())
        elif t is list:
            stack.extend(item)
        elif isinstance(item, Function) and item.walk:
            item.check_references(ctx)
            names.update(item.dependencies(ctx))
            stack.append(item.dependency_args(ctx))
    return names


def _check_references(tree: Any, ctx: BoundTemplate) -> None:
    _references(tree, ctx)
