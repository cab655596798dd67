"""Evaluating the ``conditions`` section for one stack, with Heat's rules and messages.

A condition is a boolean or a condition function (``equals``, ``not``, ... parsed with
the version's condition table); a name used where a condition is expected refers to
another condition. Each is evaluated at most once per stack; a condition that (directly
or not) needs itself is reported as circular rather than recursing forever.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kiln.errors import did_you_mean
from kiln.template.errors import StackValidationFailed
from kiln.template.function import Function

_IN_PROGRESS = object()
_ERROR = "Condition validation error"


class Conditions:
    """The conditions of one stack; ``resolve`` (given with each question, not kept: the
    stack's bound template owns this object, and keeping its method would make a
    reference cycle) resolves a condition's function tree."""

    def __init__(self, definitions: Mapping[str, Any],
                 functions: Iterable[str] = ()) -> None:
        self._definitions = definitions
        self._values: dict[str, Any] = {}
        #: the condition functions of the template's version, for a misspelt one's hint
        self._functions = list(functions)

    def check_types(self) -> None:
        """Every definition must be a boolean or a function (Heat's static check)."""
        for name, definition in self._definitions.items():
            self._check_type(name, definition)

    def _check_type(self, name: str, definition: Any) -> None:
        if not isinstance(definition, bool | Function):
            key = next(iter(definition)) if isinstance(definition, dict) and \
                len(definition) == 1 else None
            raise StackValidationFailed(
                f'The definition of condition "{name}" is invalid: {definition}',
                error=_ERROR, hint=did_you_mean(key, self._functions))

    def is_enabled(self, name: Any, resolve: Callable[[Any], Any]) -> bool:
        """None → True; a bool as is; a defined name → its value; else ValueError."""
        if name is None:
            return True
        if isinstance(name, bool):
            return name
        if not isinstance(name, str) or name not in self._definitions:
            raise ValueError(f'Invalid condition "{name}"')
        value = self._values.get(name)
        if value is _IN_PROGRESS:
            raise StackValidationFailed(f'Circular definition for condition "{name}"',
                                        error=_ERROR)
        if value is None:
            self._values[name] = _IN_PROGRESS
            try:
                resolved = resolve(self._definitions[name])
                self._check_type(name, resolved)
            except BaseException:
                del self._values[name]
                raise
            self._values[name] = value = bool(resolved)
        return bool(value)

    def all(self, resolve: Callable[[Any], Any]) -> dict[str, bool]:
        return {name: self.is_enabled(name, resolve) for name in self._definitions}
