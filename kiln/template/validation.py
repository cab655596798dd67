"""The body of Heat's POST /validate, and the parameter-group rules it enforces.

Heat's /validate is deliberately shallow: it checks the parameter *schemas* (constraint
kinds fit the type, defaults satisfy them) but not the supplied values, and it reports
each parameter in the CFN-flavoured shape Heat's clients render (``Type``, ``Default``,
``NoEcho`` as the strings ``"true"``/``"false"``, ``MinValue``, ``AllowedValues``,
``ConstraintDescription``...). The same shape is used for HOT and CFN templates, so HOT
types are reported by their CFN names (``number`` → ``Number``).

Which error type a failure carries follows Heat too: a StackValidationFailed raised while
validating becomes an ``HTTPBadRequest`` with the same text (Heat returns it as
``{"Error": ...}`` and the API turns that into a 400), while schema errors and unknown
parameters keep their own types. :func:`as_validate_error` does that conversion for the
caller of :func:`validation_summary`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kiln import errors as _e
from kiln.template import constraints as c
from kiln.template.parameters import (
    Family,
    ParameterSchema,
    ParameterValues,
    _pseudo_schemas,
)

#: abstract value type -> the type name /validate reports
REPORTED_TYPES = {"string": "String", "number": "Number", "list": "CommaDelimitedList",
                  "map": "Json", "boolean": "Boolean"}


#: the error types /validate reports as HTTPBadRequest; a subclass with a type of its
#: own keeps it (a dependency cycle is a CircularDependencyException on /validate too)
_REWORDED_TYPES = frozenset({"StackValidationFailed", "InvalidTemplateSection"})


class ValidateBadRequest(_e.HTTPBadRequest):
    """A validation failure as Heat's /validate reports it (type HTTPBadRequest)."""

    heat_type = "HTTPBadRequest"


def as_validate_error(exc: _e.KilnError) -> _e.KilnError:
    """The error /validate answers with for ``exc`` (see module docstring); apply it to
    errors from loading the template too (Heat reports a bad section as HTTPBadRequest
    there, but a bad version or reference with its own type)."""
    if (isinstance(exc, _e.StackValidationFailed | _e.InvalidTemplateSection)
            and exc.error_type in _REWORDED_TYPES):
        return ValidateBadRequest(exc.message, path=exc.path)
    return exc


# -- parameter groups --------------------------------------------------------------------

def _group_error(label: Any, message: str, with_label: bool = True,
                 ) -> _e.StackValidationFailed:
    where = f"parameter_groups.{label}" if with_label else "parameter_groups"
    return _e.StackValidationFailed(f"Parameter Groups error: {where}: {message}",
                                    path=("parameter_groups",))


def validate_parameter_groups(groups: Any, parameter_names: Iterable[str]) -> None:
    """Heat's rules: a list of groups, each with a ``parameters`` list naming declared
    parameters (pseudo parameters count), each parameter in one group only."""
    if not groups:
        return
    if not isinstance(groups, list):
        raise _group_error(None, "The parameter_groups should be a list.", False)
    names = set(parameter_names)
    seen: list[str] = []
    for group in groups:
        if not isinstance(group, Mapping):
            # Heat fails with an AttributeError (HTTP 500) here; say what is wrong.
            raise _group_error(None, "Each parameter group should be a mapping.", False)
        label = group.get("label", "")
        params = group.get("parameters")
        if params is None:
            raise _group_error(label, "The parameters must be provided for each "
                                      "parameter group.")
        if not isinstance(params, list):
            raise _group_error(label, "The parameters of parameter group should be a list.")
        for name in params:
            if name in seen:
                raise _group_error(label, f"The {name} parameter must be assigned to one "
                                          "parameter group only.")
            seen.append(name)
            if name not in names:
                raise _group_error(label, f"The grouped parameter {name} does not "
                                          "reference a valid parameter.")


def check_parameter_groups(template: Any) -> None:
    """A loaded template's parameter_groups (HOT only: CFN has none), checked against
    its declared parameters."""
    family = template.version.family
    if family == "hot":
        validate_parameter_groups(template.raw.get("parameter_groups"),
                                  group_parameter_names(template.parameter_schemas, family))


def group_parameter_names(schemas: Mapping[str, ParameterSchema], family: Family,
                          ) -> list[str]:
    """What parameter_groups may name: the template's parameters plus the pseudo
    parameters Heat defines for a stack without a name or id."""
    return [p.name for p in _pseudo_schemas(None, family)] + list(schemas)


# -- the summary -------------------------------------------------------------------------

