"""``get_param``: a parameter's value, optionally walked down a path."""

from __future__ import annotations

from typing import Any

from kiln.errors import did_you_mean
from kiln.template.errors import UserParameterMissing
from kiln.template.function import Function, ResolveContext


class _NoPath(Exception):
    pass


class GetParam(Function):
    """``get_param: name`` or ``get_param: [name, key-or-index, ...]``.

    A path that does not fit the value (missing key, index out of range, walking into
    a scalar) gives ``""``, as Heat does, rather than an error.
    """

    __slots__ = ()
    api_description = "A function for resolving parameter references."

    def result(self, ctx: ResolveContext) -> Any:
        args = ctx.resolve(self.args)
        if not args:
            raise self.error(f'Function "{self.fn_name}" must have arguments')
        if isinstance(args, str):
            name, path = args, []
        elif isinstance(args, list):
            name, path = args[0], args[1:]
        else:
            raise self.error(f'Argument to "{self.fn_name}" must be string or list')
        if not isinstance(name, str):
            raise self.error(f'Parameter name in "{self.fn_name}" must be string')
        try:
            value = ctx.parameter(name)
        except KeyError:
            raise UserParameterMissing(
                f"The Parameter ({name}) was not provided.", path=self.path,
                hint=did_you_mean(name, ctx.parameter_names())) from None
        try:
            for key in path:
                value = _step(value, key)
        except _NoPath:
            return ""
        return value


def _step(collection: Any, key: Any) -> Any:
    if not isinstance(collection, dict | list | str):
        raise _NoPath
    if not isinstance(key, str | int):
        raise _NoPath
    if isinstance(collection, list | str) and isinstance(key, str):
        try:
            key = int(key)
        except ValueError:
            raise _NoPath from None
    try:
        return collection[key]
    except (KeyError, IndexError, TypeError):
        raise _NoPath from None
