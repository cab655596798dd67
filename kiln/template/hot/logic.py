"""Condition functions: equals, not, and, or, contains, and ``if`` (which picks a branch).

A condition argument may be a boolean, the *name* of a condition from the
``conditions`` section, or a function that yields either; the context's
``condition()`` applies Heat's rules to names (unknown → ``Invalid condition "x"``).
"""

from __future__ import annotations

from typing import Any

from kiln.template.errors import StackValidationFailed
from kiln.template.function import OMITTED, Function, ResolveContext, ValidateContext


def condition_value(node: Function, ctx: ResolveContext, value: Any) -> bool:
    """``value`` (already resolved) as a boolean, Heat's way; errors get node's path."""
    if isinstance(value, bool):
        return value
    try:
        return ctx.condition(value)
    except ValueError as exc:
        raise StackValidationFailed(str(exc), path=(*node.path, node.fn_name)) from None


class Equals(Function):
    """``equals: [a, b]`` (2016-10-14)."""

    __slots__ = ()
    api_description = "A function for comparing whether two values are equal."

    def validate(self, ctx: ValidateContext) -> None:
        if not self.args or not isinstance(self.args, list) or len(self.args) != 2:
            raise self.arg_error(
                f'Arguments to "{self.fn_name}" must be of the form: [value_1, value_2]')

    def result(self, ctx: ResolveContext) -> Any:
        return bool(ctx.resolve(self.args[0]) == ctx.resolve(self.args[1]))


class Not(Function):
    """``not: condition``."""

    __slots__ = ()
    api_description = "A function that acts as a NOT operator on a condition."

    def validate(self, ctx: ValidateContext) -> None:
        if self.args is None:
            raise self.arg_error(f'Argument to "{self.fn_name}" must be a condition')

    def result(self, ctx: ResolveContext) -> Any:
        return not condition_value(self, ctx, ctx.resolve(self.args))


class And(Function):
    """``and: [c1, c2, ...]`` (at least two)."""

    __slots__ = ()
    api_description = "A function that acts as an AND operator on conditions."

    def validate(self, ctx: ValidateContext) -> None:
        if not isinstance(self.args, list):
            raise self.arg_error(
                f'Arguments to "{self.fn_name}" must be a list of conditions')
        if len(self.args) < 2:
            raise self.arg_error(
                f'The minimum number of condition arguments to "{self.fn_name}" is 2.')

    def result(self, ctx: ResolveContext) -> Any:
        return all(condition_value(self, ctx, c) for c in ctx.resolve(self.args))


class Or(And):
    """``or: [c1, c2, ...]`` (at least two)."""

    __slots__ = ()
    api_description = "A function that acts as an OR operator on conditions."

    def result(self, ctx: ResolveContext) -> Any:
        return any(condition_value(self, ctx, c) for c in ctx.resolve(self.args))


class Contains(Function):
    """``contains: [value, sequence]`` (2017-09-01); a string sequence is a substring
    test, as in Heat."""

    __slots__ = ()
    api_description = "A function for checking whether specific value is in sequence."

    def validate(self, ctx: ValidateContext) -> None:
        if not self.args or not isinstance(self.args, list):
            raise self.arg_error(
                f'Incorrect arguments to "{self.fn_name}" should be: "{self.fn_name}" : '
                '[ "value1", [ "value1", "value2"]]')
        if len(self.args) != 2:
            raise self.arg_error(f'Arguments to "{self.fn_name}" must be of the form: '
                                 "[value1, [value1, value2]]")

    def result(self, ctx: ResolveContext) -> Any:
        value = ctx.resolve(self.args[0])
        sequence = ctx.resolve(self.args[1])
        if not isinstance(sequence, list | str):
            raise self.error(f'Second argument to "{self.fn_name}" should be a sequence.')
        if isinstance(sequence, str) and not isinstance(value, str):
            return False
        return value in sequence


class If(Function):
    """``if: [condition, value_if_true, value_if_false]`` (2016-10-14).

    Only the chosen branch is resolved and only its references count as dependencies.
    The condition argument is parsed with the version's condition functions. As Heat's
    macro, the branch the condition does not pick is never checked: functions in it may
    be malformed (Heat 27 creates such a stack).
    """

    __slots__ = ()
    api_description = "A function to return corresponding value based on condition evaluation."
    nullable = False
    condition_args = (0,)
    stack_checked = True
    branch_args = True

    def _shape_ok(self) -> bool:
        if not self.args or not isinstance(self.args, list):
            return False
        return (2 <= len(self.args) <= 3) if self.nullable else len(self.args) == 3

    def validate(self, ctx: ValidateContext) -> None:
        if not self._shape_ok():
            raise self.arg_error(
                f'Arguments to "{self.fn_name}" must be of the form: '
                "[condition_name, value_if_true, value_if_false]")

    def chosen(self, ctx: ResolveContext) -> Any:
        """The branch the condition picks (OMITTED for a missing false branch)."""
        try:
            value = ctx.resolve(self.args[0])
        except StackValidationFailed as exc:
            # a condition function's own error (``Invalid condition "x"``): Heat reports
            # it at the ``if``, where it evaluates the condition
            if tuple(exc.path[:1]) != (self.fn_name,):
                raise
            raise StackValidationFailed(exc.detail, path=(*self.path, self.fn_name)) from None
        cond = condition_value(self, ctx, value)
        if cond:
            return self.args[1]
        return self.args[2] if len(self.args) > 2 else OMITTED

    def dependency_args(self, ctx: ResolveContext | None = None) -> Any:
        if ctx is None or not self._shape_ok():
            return self.args
        branch = self.chosen(ctx)
        return None if branch is OMITTED else [self.args[0], branch]

    def result(self, ctx: ResolveContext) -> Any:
        branch = self.chosen(ctx)
        if branch is OMITTED:
            return OMITTED
        return ctx.resolve(branch, nullable=True)


class IfNullable(If):
    """``if`` from 2021-04-16: the false branch may be left out, and then the enclosing
    key or list item disappears as if never written."""

    __slots__ = ()
    nullable = True