def _constraint_fields(out: dict[str, Any], constraints: Iterable[c.Constraint]) -> None:
    descriptions: list[str] = []
    for con in constraints:
        if isinstance(con, c.Length):
            if con.min is not None:
                out["MinLength"] = con.min
            if con.max is not None:
                out["MaxLength"] = con.max
        elif isinstance(con, c.Range):
            if con.min is not None:
                out["MinValue"] = con.min
            if con.max is not None:
                out["MaxValue"] = con.max
        elif isinstance(con, c.Modulo):
            out["Step"] = con.step
            out["Offset"] = con.offset
        elif isinstance(con, c.AllowedValues):
            out["AllowedValues"] = list(con.allowed)
        elif isinstance(con, c.AllowedPattern):
            out["AllowedPattern"] = con.pattern
        elif isinstance(con, c.CustomConstraint):
            out["CustomConstraint"] = con.name
        if con.description:
            descriptions.append(con.description)
    if descriptions:
        out["ConstraintDescription"] = " ".join(descriptions)


def describe_parameter(schema: ParameterSchema, *, user_value: Any = None,
                       user_default: Any = None) -> dict[str, Any]:
    """One parameter as /validate shows it."""
    out: dict[str, Any] = {
        "Type": REPORTED_TYPES.get(schema.value_type, schema.type),
        "Description": schema.description or "",
        "NoEcho": "true" if schema.hidden else "false",
        "Label": schema.label or schema.name,
    }
    default = user_default if user_default is not None else schema.default
    if default is not None:
        out["Default"] = default
    if user_value:
        out["Value"] = user_value
    if schema.tags:
        out["Tags"] = list(schema.tags)
    _constraint_fields(out, schema.constraints)
    return out


def validation_summary(*, description: str,
                       schemas: Mapping[str, ParameterSchema],
                       parameter_groups: Any,
                       environment: Any,
                       family: Family) -> dict[str, Any]:
    """Heat's /validate body for a template whose structure was already validated.

    ``environment`` is a :class:`kiln.template.environment.Environment` (its
    ``parameters``/``parameter_defaults`` supply ``Value``/``Default``). Raises what
    Heat raises: :class:`~kiln.template.constraints.InvalidSchemaError` for a bad
    schema, UnknownUserParameter, or a StackValidationFailed for parameter groups
    (wrap with :func:`as_validate_error` for the wire).
    """
    values = ParameterValues(schemas, environment.parameters,
                             environment.parameter_defaults, [])
    for name in environment.parameters:
        if name not in schemas:
            from kiln.template.parameters import UnknownUserParameter

            raise UnknownUserParameter(
                f"The Parameter ({name}) was not defined in template.",
                path=("parameters", name), hint=_e.did_you_mean(name, schemas))
    values.validate(validate_values=False)
    if family == "hot":
        validate_parameter_groups(parameter_groups, group_parameter_names(schemas, family))
    params = {
        name: describe_parameter(
            schema, user_value=environment.parameters.get(name),
            user_default=environment.parameter_defaults.get(name))
        for name, schema in schemas.items()
    }
    result: dict[str, Any] = {"Description": description, "Parameters": params}
    if family == "hot" and parameter_groups:
        result["ParameterGroups"] = parameter_groups
    result["Environment"] = environment.to_dict()
    return result


def validate_template(template: Any, environment: Any, *,
                      identity: Any = None, resolver: Any = None,
                      before_references: Callable[[], None] | None = None,
                      ) -> dict[str, Any]:
    """POST /validate for a loaded :class:`~kiln.template.template.Template`: Heat's
    shallow checks (parameter schemas but not values, parameter groups, conditions,
    references, dependency cycles) and then the body. Resource types and properties are
    the engine's to check. Errors are raised as /validate reports them. A ``resolver``
    that knows the resources' plugins (``plugin_class_name``, ``has_attribute``) lets
    the checks word a cycle and check attribute names as Heat does. ``before_references``
    runs after the parameter groups are checked and before references, cycles and
    functions are (Heat looks at the resource types there)."""
    from kiln.template.definitions import StackIdentity

    try:
        bound = template.bind(environment=environment, user_params={},
                              identity=identity or StackIdentity("dummy", "", ""),
                              validate_params=False, resolver=resolver)
        family = template.version.family
        check_parameter_groups(template)
        if before_references is not None:
            before_references()
        bound.validate()
        return validation_summary(
            description=template.description, schemas=template.parameter_schemas,
            parameter_groups=template.raw.get("parameter_groups") if family == "hot"
            else None, environment=environment, family=family)
    except _e.KilnError as exc:
        raise as_validate_error(exc) from None


def describe_nested(resource_type: str, template: Any, environment: Any,
                    nested: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One ``NestedParameters`` entry of /validate?show_nested=true: a nested stack's
    parameters as its parent passes them (``environment.parameters`` give ``Value``).

    The engine knows which resources are nested stacks and with what parameters (that
    is the plugins' child_template/child_params), so it calls this per nested resource
    and passes the entries of the next level as ``nested``.
    """
    family = template.version.family
    out: dict[str, Any] = {
        "Type": resource_type,
        "Description": template.description,
        "Parameters": {
            name: describe_parameter(
                schema, user_value=environment.parameters.get(name),
                user_default=environment.parameter_defaults.get(name))
            for name, schema in template.parameter_schemas.items()},
    }
    groups = template.raw.get("parameter_groups") if family == "hot" else None
    if groups:
        out["ParameterGroups"] = groups
    if nested:
        out["NestedParameters"] = dict(nested)
    return out
