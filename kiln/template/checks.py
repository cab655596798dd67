"""When Heat checks a function's arguments, applied to a bound template.

Heat 27 checks function arguments at two moments, and Kiln follows it:

* **parse** (Heat's function constructors; Kiln's :meth:`Function.validate`): every
  resource is parsed, whether its condition is true or not; an output only if its
  condition holds. ``if`` is a macro: its condition is evaluated while parsing (an
  unknown condition name is an error even in a disabled resource) and only the branch
  it picks is parsed, so a malformed function in the other branch is never reported.
  Errors name the place with the parse path (``resources.r.properties.x.if.list_join``).
* **validation** (Heat's ``Function.validate``; Kiln's
  :meth:`Function.validate_existing`): only for resources that exist (condition true),
  have no ``external_id``, and whose plugin validates its definition (at create
  ``OS::Heat::None`` does not; Heat's POST /validate checks it all the same), for
  outputs that exist, and for every condition. Heat validates a function's arguments
  from inside the function, so an error below another function is worded relative to
  it: ``resources.r.metadata.x.list_join: [1][0].make_url: <reason>``.

The parser checks what it can at load time (the parts outside any ``if`` branch of
resources, conditions and unconditional outputs) and notes, per resource and output,
whether a stack must still look (an ``if``, or a node with validation checks):
:func:`parse_noted` and :func:`parse_tree` finish the parse for one stack,
:func:`validate_tree` does the validation.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kiln.errors import PathElement
from kiln.template.errors import StackValidationFailed
from kiln.template.function import (
    OMITTED,
    Function,
    ResolveContext,
    ValidateContext,
)


def parse_noted(nodes: Iterable[Function], template: ValidateContext,
                ctx: ResolveContext) -> None:
    """Finish the parse of a part checked at load: each ``if`` noted there picks its
    branch for this stack, and the branch is parsed."""
    for node in nodes:
        if node.branch_args:
            branch = node.chosen(ctx)  # type: ignore[attr-defined]
            if branch is not OMITTED:
                parse_tree(branch, template, ctx)


def parse_tree(tree: Any, template: ValidateContext, ctx: ResolveContext) -> None:
    """Parse-check every function in ``tree`` for this stack (in each ``if``, only the
    branch it picks)."""
    nodes = unconditional_nodes(tree)
    for node in nodes:
        node.validate(template)
    parse_noted(nodes, template, ctx)


def unconditional_nodes(tree: Any) -> list[Function]:
    """The function nodes in ``tree`` that are not inside an ``if`` branch (the
    condition argument of an ``if`` is not a branch), children before parents."""
    out: list[Function] = []
    stack: list[tuple[Any, bool]] = [(tree, False)]
    while stack:
        item, expanded = stack.pop()
        t = type(item)
        if t is dict:
            stack.extend((v, False) for v in reversed(item.values()))
        elif t is list:
            stack.extend((v, False) for v in reversed(item))
        elif isinstance(item, Function):
            if expanded:
                out.append(item)
                continue
            stack.append((item, True))
            args = item.args
            if not item.branch_args:
                stack.append((args, False))
            elif type(args) is list:
                stack.extend((args[i], False) for i in reversed(item.condition_args)
                             if i < len(args))
    return out


def validate_tree(tree: Any, path: tuple[PathElement, ...], template: ValidateContext,
                  ctx: ResolveContext | None) -> None:
    """Heat's validation of a parsed part whose place is ``path`` (a resource's
    ``("resources", "r", "metadata")``, an output's value; ``()`` for a condition,
    which Heat words without a place)."""
    _validate(tree, [str(p) for p in path], template, ctx)


class _Reason(Exception):
    """A function's own validation error, before Heat puts its place in front."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def _validate(item: Any, path: list[str], template: ValidateContext,
              ctx: ResolveContext | None) -> None:
    t = type(item)
    if t is dict:
        for key, value in item.items():
            _validate(value, [*path, str(key)], template, ctx)
    elif t is list:
        # Heat puts a list index on the key that holds the list: ``x[0]``, ``[1][0]``
        head, parent = (path[:-1], path[-1]) if path else ([], "")
        for index, value in enumerate(item):
            _validate(value, [*head, f"{parent}[{index}]"], template, ctx)
    elif isinstance(item, Function):
        try:
            _validate_function(item, template, ctx)
        except _Reason as exc:
            raise StackValidationFailed(exc.detail, path=(*path, item.fn_name)) from None
        except StackValidationFailed as exc:  # from a function inside this one
            raise StackValidationFailed(exc.message, path=(*path, item.fn_name)) from None


def _validate_function(node: Function, template: ValidateContext,
                       ctx: ResolveContext | None) -> None:
    """Heat's ``Function.validate``: the arguments (only the picked branch of an
    ``if``), each relative to the function, then the function's own checks."""
    if node.branch_args:
        assert ctx is not None, "an if is validated for a stack"
        branch = node.chosen(ctx)  # type: ignore[attr-defined]
        if branch is not OMITTED:
            _validate(branch, [], template, ctx)
    else:
        _validate(node.args, [], template, ctx)
    if node.has_existing_checks:
        try:
            node.validate_existing(template)
        except StackValidationFailed as exc:
            raise _Reason(exc.detail) from None
