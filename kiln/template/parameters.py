"""Template parameters: declaration, typed values, and where each value comes from.

Two steps, kept apart because they happen at different times:

* :func:`parse_parameters_section` reads a template's ``parameters`` (HOT) or
  ``Parameters`` (CFN) section into :class:`ParameterSchema` objects, once per template.
  Which keys and constraint kinds are allowed depends on the family and, for HOT, on the
  version (``modulo`` from 2017-02-24, ``tags`` from 2018-03-02). Errors carry the path
  ``("parameters", <name>)``.
* :func:`bind_parameters` gives one stack its values: the caller's parameters (which Heat
  merges over the environment's ``parameters``), then the environment's
  ``parameter_defaults``, then the template default. It adds the pseudo parameters
  (``OS::stack_id``... for HOT, ``AWS::StackId``... for CFN) and, unless told not to,
  validates everything with Heat's messages (``Parameter 'x' is invalid: ...``,
  ``The Parameter (x) was not provided.``, ``The Parameter (x) was not defined in
  template.``).

Types are coerced as Heat coerces them: ``number`` gives an int when the text is
integral and a float otherwise; ``boolean`` accepts oslo's true/false spellings;
``comma_delimited_list`` splits a string on commas (``""`` is the empty list) and turns
list items to strings; ``json`` parses a string and passes maps/lists through.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, Protocol
from urllib.parse import quote

from kiln import errors as _e
from kiln.template import constraints as c
from kiln.template.definitions import StackIdentity
from kiln.template.param_schema import (
    CFN_TYPES,
    HOT_TYPES,
    Family,
    ParameterSchema,
    all_parameter_schemas,
    parse_json,
    parse_list,
    parse_parameter,
    parse_parameters_section,
)

__all__ = [
    "CFN_TYPES",
    "HOT_TYPES",
    "EnvironmentParams",
    "Family",
    "ImmutableParameterModified",
    "ParameterInvalid",
    "ParameterSchema",
    "ParameterValues",
    "UnknownUserParameter",
    "UserParameterMissing",
    "all_parameter_schemas",
    "bind_parameters",
    "check_immutable",
    "immutable_modified",
    "parse_json",
    "parse_list",
    "parse_parameter",
    "parse_parameters_section",
    "stack_arn",
]

HOT_PSEUDO = ("OS::stack_id", "OS::stack_name", "OS::region", "OS::project_id")
CFN_PSEUDO = ("AWS::StackId", "AWS::StackName", "AWS::Region")
#: Heat answers AWS::Region with this fixed value (its pseudo parameter's default)
CFN_REGION = "ap-southeast-1"
_CFN_REGIONS = ("us-east-1", "us-west-1", "us-west-2", "sa-east-1", "eu-west-1",
                "ap-southeast-1", "ap-northeast-1")


class UnknownUserParameter(_e.UnknownUserParameter):
    pass


class UserParameterMissing(_e.UserParameterMissing):
    pass


class ParameterInvalid(_e.StackValidationFailed):
    """A value that breaks its parameter's type or constraints."""

    heat_type = "StackValidationFailed"


class ImmutableParameterModified(_e.ImmutableParameterModified):
    pass


# -- binding values ----------------------------------------------------------------------

class EnvironmentParams(Protocol):
    """The part of an Environment that parameter binding reads."""

    @property
    def parameters(self) -> Mapping[str, Any]: ...

    @property
    def parameter_defaults(self) -> Mapping[str, Any]: ...


def stack_arn(identity: StackIdentity) -> str:
    """The ARN Heat uses for AWS::StackId."""
    return (f"arn:openstack:heat::{quote(identity.project_id, '')}:stacks/"
            f"{quote(identity.stack_name, '')}/{quote(identity.stack_id, '')}")


def _pseudo_schemas(identity: StackIdentity | None,
                    family: Family) -> list[ParameterSchema]:
    def s(name: str, default: Any, desc: str | None,
          constraints: tuple[c.Constraint, ...] = ()) -> ParameterSchema:
        return ParameterSchema(name=name, type="String", value_type="string",
                               family=family, description=desc, default=default,
                               constraints=constraints)

    stack_name = identity.stack_name if identity else ""
    if family == "cfn":
        out = [s("AWS::StackId", stack_arn(identity) if identity else "None", "Stack ID")]
        if stack_name:
            out.append(s("AWS::StackName", stack_name, "Stack Name"))
            out.append(s("AWS::Region", CFN_REGION, None,
                         (c.AllowedValues(_CFN_REGIONS),)))
        return out
    out = [s("OS::stack_id", str(identity.stack_id) if identity else "", "Stack ID"),
           s("OS::project_id", str(identity.project_id) if identity else "", "Project ID")]
    if stack_name:
        out.append(s("OS::stack_name", stack_name, "Stack Name"))
    return out


