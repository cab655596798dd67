"""Value constraints shared by template parameters and resource properties.

Heat has one set of constraint kinds for both, with the same wording in both places, so
they live here once: ``length``, ``range``, ``modulo``, ``allowed_values``,
``allowed_pattern`` and ``custom_constraint``. Each carries an optional ``description``
that *replaces* the default message when a value fails (that is how a template author
gets a friendly error), and serialises to the HOT form (:meth:`Constraint.to_dict`) that
the resource-type schema API shows.

Values are checked against an abstract *value type* (``string``, ``number``,
``integer``, ``boolean``, ``map``, ``list``); each kind declares the types it may be
applied to, and :func:`check_applicable` gives Heat's ``X constraint invalid for t``
error when a template puts one on the wrong type. ``type_name`` is the type as the
author wrote it (``number``, ``Number``, ``Integer``), because Heat's messages quote it.

A failing value raises :class:`ConstraintViolation` (a :class:`ValueError`) whose text is
exactly Heat's message; callers add their own prefix (``Parameter 'x' is invalid: ...``,
``Property error: ...``). A malformed constraint raises :class:`InvalidSchemaError`.

Custom constraints
------------------
``custom_constraint: <name>`` delegates to a validator looked up by name in a registry
that plugins extend::

    register_custom_constraint("my.thing", lambda value, context: value.startswith("x"))

A validator is either such a callable or an object with ``validate(value, context) ->
bool`` and optionally ``message`` (the human description) and ``error(value) -> str``
(the failure text). ``context`` is whatever the caller passes (the request context when
the engine validates), so cloud-backed constraints can reach their clients without this
module doing any I/O. Kiln registers the cloud-free ones Heat ships (see
:mod:`kiln.template.custom_constraints` if present) at import of that module.
"""

from __future__ import annotations

import json
import numbers
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

from kiln import errors as _e
from kiln.template import yaql_sandbox

VALUE_TYPES = ("string", "number", "integer", "boolean", "map", "list")

TRUE_STRINGS = ("1", "t", "true", "on", "y", "yes")
FALSE_STRINGS = ("0", "f", "false", "off", "n", "no")


class InvalidSchemaError(_e.InvalidInput):
    """A parameter/property schema that cannot be right whatever the value."""

    heat_type = "InvalidSchemaError"


class ConstraintViolation(ValueError):
    """A value that breaks a constraint; ``str()`` is Heat's message."""


# -- coercions Heat applies before comparing --------------------------------------------

def str_to_num(value: Any) -> int | float:
    """A number from a number or its text: integer if it reads as one, else float.

    Errors are Python's own (``could not convert string to float: 'x'``), because those
    are the texts Heat shows.
    """
    if isinstance(value, numbers.Number):
        return value  # type: ignore[return-value]
    try:
        return int(value)
    except ValueError:
        return float(value)


#: Python's words for a text that is not a number (Heat shows them as they are)
_PYTHON_NUMBER_ERRORS = ("could not convert string to float", "invalid literal for int()")
_EXPECTED = {"number": "a number (such as 8 or 0.5)", "integer": "an integer (such as 8)",
             "float": "a number (such as 8 or 0.5)"}


def expected_hint(exc: BaseException, type_name: str, given: Any) -> str | None:
    """Kiln's words beside Heat's when the error is Python's own failure to read a
    number: what was expected and what was given (``expected a number, got 'abc'``)."""
    if not any(text in str(exc) for text in _PYTHON_NUMBER_ERRORS):
        return None
    expected = _EXPECTED.get(type_name, f"a value of type {type_name}")
    return f"expected {expected}, got {given!r}"


def str_to_bool(value: Any) -> bool:
    """Heat's strict boolean reading (oslo's bool_from_string(strict=True))."""
    if isinstance(value, bool):
        return value
    text = value if isinstance(value, str) else str(value)
    lowered = text.strip().lower()
    if lowered in TRUE_STRINGS:
        return True
    if lowered in FALSE_STRINGS:
        return False
    acceptable = ", ".join(f"'{s}'" for s in sorted(TRUE_STRINGS + FALSE_STRINGS))
    raise ValueError(f"Unrecognized value '{text}', acceptable values are: {acceptable}")


