"""CFN condition functions: Heat's HOT ones under CFN names, except ``Fn::Not``, which
takes a one-item list."""

from __future__ import annotations

from typing import Any, ClassVar

from kiln.template.function import ResolveContext, ValidateContext
from kiln.template.hot import logic as hot_logic


class If(hot_logic.If):
    """``Fn::If: [condition, value_if_true, value_if_false]``."""

    __slots__ = ()
    api_description: ClassVar[str] = (
        "A function to return corresponding "
        "value based on condition evaluation.")


class Equals(hot_logic.Equals):
    __slots__ = ()
    api_description: ClassVar[str] = "A function for comparing whether two values are equal."


class And(hot_logic.And):
    __slots__ = ()
    api_description: ClassVar[str] = "A function that acts as an AND operator on conditions."


class Or(hot_logic.Or):
    __slots__ = ()
    api_description: ClassVar[str] = "A function that acts as an OR operator on conditions."


class Not(hot_logic.Not):
    """``Fn::Not: [condition]``."""

    __slots__ = ()
    api_description: ClassVar[str] = "A function that acts as a NOT operator on a condition."

    def validate(self, ctx: ValidateContext) -> None:
        if not self.args or not isinstance(self.args, list) or len(self.args) != 1:
            raise self.arg_error(
                f'Arguments to "{self.fn_name}" must be of the form: [condition]')

    def result(self, ctx: ResolveContext) -> Any:
        return not hot_logic.condition_value(self, ctx, ctx.resolve(self.args[0]))
