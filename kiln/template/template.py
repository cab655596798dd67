"""A parsed template (:class:`Template`) and its entry point :func:`load_template`.

Loading does, in Heat's order: size limit, JSON/YAML, version, top-level sections,
the shape of every resource and output, parameter declarations (T2's
:mod:`kiln.template.parameters`), then builds the immutable function tree of every
resource, output and condition once and checks each function's arguments. Binding to a
stack (parameters, environment, resolver) is :meth:`Template.bind`, in
:mod:`kiln.template.bound`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kiln.errors import PathElement, did_you_mean
from kiln.template import parser
from kiln.template.checks import validate_tree
from kiln.template.definitions import NO_NAMES, ResourceResolver, StackIdentity
from kiln.template.errors import StackValidationFailed, section_error
from kiln.template.function import Function
from kiln.template.hot.resources import STATIC_REFERENCES
from kiln.template.limits import DEFAULT_MAX_OUTPUT
from kiln.template.versions import REGISTRY, TemplateVersion
from kiln.template.yaql_function import DEFAULT_TIMEOUT as DEFAULT_YAQL_TIMEOUT

if TYPE_CHECKING:
    from kiln.template.bound import BoundTemplate


@dataclass(frozen=True)
class Keys:
    """Section and key names of one family (HOT lower_case, CFN CamelCase)."""

    resources: str
    outputs: str
    parameters: str
    conditions: str
    description: str
    parameter_groups: str | None
    mappings: str | None
    type: str
    properties: str
    metadata: str
    depends_on: str
    deletion_policy: str
    update_policy: str
    res_description: str
    external_id: str | None
    condition: str
    value: str
    out_description: str


HOT_KEYS = Keys("resources", "outputs", "parameters", "conditions", "description",
                "parameter_groups", None, "type", "properties", "metadata", "depends_on",
                "deletion_policy", "update_policy", "description", "external_id",
                "condition", "value", "description")
#: ``ExternalId`` is Kiln's: HOT's ``external_id`` in a CFN template, honoured only in a
#: template Kiln wrote (see :data:`INTERNAL_KEYS`)
CFN_KEYS = Keys("Resources", "Outputs", "Parameters", "Conditions", "Description",
                None, "Mappings", "Type", "Properties", "Metadata", "DependsOn",
                "DeletionPolicy", "UpdatePolicy", "Description", "ExternalId", "Condition",
                "Value", "Description")


#: Whether a CFN template's resources may carry ``ExternalId``: only in a template Kiln
#: wrote, i.e. one an IMPORT change set marked or one read back from the database. In a
#: user's CFN template it is an unknown key, which Heat ignores in a CFN resource: the
#: key is dropped (the stack stores the template without it) and the resource is made.
INTERNAL_KEYS: ContextVar[bool] = ContextVar("kiln_template_internal_keys", default=False)


@contextmanager
def internal_keys() -> Iterator[None]:
    """Parse templates Kiln wrote (see :data:`INTERNAL_KEYS`) within the block."""
    token = INTERNAL_KEYS.set(True)
    try:
        yield
    finally:
        INTERNAL_KEYS.reset(token)


def _without_external_ids(data: dict[str, Any], keys: Keys) -> dict[str, Any]:
    """A user's CFN template without the ``ExternalId`` Heat would ignore (``data``
    itself when no resource has one)."""
    resources = data.get(keys.resources)
    if not isinstance(resources, dict) or not any(
            isinstance(r, dict) and "ExternalId" in r for r in resources.values()):
        return data
    kept = {name: ({k: v for k, v in r.items() if k != "ExternalId"}
                   if isinstance(r, dict) else r) for name, r in resources.items()}
    return {**data, keys.resources: kept}


@dataclass(frozen=True, slots=True)
class ResourceSnippet:
    """One resource as parsed (function trees, not yet resolved)."""

    name: str
    type: Any
    properties: Any
    metadata: Any
    depends_on: tuple[str, ...]
    deletion_policy: Any
    update_policy: Any
    description: Any
    external_id: Any
    condition: Any
    raw: Mapping[str, Any]
    #: the function nodes of properties+metadata that may refer to resources, found
    #: once here so each stack's dependency walk skips the plain data
    reference_nodes: tuple[Function, ...] = ()
    #: when every reference is a literal get_resource/get_attr (the usual case): the
    #: names and the (name, attribute) pairs, so binding only checks set membership;
    #: None when a reference depends on the stack (``if``, Ref, computed names)
    static_refs: tuple[frozenset[str], tuple[tuple[str, str], ...]] | None = None
    #: nodes a stack must still check (``if`` nodes, validation checks), see
    #: kiln.template.checks
    noted: tuple[Function, ...] = ()


@dataclass(frozen=True)
class OutputSnippet:
    name: str
    value: Any
    description: Any
    condition: Any
    raw: Mapping[str, Any]
    #: whether the value was parse-checked at load (not for an output with a
    #: condition: Heat parses it only if the condition holds)
    checked: bool = True
    noted: tuple[Function, ...] = ()


@dataclass
class Template:
    """A template parsed once; immutable and shareable between stacks."""

    raw: Mapping[str, Any]
    version: TemplateVersion
    files: Mapping[str, str]
    keys: Keys
    description: Any  # Heat: the section as written, "No description" if empty
    parameter_schemas: Mapping[str, Any]
    parameter_groups: list[Any]
    resources: dict[str, ResourceSnippet]
    outputs: dict[str, OutputSnippet]
    condition_definitions: dict[str, Any]
    mappings: Mapping[str, Any] = field(default_factory=dict)

    # -- the ValidateContext protocol ---------------------------------------------------

    @property
    def resource_names(self) -> list[str]:
        return list(self.resources)

    @property
    def parameter_names(self) -> list[str]:
        return list(self.parameter_schemas)

    @property
    def condition_names(self) -> list[str]:
        return list(self.condition_definitions)

    # -- binding --------------------------------------------------------------------------

    def bind(self, *, environment: Any = None, user_params: Mapping[str, Any] | None = None,
             identity: StackIdentity | None = None, resolver: ResourceResolver | None = None,
             validate_params: bool | None = True, yaql_limits: tuple[int, int] = (200, 10000),
             context: Any = None, max_output: int = DEFAULT_MAX_OUTPUT,
             yaql_timeout: float = DEFAULT_YAQL_TIMEOUT) -> BoundTemplate:
        """This template with one stack's parameters, environment and resources;
        ``validate_params``: check values too, only the schemas (False), or nothing yet
        (None: the caller validates them later, see :func:`bind_parameters`)."""
        from kiln.template.bound import BoundTemplate

        return BoundTemplate(self, environment=environment, user_params=user_params or {},
                             identity=identity, resolver=resolver,
                             validate_params=validate_params, yaql_limits=yaql_limits,
                             context=context, max_output=max_output,
                             yaql_timeout=yaql_timeout)

    def validate_shallow(self) -> None:
        """What Heat checks without a stack: done at load; kept for the contract."""

    def member_attribute_references(self, resource_name: str) -> frozenset[str]:
        """What the template asks of a nested-stack resource's own resources: for every
        literal ``get_attr: [resource_name, "resource.<name>[.<attribute>]", ...]`` (or
        Fn::GetAtt) in the resources and outputs, the ``<name>[.<attribute>]`` part
        (``[p, "resource.v", "value"]`` asks for ``v.value`` too, as Heat reads it)."""
        from kiln.template.hot.resources import GetAttThenSelect

        found: set[str] = set()
        trees: list[Any] = [(r.properties, r.metadata) for r in self.resources.values()]
        trees += [o.value for o in self.outputs.values()]
        stack: list[Any] = trees
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                stack.extend(item.values())
            elif isinstance(item, list | tuple):
                stack.extend(item)
            elif isinstance(item, Function):
                parts = item.parts() if isinstance(item, GetAttThenSelect) else None
                if parts is not None and parts[0] == resource_name \
                        and isinstance(parts[1], str) and parts[1].startswith("resource."):
                    key = parts[1][len("resource."):]
                    found.add(key)
                    if "." not in key and parts[2] and isinstance(parts[2][0], str):
                        found.add(f"{key}.{parts[2][0]}")  # the attribute as the path
                stack.append(item.args)
        return frozenset(found)


def _type_name(value: Any) -> str:
    return str(type(value))


class _Builder:
    """Turns plain template data into function trees for one version.

    Functions are checked as Heat parses them (see :mod:`kiln.template.checks`): when
    ``checking``, each node outside an ``if`` branch is validated as it is built, and
    the nodes a stack must still look at (``if`` nodes, nodes with validation checks)
    are appended to ``noted``; inside a branch, or when not ``checking``, nothing is
    checked here.
    """

    def __init__(self, version: TemplateVersion, ctx: Any) -> None:
        self.functions = version.functions()
        self.cond_functions = version.condition_functions()
        self.ctx = ctx
        self.checking = True
        self.noted: list[Function] = []
        #: the function nodes built directly inside the node being built (its children)
        self.siblings: list[Function] = []

    def part(self, data: Any, path: tuple[PathElement, ...], *, condition: bool = False,
             checking: bool = True) -> tuple[Any, tuple[Function, ...]]:
        """The tree of one part (a resource field, an output value, a condition) and
        the nodes noted in it; ``self.siblings`` is left holding the function nodes at
        the top of the part (not inside another function)."""
        self.checking, self.noted, self.siblings = checking, [], []
        tree = self.build(data, path, condition)
        noted, self.noted = tuple(self.noted), []
        return tree, noted

    def build(self, data: Any, path: tuple[PathElement, ...], condition: bool = False,
              branch: bool = False) -> Any:
        """The tree for ``data``; recursion depth is bounded by parser.MAX_DEPTH.
        (The parser's hot path: positional calls, plain data copied in one pass.)"""
        t = type(data)
        if t is dict:
            if len(data) == 1:
                for key in data:
                    cls = ((self.cond_functions if condition else self.functions).get(key)
                           if type(key) is str else None)
                    if cls is not None:
                        return self._node(cls, key, data[key], path, condition, branch)
            out = {}
            build = self.build
            for k, v in data.items():
                tv = type(v)
                if tv is dict or tv is list:
                    v = build(v, (*path, k if type(k) is str or type(k) is int else str(k)),
                              condition, branch)
                out[k] = v
            return out
        if t is list:
            items = []
            build = self.build
            for i, v in enumerate(data):
                tv = type(v)
                if tv is dict or tv is list:
                    v = build(v, (*path, i), condition, branch)
                items.append(v)
            return items
        return data

    def _node(self, cls: type[Function], key: str, raw: Any,
              path: tuple[PathElement, ...], condition: bool, branch: bool) -> Function:
        fpath = (*path, key)
        args: Any
        outer, self.siblings = self.siblings, []
        if cls.condition_args and isinstance(raw, list):
            args = [self._arg(cls, key, fpath, i, a, condition, branch)
                    for i, a in enumerate(raw)]
        else:
            tr = type(raw)
            args = (self.build(raw, fpath, condition, branch or cls.branch_args)
                    if tr is dict or tr is list else raw)
        node = cls(key, args, path, self.siblings)
        self.siblings = outer
        outer.append(node)
        if cls.has_prepare:
            node.prepare(self.ctx)
        if not branch and self.checking:
            if cls.has_validate:
                node.validate(self.ctx)
            if cls.branch_args or cls.has_existing_checks:
                self.noted.append(node)
        return node


    def _arg(self, cls: type[Function], key: str, fpath: tuple[PathElement, ...], index: int,
             raw: Any, condition: bool, branch: bool) -> Any:
        """One argument of a function with condition arguments. Heat parses an ``if``'s
        condition on its own, under the path ``if`` alone, and its branches under the
        ``if``'s path without an index; errors there are worded with those paths."""
        if index in cls.condition_args:
            return self.build(raw, (key,) if cls.branch_args else (*fpath, index), True,
                              branch)
        if cls.branch_args:
            return self.build(raw, fpath, condition, True)
        return self.build(raw, (*fpath, index), condition, branch)


def load_template(body: str | bytes | Mapping[str, Any], *,
                  files: Mapping[str, str] | None = None,
                  max_size: int = 524288, url: str | None = None) -> Template:
    """Parse, check and build a template (see the module docstring for the order)."""
    data = parser.load_data(body, max_size=max_size, url=url)
    return build_template(data, files=files or {})


def build_template(data: dict[str, Any], *, files: Mapping[str, str]) -> Template:
    version = REGISTRY.detect(data)
    keys = HOT_KEYS if version.family == "hot" else CFN_KEYS
    if keys is CFN_KEYS and not INTERNAL_KEYS.get():
        data = _without_external_ids(data, keys)
    for key in data:
        if key not in version.sections:
            raise section_error(str(key), version.sections)
    description = data.get(keys.description)
    raw_resources = _section_map(data, keys.resources, "resource")
    raw_outputs = _section_map(data, keys.outputs, "output")
    _check_resources(raw_resources, version, keys)
    _check_outputs(raw_outputs, version, keys)
    raw_conditions: Any = {}
    if version.conditions_section is not None:
        raw_conditions = data.get(version.conditions_section) or {}
        if not isinstance(raw_conditions, dict):
            raise StackValidationFailed(
                "Condition definitions must be a map. Found a "
                f"{type(raw_conditions).__name__} instead",
                error="Conditions validation error", path=(version.conditions_section,),
                show_path=False)
    from kiln.template.parameters import parse_parameters_section

    schemas = parse_parameters_section(data.get(keys.parameters), version.family,
                                       version.date if version.family == "hot" else None)
    mappings = data.get(keys.mappings) if keys.mappings else None
    groups = data.get(keys.parameter_groups) if keys.parameter_groups else None
    template = Template(
        raw=data, version=version, files=dict(files), keys=keys,
        description=description or "No description",
        parameter_schemas=schemas, parameter_groups=list(groups or []),
        resources={}, outputs={}, condition_definitions={},
        mappings=mappings if isinstance(mappings, dict) else {})
    builder = _Builder(version, template)
    cond_section = version.conditions_section or keys.conditions
    for n, d in raw_conditions.items():
        # Heat validates every condition when it validates a stack, used or not
        tree, noted = builder.part(d, (cond_section, str(n)), condition=True)
        if noted:  # Heat words these without the condition's place
            validate_tree(tree, (), template, None)
        template.condition_definitions[str(n)] = tree
    template.resources = {
        str(n): _resource(builder, str(n), r, keys) for n, r in raw_resources.items()}
    template.outputs = {
        str(n): _output(builder, str(n), o, keys) for n, o in raw_outputs.items()}
    return template


def _section_map(data: Mapping[str, Any], key: str, what: str) -> dict[Any, Any]:
    section = data.get(key) or {}
    if not isinstance(section, dict):
        raise StackValidationFailed(
            f'"{key}" must contain a map of {what} maps. Found a '
            f"[{_type_name(section)}] instead", path=(key,), show_path=False)
    return section


def _check_resources(resources: dict[Any, Any], version: TemplateVersion, keys: Keys) -> None:
    """Heat's shape rules for resources, checked in name order as Heat does."""
    for name in sorted(resources, key=str):
        snippet = resources[name]
        path = (keys.resources, str(name))
        if not isinstance(snippet, dict):
            if not snippet:
                raise _type_missing(keys, path)
            raise StackValidationFailed(
                f'"{keys.resources}" must contain a map of resource maps. Found a '
                f"[{_type_name(snippet)}] instead", path=path, show_path=False)
        if not snippet.get(keys.type):
            raise _type_missing(keys, path)
    for name, snippet in resources.items():
        invalid = [str(k) for k in snippet if k not in version.resource_keys]
        if invalid:
            close = did_you_mean(invalid[0], version.resource_keys)
            raise StackValidationFailed(
                "Invalid keyword(s) inside a resource definition: " + ", ".join(invalid),
                path=(keys.resources, str(name)), show_path=False,
                hint=f"{keys.resources}.{name}" + (f": {close}" if close else ""))
        if "\x00" in str(name):
            # a name is a database column, and PostgreSQL cannot store a NUL in text
            raise StackValidationFailed(
                f'Resource name "{name}" may not contain a NUL character',
                path=(keys.resources, str(name)), show_path=False)


def _type_missing(keys: Keys, path: Sequence[PathElement]) -> StackValidationFailed:
    if keys is HOT_KEYS:
        return StackValidationFailed("Each resource must contain a type key.", path=path,
                                     show_path=False)
    return StackValidationFailed("Each Resource must contain a Type key.", path=path,
                                 show_path=False)


def _check_outputs(outputs: dict[Any, Any], version: TemplateVersion, keys: Keys) -> None:
    """Heat's checks of outputs; unknown keys inside an output are ignored, as Heat
    ignores them."""
    for name, snippet in outputs.items():
        path = (keys.outputs, str(name))
        if not isinstance(snippet, dict):
            raise StackValidationFailed(
                "Output definitions must be a map. Found a "
                f"{type(snippet).__name__} instead", path=path,
                error="Output validation error")
        if keys.value not in snippet:
            raise StackValidationFailed(
                f"Each output definition must contain a {keys.value} key.", path=path,
                error="Output validation error")


def _field(snippet: dict[str, Any], key: str | None, name: str, kinds: tuple[type, ...],
           typename: str, value: Any) -> Any:
    if key is None or key not in snippet:
        return None
    if not isinstance(value, kinds):
        raise StackValidationFailed(f"Resource {name} {key} type must be {typename}",
                                    path=("resources", name, key), show_path=False)
    return value


def _resource(builder: _Builder, name: str, snippet: dict[str, Any],
              keys: Keys) -> ResourceSnippet:
    base = (keys.resources, name)
    noted: list[Function] = []
    #: function nodes at the top of properties and metadata (where references count)
    tops: list[Function] = []

    def parsed(key: str | None, *, condition: bool = False, top: bool = False) -> Any:
        if key is None:
            return None
        value = snippet.get(key)
        t = type(value)
        if t is not dict and t is not list:  # plain data: nothing to build
            return value
        tree, found = builder.part(value, (*base, key), condition=condition)
        noted.extend(found)
        if top:
            tops.extend(builder.siblings)
        return tree

    rtype = _field(snippet, keys.type, name, (str,), "string", parsed(keys.type))
    props = _field(snippet, keys.properties, name, (dict, Function), "object",
                   parsed(keys.properties, top=True))
    meta = _field(snippet, keys.metadata, name, (dict, Function), "object",
                  parsed(keys.metadata, top=True))
    depends = _field(snippet, keys.depends_on, name, (list, str), "list or string",
                     snippet.get(keys.depends_on))
    if isinstance(depends, str):
        depends = [depends]
    for dep in depends or ():
        if not isinstance(dep, str):
            raise StackValidationFailed(
                f"Resource {name} {keys.depends_on} must be a list of strings",
                path=(*base, keys.depends_on), show_path=False)
    deletion = _field(snippet, keys.deletion_policy, name, (str, Function), "string",
                      parsed(keys.deletion_policy))
    update = _field(snippet, keys.update_policy, name, (dict, Function), "object",
                    parsed(keys.update_policy))
    desc = _field(snippet, keys.res_description, name, (str,), "string",
                  snippet.get(keys.res_description))
    external = _field(snippet, keys.external_id, name, (str, Function), "string",
                      parsed(keys.external_id))
    typename = "string_or_boolean" if keys is HOT_KEYS else "string or boolean"
    cond = None
    if keys is HOT_KEYS or builder.ctx.version.conditions_section:
        # a version without conditions (HeatTemplateFormatVersion 2012-12-12) ignores the
        # key, as Heat does: the resource exists
        cond = _field(snippet, keys.condition, name, (str, bool, Function), typename,
                      parsed(keys.condition, condition=True))
    refs = tuple(n for n in tops if n.walk)
    return ResourceSnippet(name=name, type=rtype, properties=props, metadata=meta,
                           depends_on=tuple(depends or ()), deletion_policy=deletion,
                           update_policy=update, description=desc, external_id=external,
                           condition=cond, raw=snippet, reference_nodes=refs,
                           static_refs=_static_references(refs), noted=tuple(noted))


def _output(builder: _Builder, name: str, snippet: dict[str, Any], keys: Keys) -> OutputSnippet:
    base = (keys.outputs, name)
    cond = None
    if keys.condition in snippet and keys.condition in builder.ctx.version.output_keys:
        cond, _ = builder.part(snippet[keys.condition], (*base, keys.condition),
                               condition=True)
    # an output with a condition is parsed by Heat only when the condition holds
    checked = cond is None
    value, noted = builder.part(snippet[keys.value], (*base, keys.value), checking=checked)
    return OutputSnippet(
        name=name, value=value, description=snippet.get(keys.out_description),
        condition=cond, raw=snippet, checked=checked, noted=noted)


#: what most resources reference: nothing (one shared value, not one per resource)
_NO_REFERENCES: tuple[frozenset[str], tuple[tuple[str, str], ...]] = (NO_NAMES, ())


def _static_references(nodes: Sequence[Function],
                       ) -> tuple[frozenset[str], tuple[tuple[str, str], ...]] | None:
    """The literal references under ``nodes``, or None if any is stack-dependent."""
    names: set[str] = set()
    attrs: list[tuple[str, str]] = []
    stack: list[Any] = list(nodes)
    while stack:
        item = stack.pop()
        t = type(item)
        if t is dict:
            stack.extend(item.values())
        elif t is list:
            stack.extend(item)
        elif isinstance(item, Function) and item.walk:
            if t in STATIC_REFERENCES:
                found = item.literal_reference()  # type: ignore[attr-defined]
                if found is None:
                    return None
                name, attr = found
                names.add(name)
                if attr is not None:
                    attrs.append((name, attr))
            elif item.touches_resources or item.stack_checked:
                return None
            stack.append(item.args)
    if not names:
        return _NO_REFERENCES
    return frozenset(names), tuple(attrs)