def to_value_type(value: Any, value_type: str | None, type_name: str | None = None) -> Any:
    """Convert ``value`` to the schema's type the way Heat compares allowed values."""
    try:
        if value_type == "integer":
            num = str_to_num(value)
            if isinstance(num, float):
                raise ValueError(f"{num} is not an integer.")
            return num
        if value_type == "number":
            return str_to_num(value)
        if value_type == "string":
            return str(value)
        if value_type == "boolean":
            return str_to_bool(value)
    except ValueError:
        raise ValueError(f'Value "{value}" is invalid for data type '
                         f'"{type_name or value_type}".') from None
    return value


def _json(value: Any) -> str:
    return json.dumps(value)


# -- the kinds ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Constraint:
    """One constraint; subclasses are the kinds. ``description`` overrides the message."""

    description: str | None = field(default=None, kw_only=True)

    #: the HOT key (``length``, ``allowed_values``...), also the to_dict key
    key: ClassVar[str] = ""
    #: value types this kind may be applied to
    valid_types: ClassVar[frozenset[str]] = frozenset()
    #: Heat's class name, quoted in "X constraint invalid for t"
    heat_name: ClassVar[str] = ""

    def validate(self, value: Any, *, value_type: str | None = None,
                 type_name: str | None = None, context: Any = None) -> None:
        """Raise :class:`ConstraintViolation` with Heat's message if ``value`` fails."""
        if not self._is_valid(value, value_type, type_name, context):
            raise ConstraintViolation(self.description or self.failure_message(value))

    def describe(self) -> str:
        """The human form (description first, then the rule), as Heat's str()."""
        parts = [self.description] if self.description else []
        parts.append(self.rule_text())
        return "\n".join(parts)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.description is not None:
            out["description"] = self.description
        out[self.key] = self.body()
        return out

    # subclasses
    def _is_valid(self, value: Any, value_type: str | None, type_name: str | None,
                  context: Any) -> bool:
        raise NotImplementedError

    def failure_message(self, value: Any) -> str:
        raise NotImplementedError

    def rule_text(self) -> str:
        raise NotImplementedError

    def body(self) -> Any:
        raise NotImplementedError


def _numeric(v: Any) -> bool:
    return v is None or isinstance(v, int | float)


@dataclass(frozen=True)
class Range(Constraint):
    min: int | float | None = None
    max: int | float | None = None

    key: ClassVar[str] = "range"
    valid_types: ClassVar[frozenset[str]] = frozenset({"integer", "number"})
    heat_name: ClassVar[str] = "Range"

    def __post_init__(self) -> None:
        for bound in (self.min, self.max):
            if not _numeric(bound):
                raise InvalidSchemaError("min/max must be numeric")
        if self.min is None and self.max is None:
            raise InvalidSchemaError(
                f"A {self.key} constraint must have a min value and/or a max value "
                "specified.")

    def _is_valid(self, value: Any, value_type: str | None, type_name: str | None,
                  context: Any) -> bool:
        return self._in_range(str_to_num(value))

    def _in_range(self, num: int | float) -> bool:
        if self.min is not None and num < self.min:
            return False
        return not (self.max is not None and num > self.max)

    def failure_message(self, value: Any) -> str:
        return f"{value} is out of range (min: {self.min}, max: {self.max})"

    def rule_text(self) -> str:
        if self.max is None:
            return f"The value must be at least {self.min}."
        if self.min is None:
            return f"The value must be no greater than {self.max}."
        return f"The value must be in the range {self.min} to {self.max}."

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.min is not None:
            out["min"] = self.min
        if self.max is not None:
            out["max"] = self.max
        return out


