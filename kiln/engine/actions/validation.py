"""Checking a template without creating anything: Heat's POST /validate, and more.

Heat's /validate is *shallow*, and clients rely on where the line is (the same template
can pass /validate and then fail the create with a 400):

- checked: the template's structure and functions' arguments, parameter *schemas*
  (not values), parameter groups, conditions, references to resources, attribute names
  in ``get_attr`` (for plugins with a fixed attribute schema), that every resource type
  exists, unknown property *names*, deletion policies;
- not checked: parameter values and constraints, missing parameters, property values
  (types, constraints, required properties), plugin rules, anything inside nested
  stacks.

:func:`shallow_stack` + :func:`check_resources` do Heat's part. :func:`deep_check`
(Kiln's opt-in ``deep`` validation) runs what a create runs before it stores anything
(:mod:`kiln.engine.actions.admit`) and more: property values even where other values refer to
resources not yet created (each such property is skipped, as Heat defers it, the others
still checked), and every nested stack (provider templates, groups, chains) recursively.
:func:`nested_parameters` builds /validate's ``NestedParameters`` (``show_nested``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from kiln.engine.actions import admit
from kiln.engine.actions.service_check import check_service
from kiln.engine.model.live_stack import LiveStack, Slot, StackInfo, StackSupport
from kiln.engine.model.settings import EngineConf
from kiln.engine.model.slots import add_template_slots, check_types
from kiln.engine.model.states import CREATE, IN_PROGRESS
from kiln.engine.runtime.engine import Engine
from kiln.errors import (
    EntityNotFound,
    HTTPBadRequest,
    KilnError,
    RequestLimitExceeded,
    ResourceTypeNotFound,
    StackValidationFailed,
    format_path,
)
from kiln.resources.base import Properties, Resource
from kiln.resources.common.autoscaling_group import AutoScalingGroupBase
from kiln.resources.common.scaling_group import ScalingGroup
from kiln.resources.nested import NestedStackResource
from kiln.resources.provider import TemplateNotFetched, TemplateResource
from kiln.resources.schema import property_error
from kiln.template import load_template
from kiln.template import validation as tv
from kiln.template.environment import Environment, build_environment
from kiln.template.errors import attribute_error
from kiln.template.function import touches_resources
from kiln.template.param_schema import all_parameter_schemas
from kiln.template.template import Template
from kiln.template.validation import describe_nested

#: Heat's stack name for the stack it validates
VALIDATE_STACK_NAME = "dummy"
#: error codes ``ignore_errors`` may name (Heat's ERROR_CODE_MAP: a cloud service
#: that is not available for a resource type)
IGNORABLE_ERROR_CODES = ("99001",)
#: types Heat does not look into for show_nested / nested validation: a remote stack
#: and a stack fetched from a URL are not part of this request
_NOT_INSPECTED = frozenset({"OS::Heat::Stack", "AWS::CloudFormation::Stack"})
_TEMPLATE_SUFFIXES = (".yaml", ".template")
_NOT_ASSIGNED = re.compile(r"Property (\S+) not assigned$")
_PROPERTY_ERROR = "Property error: "


def check_ignorable(codes: Any) -> None:
    """Heat accepts only codes it knows in ``ignore_errors``. (Heat 27 answers an unknown
    code with a 200 whose body is the repr of an exception object; Kiln says what is
    wrong, with Heat's text.)"""
    invalid = sorted(set(codes or ()) - set(IGNORABLE_ERROR_CODES))
    if invalid:
        raise HTTPBadRequest(f"Invalid codes in ignore_errors : {invalid}")


def parse(template: Mapping[str, Any] | str, params: Mapping[str, Any] | None,
          files: Mapping[str, str] | None, environment_files: Sequence[str] | None,
          conf: EngineConf) -> tuple[Template, Environment]:
    """Template and environment as Heat's validate builds them (environment files are
    merged with the declarations of every template among ``files``)."""
    files = dict(files or {})
    tmpl = load_template(template, files=files, max_size=conf.max_template_size)
    env = build_environment(dict(params or {}), environment_files=environment_files or (),
                            files=files,
                            param_schemas=all_parameter_schemas(tmpl.parameter_schemas, files))
    return tmpl, env


def check_resource_count(tmpl: Template, conf: EngineConf) -> None:
    """Heat counts the template's resources (conditions not applied) before anything else."""
    limit = conf.max_resources_per_stack
    if limit != -1 and len(tmpl.resource_names) > limit:
        raise RequestLimitExceeded(
            "Request limit exceeded: Maximum resources per stack exceeded.")


# -- the stack being validated -------------------------------------------------------------

class ValidationStack(LiveStack):
    """A stack that is only validated (never stored). It can serve as the template
    checks' resolver before its slots exist: it knows each resource's plugin from the
    template, and resolves references as :class:`NullResolver` does until then."""

    def has_attribute(self, name: str, attr: str) -> bool:
        return self.attribute_known(name, attr)

    def reference(self, name: str) -> Any:
        return super().reference(name) if name in self.slots else name

    def attribute(self, name: str, attr: str, path: Sequence[Any]) -> Any:
        return super().attribute(name, attr, path) if name in self.slots else None

    def all_attributes(self, name: str) -> Mapping[str, Any] | None:
        return super().all_attributes(name) if name in self.slots else {}


def make_stack(tmpl: Template, env: Environment, files: Mapping[str, str],
               support: StackSupport, *,
               project_id: str, name: str = VALIDATE_STACK_NAME,
               validate_params: bool | None = False, nested_depth: int = 0,
               parent_facade: Mapping[str, Any] | None = None,
               slots: bool = True) -> ValidationStack:
    """Bind ``tmpl`` and make a slot per resource (unknown types raise here); without
    ``slots``, the caller adds them (:func:`add_template_slots`) once it has checked
    what Heat checks before it looks at resource types."""
    info = StackInfo(id="None", name=name, project_id=project_id, action=CREATE,
                     status=IN_PROGRESS, root_stack_id="None", nested_depth=nested_depth)
    stack = ValidationStack(info, template=tmpl, environment=env,
                            user_params=env.parameters, files=files, support=support,
                            parent_facade=parent_facade)
    stack.bind(validate_params=validate_params)
    if validate_params:
        stack.bound.parameters.validate()
    if slots:
        add_template_slots(stack)
    return stack


# -- Heat's shallow resource checks ---------------------------------------------------

def _unknown_property_check(slot: Slot) -> None:
    """Heat's ``properties.validate(with_value=False)``: only the names. The plugin
    decides (OS::Heat::None takes any), so it is asked about the names alone."""
    props = slot.definition.properties
    if not isinstance(props, Mapping):
        return
    cls = type(slot.plugin)
    unknown = [k for k in props if k not in cls.properties_schema]
    if unknown:
        try:
            cls.make_properties(slot.name, dict.fromkeys(unknown))
        except StackValidationFailed as exc:
            if "Unknown Property" in exc.message:
                raise
    # a property the type declares but does not implement, given a value (Heat's
    # check in the same pass, in the schema's order)
    for key, prop in cls.properties_schema.items():
        if not prop.implemented and key in props:
            raise property_error(StackValidationFailed(
                f"Property {key} not implemented yet"), slot.name)


def _external_attribute_check(slot: Slot) -> None:
    """Heat's POST /validate refuses a HOT ``get_attr`` as a resource's external_id (it
    is checked before any resource has attributes), though a create takes it."""
    raw = slot.definition.raw.get("external_id")
    if isinstance(raw, Mapping) and len(raw) == 1 and "get_attr" in raw:
        args = raw["get_attr"]
        if isinstance(args, list) and len(args) >= 2 and all(
                isinstance(a, str) for a in args[:2]):
            wrong = attribute_error(args[0], args[1])
            raise tv.ValidateBadRequest(
                f"resources.{slot.name}.external_id.get_attr: {wrong.message}",
                path=("resources", slot.name, "external_id"))


def _update_policy_check(stack: LiveStack, slot: Slot) -> None:
    """Heat validates a resource's update_policy (names and values) against the type's
    update policy schema, also in its shallow validation."""
    policy = slot.definition.update_policy
    if policy is None:
        return
    resolved = stack.runtime.resolve(policy)
    if not resolved:
        return
    # a plugin with an update policy declares ``update_policy_schema`` (ResourceGroup);
    # every other type accepts no update_policy keys at all, as in Heat
    schema = type(slot.plugin).update_policy_schema
    try:
        Properties(schema, resolved)
    except StackValidationFailed as exc:
        path = ("resources", slot.name, "update_policy", *exc.path)
        raise StackValidationFailed(
            f"Property error: {format_path(path)}: {exc.message}", path=path) from None


check_duplicate_names = admit.check_duplicate_names


def check_resources(stack: LiveStack, catalog: frozenset[str] | None = None) -> None:
    """The per-resource part of Heat's shallow validation (with each resource's service
    checked first when the *catalog* is given)."""
    check_duplicate_names(stack)
    for slot in stack.slots.values():
        check_service(slot, catalog)
        _external_attribute_check(slot)
        _update_policy_check(stack, slot)
        policy = slot.definition.deletion_policy
        if policy == "Snapshot" and not (slot.plugin.supports("snapshot_delete")
                                         or slot.plugin.supports("SNAPSHOT")):
            raise admit.snapshot_policy_refused(stack, slot.name)
        _unknown_property_check(slot)


class PropertyValueError(StackValidationFailed):
    """A property value a plugin's own validation had to convert and could not: Heat
    lets the Python ValueError through, and names it so."""

    heat_type = "ValueError"


def check_reads(stack: LiveStack) -> None:
    """The conversions Heat's plugin validation makes in a nested stack, where values
    are otherwise not checked (``Resource.validate_reads``): a value that cannot be
    converted to its property's type fails as Heat's ``ValueError``."""
    for slot in stack.slots.values():
        reads = type(slot.plugin).validate_reads
        if not reads:
            continue
        resolved = _resolved_properties(stack, slot)
        schema = type(slot.plugin).properties_schema
        for key in reads:
            if resolved.get(key) is None:
                continue
            try:
                schema[key].convert(resolved[key], ())
            except StackValidationFailed as exc:
                raise PropertyValueError(
                    f"{format_path(('resources', slot.name))}: {exc.message}") from None


def _resolved_properties(stack: LiveStack, slot: Slot) -> Mapping[str, Any]:
    try:
        resolved = stack.runtime.resolve(slot.definition.properties)
    except KilnError:
        return {}
    return resolved if isinstance(resolved, Mapping) else {}


async def check_external(stack: LiveStack) -> None:
    """Each resource's checks against outside systems (a flavor, image or network named
    in the template must exist), with the property values that wait for no resource;
    lookups are shared by the whole request."""
    cache: dict[Any, Any] = {}
    for slot in stack.slots.values():
        if slot.definition.external_id is not None:
            value = stack.runtime.resolve(slot.definition.external_id)
            if value:
                await slot.plugin.validate_external_id(str(value))
            continue
        props = slot.definition.properties
        if not isinstance(props, Mapping) or \
                type(slot.plugin).validate_external is Resource.validate_external:
            continue
        values: dict[str, Any] = {}
        for key, node in props.items():
            if touches_resources({key: node}):
                continue
            try:
                values[key] = stack.runtime.resolve(node)
            except KilnError:
                continue
        await slot.plugin.validate_external(values, cache)


def registry_additions(stack: LiveStack) -> dict[str, str]:
    """Heat registers a template file used directly as a type (``type: my.yaml``) in the
    user's registry, so /validate's Environment lists it (``my.yaml: my.yaml``)."""
    out: dict[str, str] = {}
    for slot in stack.slots.values():
        rtype = slot.definition.type
        if rtype.endswith(_TEMPLATE_SUFFIXES) and isinstance(slot.plugin, TemplateResource):
            out.setdefault(rtype, rtype)
    return out


# -- nested stacks ---------------------------------------------------------------------

def _lenient_properties(stack: LiveStack, slot: Slot, **override: Any) -> Properties | None:
    """The properties as far as they can be known before anything exists (references
    give resource names, attributes None), or None when they are not valid yet."""
    try:
        resolved = stack.runtime.resolve(slot.definition.properties)
        if override:
            resolved = {**(resolved or {}), **override}
        return type(slot.plugin).make_properties(slot.name, resolved)
    except KilnError:
        return None


def _child(stack: LiveStack, slot: Slot, *, size_one: bool,
           one_member: bool = False) -> tuple[Any, Mapping[str, Any]] | None:
    """(child template, child parameters) of a nested-stack resource; a group is
    looked at with one member, as Heat does. ``one_member`` also shows a scaling group
    (OS::Heat::AutoScalingGroup, InstanceGroup, AWS::AutoScaling::AutoScalingGroup) with
    exactly one member whatever its size (0 or 5), as Heat's show_nested builds it (its
    create checks the group at its own size)."""
    plugin = slot.plugin
    if not isinstance(plugin, NestedStackResource) or slot.type_name in _NOT_INSPECTED:
        return None
    if isinstance(plugin, TemplateResource):
        try:
            resolved = stack.runtime.resolve(slot.definition.properties) or {}
        except KilnError:
            resolved = {}
        # only the properties the child declares become its parameters, as Heat's
        # child_params reads them: one it does not declare is an Unknown Property at
        # create, never an unknown parameter of the child (tempest's nested_on_multiple)
        schema = type(plugin).properties_schema
        declared = ({k: v for k, v in resolved.items() if k in schema}
                    if isinstance(resolved, Mapping) else {})
        # each typed as the child will get it (2 → "2" for a string); one that does not
        # convert ("abc" for a number) is left out, as Heat's child_params leaves it
        params = {}
        for key, value in declared.items():
            if value is None:
                continue
            try:
                params[key] = _as_parameter(schema[key].coerce(value, (key,)))
            except KilnError:
                continue
        # the file's text, so the child is parsed as any template is (YAML dates stay text)
        text = stack.files.get(type(plugin).template_name)
        return (text if text is not None else plugin.child_template(Properties({}, {}))), params
    schema = type(plugin).properties_schema
    override: dict[str, Any] = {"count": 1} if size_one and "count" in schema else {}
    if one_member and isinstance(plugin, ScalingGroup):
        # the property that sizes it: an autoscaling group's desired capacity in its
        # own spelling, an InstanceGroup's Size
        size_key = type(plugin).DESIRED if isinstance(plugin, AutoScalingGroupBase) else "Size"
        if size_key in schema:
            override[size_key] = 1
    props = _lenient_properties(stack, slot, **override)
    if props is None:
        return None
    try:
        return plugin.child_template(props), plugin.child_parameters(props)
    except (KilnError, KeyError, TypeError, ValueError):
        return None


def _as_parameter(value: Any) -> Any:
    """A provider template's property value as its parameter's text, as Heat passes
    it: a list joined with commas (a list of maps flattened to ``.member.0.k=v``), so
    show_nested's ``Value`` of a comma_delimited_list is ``"4,5,6"``. (Heat fails with
    a 400 and no reason when the items are not strings; Kiln joins their text.)"""
    if not isinstance(value, list):
        return value
    if value and isinstance(value[0], Mapping):
        return ",".join(f".member.{i}.{k}={v}" for i, item in enumerate(value)
                        for k, v in item.items())
    return ",".join("" if item is None else str(item) for item in value)


def _child_stack(stack: LiveStack, slot: Slot, template: Mapping[str, Any] | str,
                 params: Mapping[str, Any],
                 *, validate_params: bool | None) -> ValidationStack:
    conf = stack.conf
    limit = conf.max_nested_stack_depth
    if stack.info.nested_depth + 1 > limit:
        raise RequestLimitExceeded(f"Request limit exceeded: Recursion depth exceeds {limit}.")
    files = stack.files
    tmpl = load_template(template, files=files, max_size=conf.max_template_size)
    env = stack.environment.child(dict(params), resource_name=slot.name,
                                  resource_type=slot.definition.type)
    return make_stack(tmpl, env, files, stack.support, project_id=stack.info.project_id,
                      name=f"{stack.info.name}-{slot.name}",
                      validate_params=validate_params,
                      nested_depth=stack.info.nested_depth + 1)


class NestedTemplateNotFound(EntityNotFound):
    """show_nested met a template it cannot fetch below the top stack (Heat's 404)."""

    heat_type = "NotFound"


def nested_parameters(stack: LiveStack) -> dict[str, Any]:
    """/validate's ``NestedParameters``: per nested-stack resource, its child template's
    parameters as this stack would pass them, and the next level below. Each child is
    only looked at, as Heat does: its parameters are not checked (not even their
    defaults); errors keep their own type (an unknown type is a StackValidationFailed,
    a template that cannot be fetched a 404 NotFound)."""
    out: dict[str, Any] = {}
    for name, slot in stack.slots.items():
        found = _child(stack, slot, size_one=True, one_member=True)
        if found is None:
            continue
        try:
            child = _child_stack(stack, slot, found[0], found[1], validate_params=None)
        except TemplateNotFetched as exc:
            raise NestedTemplateNotFound(exc.message) from None
        out[name] = describe_nested(slot.definition.type, child.template, child.environment,
                                    nested_parameters(child))
    return out


# -- nested stacks at create ------------------------------------------------------------

#: a message that starts with a path into the resources (``resources.f``, ``resources[0]``)
_RESOURCES_PATH = ("resources.", "resources[")


class NestedValidationFailed(StackValidationFailed):
    """An error from inside a nested stack: its heading (the first error's type, or
    ``Property error: ``) stays in front however many levels wrap it."""

    heat_type = "StackValidationFailed"

    def __init__(self, heading: str, body: str) -> None:
        super().__init__(heading + body)
        self.heading, self.body = heading, body


def _child_error(slot: Slot, exc: KilnError) -> NestedValidationFailed:
    """An error met inside a nested stack at create, worded as Heat's create words it:
    the resource it came through with its template (``resources.n<child.yaml>``, a
    group's or chain's ``<nested_stack>``), the first error's type in front unless it
    is a StackValidationFailed (a property error keeps its heading in front)."""
    label = slot.type_name if isinstance(slot.plugin, TemplateResource) else "nested_stack"
    where = f"resources.{slot.name}<{label}>"
    if isinstance(exc, NestedValidationFailed):
        heading, message = exc.heading, exc.body
    elif exc.message.startswith(_PROPERTY_ERROR):
        heading, message = _PROPERTY_ERROR, exc.message[len(_PROPERTY_ERROR):]
    else:
        heading = "" if exc.error_type == "StackValidationFailed" else f"{exc.error_type}: "
        message = exc.message
    joined = (f"{where}.{message}" if message.startswith(_RESOURCES_PATH)
              else f"{where}: {message}")
    return NestedValidationFailed(heading, joined)


def _empty_group(stack: LiveStack, slot: Slot) -> bool:
    if "count" not in type(slot.plugin).properties_schema:
        return False
    props = _lenient_properties(stack, slot)
    return props is not None and props["count"] == 0


def api_validate(tmpl: Template, env: Environment, files: Mapping[str, str],
                 support: StackSupport, *, project_id: str,
                 catalog: frozenset[str] | None = None,
                 ) -> tuple[dict[str, Any], ValidationStack]:
    """What POST /validate checks of a parsed template (the body and the stack it built):
    the template's own rules, with resource types looked at after them, then each
    resource's names, policies and property names, as in Heat."""
    # the stack is the checks' resolver: it knows the plugins, so a cycle is worded and
    # get_attr attribute names are checked as Heat does
    stack = make_stack(tmpl, env, files, support, project_id=project_id, slots=False)
    body = tv.validate_template(tmpl, env, resolver=stack,
                                before_references=lambda: check_types(stack))
    add_template_slots(stack)
    check_resources(stack, catalog)
    return body, stack


def _check_remote_stack(stack: LiveStack, slot: Slot) -> None:
    """Heat checks an OS::Heat::Stack's template before anything is stored by asking the
    orchestration endpoint of its region to validate it (POST /validate, with the
    parent's files and the child's environment); here the endpoint is this engine. A
    failure is Heat's 400, naming the region (``"None"`` when unset)."""
    props = _lenient_properties(stack, slot)
    if props is None:
        return
    region = (props["context"] or {}).get("region_name")
    place = f'region "{region}"'
    try:
        tmpl = load_template(props["template"], files=stack.files,
                             max_size=stack.conf.max_template_size)
    except KilnError as exc:  # parsed by the client before it asks: no "ERROR: "
        raise StackValidationFailed(f"Failed validating stack template using Heat endpoint "
                                    f'at {place} due to "{exc.message}"') from None
    env = stack.environment.child(dict(props["parameters"] or {}), resource_name=slot.name)
    try:
        api_validate(tmpl, env, stack.files, stack.support,
                     project_id=stack.info.project_id)
    except KilnError as exc:
        raise StackValidationFailed(f"Failed validating stack template using Heat endpoint "
                                    f'at {place} due to "ERROR: {exc.message}"') from None


def check_children(stack: LiveStack, catalog: frozenset[str] | None = None) -> None:
    """What Heat's create checks of every nested stack before it stores anything (as
    its /validate checks a template: types, names, parameter schemas and groups,
    references, cycles, property names, not values; and, given the *catalog*, the
    service of each resource of the nested stacks that ask for it), all the way down.
    A group is looked at with one member (none when its count is 0); an unknown member
    type is reported as it is, as Heat checks the member's definition first."""
    for slot in stack.slots.values():
        if slot.type_name == "OS::Heat::Stack":
            _check_remote_stack(stack, slot)
            continue
        if _empty_group(stack, slot):
            continue
        found = _child(stack, slot, size_one=True)
        if found is None:
            continue
        try:
            child = _child_stack(stack, slot, found[0], found[1], validate_params=False)
            tv.check_parameter_groups(child.template)
            child.bound.validate(placeholders=False)
            # Heat checks every nested resource's service; Kiln so far for the plugins
            # that ask (the load balancer), see NestedStackResource.checks_child_services
            asks = isinstance(slot.plugin, NestedStackResource) and \
                slot.plugin.checks_child_services
            services = catalog if asks else None
            check_resources(child, services)
            check_reads(child)
            check_children(child, services)
        except ResourceTypeNotFound as exc:
            if isinstance(slot.plugin, TemplateResource) or isinstance(exc, TemplateNotFetched):
                raise _child_error(slot, exc) from None
            raise
        except KilnError as exc:
            raise _child_error(slot, exc) from None


# -- deep validation --------------------------------------------------------------------

def _implicated(exc: StackValidationFailed, name: str) -> str | None:
    """The top-level property a property error is about."""
    path = exc.path
    if len(path) > 3 and path[:3] == ("resources", name, "properties"):
        return str(path[3])
    match = _NOT_ASSIGNED.search(exc.message)
    return match.group(1) if match else None


def _check_deferred(stack: LiveStack, slot: Slot) -> None:
    """Properties of a resource whose other properties wait for resources: each value
    that does not is checked now (Heat defers only the waiting ones)."""
    props = slot.definition.properties
    if not isinstance(props, Mapping):
        return
    waiting = {k for k, v in props.items() if touches_resources({k: v})}
    data = {k: stack.runtime.resolve(v) for k, v in props.items() if k not in waiting}
    cls = type(slot.plugin)
    for _ in range(len(props) + 1):
        try:
            cls.make_properties(slot.name, data)
            return
        except StackValidationFailed as exc:
            key = _implicated(exc, slot.name)
            if key not in waiting:
                raise
            if key in data:  # pragma: no cover - waiting keys are never in data
                del data[key]
                continue
            return  # a required property waits for a resource: the rest waits too


def _nested_error(slot: Slot, exc: KilnError) -> StackValidationFailed:
    label = slot.definition.type if slot.definition.type.endswith(_TEMPLATE_SUFFIXES) \
        else "nested_stack"
    message = exc.message
    if message.startswith("Property error: "):
        message = message[len("Property error: "):]
    return StackValidationFailed(f"resources.{slot.name}<{label}>.{message}"
                                 if message.startswith(_RESOURCES_PATH)
                                 else f"resources.{slot.name}<{label}>: {message}")


def deep_check(engine: Engine, stack: LiveStack) -> None:
    """Everything a create checks before storing the stack, then what Heat defers:
    property values beside references, and nested stacks all the way down."""
    admit.validate(engine, stack)
    for slot in stack.slots.values():
        if not slot.props_final:
            _check_deferred(stack, slot)
    for slot in stack.slots.values():
        found = _child(stack, slot, size_one=False)
        if found is None:
            continue
        try:
            child = _child_stack(stack, slot, found[0], found[1],
                                 validate_params=slot.props_final)
            deep_check(engine, child)
        except (RequestLimitExceeded, ResourceTypeNotFound):
            raise  # Heat reports these from any depth as they are
        except KilnError as exc:
            raise _nested_error(slot, exc) from None
