"""CFN condition functions: Heat's HOT ones under CFN names, except ``Fn::Not``, which
takes a one-item list."""

from __future__ import annotations

from typing import Any

from kiln.template.function import ResolveContext, ValidateContext
from kiln.template.hot import logic as hot_logic


class If(hot_logic.If):
    """``Fn::If: [condition, value_if_true, value_if_false]``."""

    __slots__ = ()


class Equals(hot_logic.Equals):
    __slots__ = ()


class And(hot_logic.And):
    __slots__ = ()


class Or(hot_logic.Or):
    __slots__ = ()


class Not(hot_logic.Not):
    """``Fn::Not: [condition]``."""

    __slots__ = ()

    def validate(self, ctx: ValidateContext) -> None:
        if not self.args or not isinstance(self.args, list) or len(self.args) != 1:
            raise self.arg_error(
                f'Arguments to "{self.fn_name}" must be of the form: [condition]')

    def result(self, ctx: ResolveContext) -> Any:
        return not hot_logic.condition_value(self, ctx, ctx.resolve(self.args[0]))