@dataclass(frozen=True)
class Length(Range):
    key: ClassVar[str] = "length"
    valid_types: ClassVar[frozenset[str]] = frozenset({"string", "list", "map"})
    heat_name: ClassVar[str] = "Length"

    def __post_init__(self) -> None:
        if self.min is None and self.max is None:
            raise InvalidSchemaError(
                "A length constraint must have a min value and/or a max value specified.")
        super().__post_init__()
        for bound in (self.min, self.max):
            if not (bound is None or isinstance(bound, int)):
                raise InvalidSchemaError("min/max length must be integral")

    def _is_valid(self, value: Any, value_type: str | None, type_name: str | None,
                  context: Any) -> bool:
        return self._in_range(len(value))

    def failure_message(self, value: Any) -> str:
        return f"length ({len(value)}) is out of range (min: {self.min}, max: {self.max})"

    def rule_text(self) -> str:
        if self.max is None:
            return f"The length must be at least {self.min}."
        if self.min is None:
            return f"The length must be no greater than {self.max}."
        return f"The length must be in the range {self.min} to {self.max}."


@dataclass(frozen=True)
class Modulo(Constraint):
    step: int | float | None = None
    offset: int | float | None = None

    key: ClassVar[str] = "modulo"
    valid_types: ClassVar[frozenset[str]] = frozenset({"integer", "number"})
    heat_name: ClassVar[str] = "Modulo"

    def __post_init__(self) -> None:
        if self.step is None or self.offset is None:
            raise InvalidSchemaError(
                "A modulo constraint must have a step value and an offset value "
                "specified.")
        for v in (self.step, self.offset):
            if not _numeric(v):
                raise InvalidSchemaError("step/offset must be numeric")
            if int(v) != v:
                raise InvalidSchemaError("step/offset must be integer")
        step, offset = int(self.step), int(self.offset)
        if step == 0:
            raise InvalidSchemaError("step cannot be 0.")
        if abs(offset) >= abs(step):
            raise InvalidSchemaError(
                "offset must be smaller (by absolute value) than step.")
        if step * offset < 0:
            raise InvalidSchemaError(
                "step and offset must be both positive or both negative.")

    def _is_valid(self, value: Any, value_type: str | None, type_name: str | None,
                  context: Any) -> bool:
        assert self.step is not None
        return bool(str_to_num(value) % self.step == self.offset)

    def failure_message(self, value: Any) -> str:
        return f"{value} is not a multiple of {self.step} with an offset of {self.offset}"

    def rule_text(self) -> str:
        return f"The value must be a multiple of {self.step} with an offset of {self.offset}."

    def body(self) -> dict[str, Any]:
        return {"step": self.step, "offset": self.offset}


@dataclass(frozen=True)
class AllowedValues(Constraint):
    allowed: tuple[Any, ...] = ()

    key: ClassVar[str] = "allowed_values"
    valid_types: ClassVar[frozenset[str]] = frozenset(
        {"string", "integer", "number", "boolean", "list"})
    heat_name: ClassVar[str] = "AllowedValues"

    @classmethod
    def of(cls, allowed: Any, description: str | None = None) -> AllowedValues:
        """Build from template data, with Heat's error for a non-list."""
        if not isinstance(allowed, Sequence) or isinstance(allowed, str):
            raise InvalidSchemaError("AllowedValues must be a list")
        return cls(tuple(allowed), description=description)

    def _is_valid(self, value: Any, value_type: str | None, type_name: str | None,
                  context: Any) -> bool:
        if isinstance(value, list):
            return all(v in self.allowed for v in value)
        if value_type is not None:
            allowed = tuple(to_value_type(v, value_type, type_name) for v in self.allowed)
            return to_value_type(value, value_type, type_name) in allowed
        return value in self.allowed

    def failure_message(self, value: Any) -> str:
        allowed = ", ".join(_json(a) for a in self.allowed)
        return f"{_json(value)} is not an allowed value [{allowed}]"

    def rule_text(self) -> str:
        return "Allowed values: " + ", ".join(_json(a) for a in self.allowed)

    def body(self) -> list[Any]:
        return list(self.allowed)


