"""A new resource's properties, resolved and checked as Heat's create validation does.

Heat resolves every property of every resource before it stores a stack, one property
at a time in the schema's order, and reports the first failure as an error of that
property, however deep inside the value the failing function sits (``Property error:
resources.a.properties.value: The Parameter (ghost) was not provided.``). Values that
wait for resources not yet created are resolved as well (a reference gives the name),
but only the failures that cannot depend on resource state are reported from them: a
parameter the template does not declare, a ``Ref`` to nothing; their values' types and
constraints are checked when the resource is created. CFN templates name the place
with their own section names (``Resources.a.Properties.value``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.engine.model.live_stack import LiveStack, Slot
from kiln.errors import (
    InvalidTemplateReference,
    KilnError,
    PathElement,
    StackValidationFailed,
    UserParameterMissing,
    format_path,
    hint_of,
)
from kiln.resources.base import Properties
from kiln.template.errors import StackValidationFailed as TemplateValidationFailed
from kiln.template.function import child_nodes, touches_resources
from kiln.template.yaql_function import Yaql

#: failures reported from a value that waits for resources: they do not depend on them
_STATIC_FAILURES = (UserParameterMissing, InvalidTemplateReference)
_PREFIX = "Property error: "


def _place(stack: LiveStack, name: str, *rest: PathElement) -> tuple[PathElement, ...]:
    keys = stack.template.keys
    return (keys.resources, name, keys.properties, *rest)


def _reason(exc: KilnError) -> str:
    """The failure without the place a template error prefixes (Heat names only the
    property); errors with a heading of their own keep their whole text."""
    if isinstance(exc, TemplateValidationFailed) and exc.detail and not exc.error:
        return exc.detail
    return exc.message


def resolve_error(stack: LiveStack, name: str, key: PathElement | None,
                  exc: KilnError) -> StackValidationFailed:
    path = _place(stack, name) if key is None else _place(stack, name, key)
    return StackValidationFailed(f"{_PREFIX}{format_path(path)}: {_reason(exc)}", path=path,
                                 hint=hint_of(exc))


def _in_template_words(stack: LiveStack, exc: StackValidationFailed) -> StackValidationFailed:
    """A property error as the resource layer words it (``resources.a.properties``),
    with the template's own section names (CFN: ``Resources.a.Properties``)."""
    path = exc.path
    keys = stack.template.keys
    if (len(path) < 3 or (keys.resources, keys.properties) == ("resources", "properties")
            or not exc.message.startswith(_PREFIX)):
        return exc
    written = f"{_PREFIX}{format_path(path)}: "
    if not exc.message.startswith(written):
        return exc
    new_path = (keys.resources, path[1], keys.properties, *path[3:])
    return StackValidationFailed(
        f"{_PREFIX}{format_path(new_path)}: {exc.message[len(written):]}", path=new_path)


def make_properties(stack: LiveStack, slot: Slot, resolved: Any) -> Properties:
    try:
        return type(slot.plugin).make_properties(slot.name, resolved)
    except StackValidationFailed as exc:
        raise _in_template_words(stack, exc) from None


def _implicated(exc: StackValidationFailed, name: str) -> str | None:
    """The top-level property a property error is about (None: the whole map)."""
    path = exc.path
    if len(path) > 3 and path[1] == name:
        return str(path[3])
    message = exc.message
    marker = " not assigned"
    if message.endswith(marker):
        return message[:-len(marker)].rsplit("Property ", 1)[-1]
    return None


def _first_error(stack: LiveStack, slot: Slot, resolved: Mapping[str, Any],
                 failed: Mapping[str, KilnError], waiting: set[str]) -> StackValidationFailed:
    """Heat's first error in schema order: a value error of an earlier property (or an
    unknown property name) wins over the failed resolution."""
    order = {key: i for i, key in enumerate(type(slot.plugin).properties_schema)}
    first = min(failed, key=lambda k: order.get(k, -1))
    try:
        make_properties(stack, slot, resolved)
    except StackValidationFailed as exc:
        key = _implicated(exc, slot.name)
        if key is None or (key not in waiting and key not in failed
                           and order.get(key, -1) < order.get(first, -1)):
            return exc
    return resolve_error(stack, slot.name, first, failed[first])


def _static_failure(stack: LiveStack, tree: Any) -> KilnError | None:
    """The failure of a value waiting for resources that does not depend on them: a
    function beside the references that fails on its own (``get_file`` of nothing), or
    a parameter or reference to nothing met while resolving the value."""
    for node in child_nodes(tree):
        if not node.touches:
            try:
                stack.runtime.resolve(node)
            except KilnError as exc:
                return exc
    try:
        if isinstance(tree, Yaql) and tree.touches and stack.is_bound:
            # its evaluation on data still waiting can raise none of _STATIC_FAILURES
            tree.resolve_arguments(stack.bound)
        else:
            stack.runtime.resolve(tree)
    except _STATIC_FAILURES as exc:
        return exc
    except Exception:  # a plugin's own failure is reported by its create  # noqa: BLE001
        return None
    return None


def check_new(stack: LiveStack, slot: Slot) -> Properties | None:
    """The resource's validated properties, or None when some wait for resources (the
    create checks those values); raises Heat's first error."""
    props = slot.definition.properties
    waits = touches_resources(props)
    if not isinstance(props, Mapping):  # one function gives the whole map
        if waits:
            failure = _static_failure(stack, props)
            if failure is not None:
                raise resolve_error(stack, slot.name, None, failure)
            return None
        try:
            resolved = stack.runtime.resolve(props)
        except KilnError as exc:
            raise resolve_error(stack, slot.name, None, exc) from None
        return make_properties(stack, slot, resolved)
    values: dict[str, Any] = {}
    failed: dict[str, KilnError] = {}
    waiting: set[str] = set()
    for key, tree in props.items():
        if waits and touches_resources({key: tree}):
            waiting.add(key)
            static = _static_failure(stack, tree)
            if static is not None:
                failed[key] = static
            continue
        try:
            values.update(stack.runtime.resolve({key: tree}))  # an omitted value stays out
        except KilnError as exc:
            failed[key] = exc
    if failed:
        raise _first_error(stack, slot, values, failed, waiting)
    return None if waiting else make_properties(stack, slot, values)