class ParameterValues(Mapping[str, Any]):
    """One stack's parameters: typed values by name, pseudo parameters included.

    Indexing gives the typed value (raising :class:`UserParameterMissing` for a
    parameter that has none); ``hidden`` names the parameters to mask in output.
    """

    def __init__(self, schemas: Mapping[str, ParameterSchema],
                 user_values: Mapping[str, Any], user_defaults: Mapping[str, Any],
                 pseudo: list[ParameterSchema]) -> None:
        self._schemas: dict[str, ParameterSchema] = {p.name: p for p in pseudo}
        self._schemas.update(schemas)
        self.pseudo = frozenset(p.name for p in pseudo) - set(schemas)
        self.template_names = tuple(schemas)
        self._user = {k: v for k, v in user_values.items() if v is not None}
        self._defaults = {k: v for k, v in user_defaults.items()
                          if k in self._schemas and v is not None}
        self._typed: dict[str, Any] = {}
        self.hidden = frozenset(n for n, s in self._schemas.items() if s.hidden)

    # Mapping
    def __getitem__(self, name: str) -> Any:
        try:
            return self._typed[name]
        except KeyError:
            pass
        schema = self._schemas[name]
        raw = self.raw(name)
        if raw is None:
            raise UserParameterMissing(f"The Parameter ({name}) was not provided.",
                                       path=("parameters", name))
        value = self._typed[name] = schema.coerce(raw)
        return value

    def __contains__(self, name: object) -> bool:
        # declared (or pseudo) is enough: a parameter without a value is still there
        return name in self._schemas

    def __iter__(self) -> Iterator[str]:
        return iter(self._schemas)

    def __len__(self) -> int:
        return len(self._schemas)

    # extras
    @property
    def schemas(self) -> Mapping[str, ParameterSchema]:
        return self._schemas

    @property
    def user_values(self) -> Mapping[str, Any]:
        """Values the caller/environment supplied (what Heat stores as env parameters)."""
        return dict(self._user)

    def raw(self, name: str) -> Any:
        """The untyped value in force: user value, else parameter_default, else default."""
        if name in self._user:
            return self._user[name]
        if name in self._defaults:
            return self._defaults[name]
        return self._schemas[name].default

    def source(self, name: str) -> str:
        if name in self.pseudo:
            return "pseudo"
        if name in self._user:
            return "user"
        if name in self._defaults:
            return "parameter_defaults"
        return "default" if self._schemas[name].default is not None else "missing"

    def has_value(self, name: str) -> bool:
        return self.raw(name) is not None

    def display(self, name: str) -> str:
        """Heat's text form of a value (``******`` for hidden ones)."""
        value = self[name]
        if name in self.hidden:
            return "******"
        vt = self._schemas[name].value_type
        if vt == "list":
            return ",".join(value)
        if vt == "map":
            return json.dumps(value)
        return str(value)

    def display_map(self) -> dict[str, str]:
        """What stack show lists under ``parameters``: every parameter with a value."""
        return {n: self.display(n) for n in self._schemas if self.has_value(n)}

    def validate(self, *, validate_values: bool = True, context: Any = None) -> None:
        """Heat's order: every declared schema, then (optionally) every value."""
        for name, schema in self._schemas.items():
            try:
                schema.check_schema()
                if not validate_values:
                    continue
                raw = self.raw(name)
                if raw is None:
                    raise UserParameterMissing(
                        f"The Parameter ({name}) was not provided.",
                        path=("parameters", name))
                schema.check_value(raw, context)
            except c.InvalidSchemaError as exc:
                raise c.InvalidSchemaError(f"Parameter '{name}' is invalid: {exc.message}",
                                           path=("parameters", name)) from None
            except (ValueError, TypeError) as exc:
                raw = self.raw(name)
                raise ParameterInvalid(f"Parameter '{name}' is invalid: {exc}",
                                       path=("parameters", name),
                                       hint=c.expected_hint(exc, schema.type, raw)
                                       or _given_hint(exc, raw, schema.hidden)) from None


def _given_hint(exc: BaseException, given: Any, hidden: bool) -> str | None:
    """The value given, when Heat's message for a broken constraint leaves it out (a
    constraint's description replaces Heat's own words): never a hidden one's."""
    if hidden or not isinstance(exc, c.ConstraintViolation) or given is None:
        return None
    shown = given if isinstance(given, str) else json.dumps(given, default=str)
    if len(shown) > 80 or shown in str(exc):
        return None
    return f"the value given was {given!r}"


def bind_parameters(schemas: Mapping[str, ParameterSchema],
                    user_params: Mapping[str, Any] | None,
                    environment: EnvironmentParams | None,
                    identity: StackIdentity | None, *, family: Family = "hot",
                    validate: bool | None = True, context: Any = None) -> ParameterValues:
    """A stack's parameter values, in Heat's precedence.

    Caller parameters are laid over the environment's ``parameters`` (as Heat's API
    does); any name the template does not declare is :class:`UnknownUserParameter`.
    ``parameter_defaults`` for undeclared names are ignored. With ``validate=False``
    only the schemas are checked (what POST /validate does without values); with
    ``validate=None`` nothing is, and the caller runs ``validate()`` later (a create
    checks each parameter's schema then its value, one parameter after the other, after
    the resource types).
    """
    values: dict[str, Any] = {}
    defaults: Mapping[str, Any] = {}
    if environment is not None:
        values.update(environment.parameters or {})
        defaults = environment.parameter_defaults or {}
    values.update(user_params or {})
    for name in values:
        if name not in schemas:
            raise UnknownUserParameter(
                f"The Parameter ({name}) was not defined in template.",
                path=("parameters", name), hint=_e.did_you_mean(name, schemas))
    bound = ParameterValues(schemas, values, defaults, _pseudo_schemas(identity, family))
    if validate is not None:
        bound.validate(validate_values=validate, context=context)
    return bound


def immutable_modified(old: ParameterValues, new: ParameterValues,
                       input_params: Mapping[str, Any]) -> list[str]:
    """Names of immutable parameters whose value an update would change (Heat's rule:
    only parameters present in both templates count)."""
    changed = []
    for name in new.template_names:
        if name not in old.template_names or not new.schemas[name].immutable:
            continue
        new_value = input_params[name] if name in input_params else new[name]
        if old[name] != new_value:
            changed.append(name)
    return changed


def check_immutable(old: ParameterValues, new: ParameterValues,
                    input_params: Mapping[str, Any]) -> None:
    changed = immutable_modified(old, new, input_params)
    if changed:
        raise ImmutableParameterModified(
            "The following parameters are immutable and may not be updated: "
            + ", ".join(changed))