@dataclass(frozen=True)
class AllowedPattern(Constraint):
    pattern: str = ""

    key: ClassVar[str] = "allowed_pattern"
    valid_types: ClassVar[frozenset[str]] = frozenset({"string"})
    heat_name: ClassVar[str] = "AllowedPattern"

    @classmethod
    def of(cls, pattern: Any, description: str | None = None) -> AllowedPattern:
        if not isinstance(pattern, str):
            raise InvalidSchemaError("AllowedPattern must be a string")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise InvalidSchemaError(str(exc)) from None
        return cls(pattern=pattern, description=description)

    def _is_valid(self, value: Any, value_type: str | None, type_name: str | None,
                  context: Any) -> bool:
        compiled = _compiled(self.pattern)
        if not backtracks(self.pattern):
            match = compiled.match(value)
            return match is not None and match.end() == len(value)
        # a match that may backtrack for hours holds the interpreter lock in one C call,
        # freezing every thread: run it in the sandbox process, killed at a deadline
        try:
            return yaql_sandbox.full_match(self.pattern, value, timeout=PATTERN_SECONDS)
        except yaql_sandbox.Timeout:
            raise ConstraintViolation(
                f'"{_shortened(value)}" could not be matched against pattern '
                f'"{self.pattern}" within {PATTERN_SECONDS:g} seconds') from None
        except yaql_sandbox.Failed:
            raise ConstraintViolation(
                f'"{_shortened(value)}" could not be matched against pattern '
                f'"{self.pattern}"') from None

    def failure_message(self, value: Any) -> str:
        return f'"{value}" does not match pattern "{self.pattern}"'

    def rule_text(self) -> str:
        return f"Value must match pattern: {self.pattern}"

    def body(self) -> str:
        return self.pattern


_PATTERNS: dict[str, re.Pattern[str]] = {}

#: Seconds one match of a backtracking-prone allowed_pattern may take (in the sandbox process).
PATTERN_SECONDS = 5.0


def _shortened(value: str, limit: int = 80) -> str:
    return value if len(value) <= limit else value[:limit] + "..."


_BACKTRACKS: dict[str, bool] = {}


def backtracks(pattern: str) -> bool:
    """Whether matching ``pattern`` can take exponential time: a repeated group that
    itself holds a repeat or an alternation (``(a+)+``, ``(a|aa)*``, ``(\\w+\\.)*``),
    or a back-reference. Such patterns are matched in the sandbox process; others (almost
    every real one: ``[a-z][-a-z0-9]*``) in place, at no cost."""
    known = _BACKTRACKS.get(pattern)
    if known is None:
        import re._constants as sre_c
        import re._parser as sre_parse

        repeats = {sre_c.MAX_REPEAT, sre_c.MIN_REPEAT}

        def ambiguous(items: Any) -> bool:
            """Holds a repeat, an alternation or a back-reference."""
            for op, av in items:
                if (op in repeats and av[1] > 1) or op in (sre_c.BRANCH, sre_c.GROUPREF):
                    return True
                if any(ambiguous(sub) for sub in _children(op, av, sre_c)):
                    return True
            return False

        def risky(items: Any) -> bool:
            for op, av in items:
                if op == sre_c.GROUPREF:
                    return True
                if op in repeats and av[1] > 1 and ambiguous(av[2]):
                    return True
                if any(risky(sub) for sub in _children(op, av, sre_c)):
                    return True
            return False

        try:
            known = risky(sre_parse.parse(pattern))
        except (re.error, RecursionError):
            known = True
        if len(_BACKTRACKS) > 1024:
            _BACKTRACKS.clear()
        _BACKTRACKS[pattern] = known
    return known


def _children(op: Any, av: Any, sre_c: Any) -> list[Any]:
    """The sub-patterns of one parsed item."""
    if op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, getattr(sre_c, "POSSESSIVE_REPEAT", None)):
        return [av[2]]
    if op == sre_c.SUBPATTERN:
        return [av[-1]]
    if op == sre_c.BRANCH:
        return list(av[1])
    if op in (sre_c.ASSERT, sre_c.ASSERT_NOT):
        return [av[1]]
    if op == getattr(sre_c, "ATOMIC_GROUP", None):
        return [av]
    if op == sre_c.GROUPREF_EXISTS:
        return [sub for sub in av[1:] if sub is not None]
    return []


def _compiled(pattern: str) -> re.Pattern[str]:
    compiled = _PATTERNS.get(pattern)
    if compiled is None:
        compiled = _PATTERNS[pattern] = re.compile(pattern)
    return compiled


# -- custom constraints ------------------------------------------------------------------

@runtime_checkable
class CustomValidator(Protocol):
    """A named validator for ``custom_constraint``; may also have ``message``/``error``."""

    def validate(self, value: Any, context: Any) -> bool: ...


class _CallableValidator:
    def __init__(self, fn: Callable[[Any, Any], bool]) -> None:
        self._fn = fn

    def validate(self, value: Any, context: Any) -> bool:
        return bool(self._fn(value, context))


_CUSTOM: dict[str, CustomValidator] = {}


def register_custom_constraint(
        name: str, validator: CustomValidator | Callable[[Any, Any], bool]) -> None:
    """Make ``custom_constraint: name`` use ``validator`` (later registrations win)."""
    if isinstance(validator, CustomValidator):
        _CUSTOM[name] = validator
    elif callable(validator):
        _CUSTOM[name] = _CallableValidator(validator)
    else:
        raise TypeError(f"validator for {name!r} must be callable or have validate()")


def unregister_custom_constraint(name: str) -> None:
    _CUSTOM.pop(name, None)


def get_custom_constraint(name: str) -> CustomValidator | None:
    return _CUSTOM.get(name)


@dataclass(frozen=True)
class CustomConstraint(Constraint):
    name: str = ""

    key: ClassVar[str] = "custom_constraint"
    valid_types: ClassVar[frozenset[str]] = frozenset(
        {"string", "integer", "number", "boolean", "list"})
    heat_name: ClassVar[str] = "CustomConstraint"

    def _is_valid(self, value: Any, value_type: str | None, type_name: str | None,
                  context: Any) -> bool:
        validator = get_custom_constraint(self.name)
        return validator is not None and bool(validator.validate(value, context))

    def failure_message(self, value: Any) -> str:
        validator = get_custom_constraint(self.name)
        if validator is None:
            return f'"{value}" does not validate {self.name} (constraint not found)'
        error = getattr(validator, "error", None)
        if callable(error):
            return str(error(value))
        return f'"{value}" does not validate {self.name}'

    def rule_text(self) -> str:
        message = getattr(get_custom_constraint(self.name), "message", None)
        return str(message) if message else f"Value must be of type {self.name}"

    def body(self) -> str:
        return self.name


# -- applying a list of constraints ------------------------------------------------------

def check_applicable(constraints: Iterable[Constraint], value_type: str,
                     type_name: str) -> None:
    """Heat's schema check: every constraint must suit the declared type."""
    for c in constraints:
        if value_type not in c.valid_types:
            raise InvalidSchemaError(f"{c.heat_name} constraint invalid for {type_name}")


def validate_all(constraints: Iterable[Constraint], value: Any, *,
                 value_type: str | None = None, type_name: str | None = None,
                 context: Any = None, skip_custom: bool = False) -> None:
    """Check ``value`` against each constraint in order; the first failure raises.

    ``skip_custom`` is how Heat checks defaults: custom constraints (which may need a
    cloud) are not applied to them.
    """
    for c in constraints:
        if skip_custom and isinstance(c, CustomConstraint):
            continue
        c.validate(value, value_type=value_type, type_name=type_name, context=context)


# Heat's cloud-free custom constraints are always available (registered on import).
from kiln.template import custom_constraints as _builtin  # noqa: E402,F401
