"""Property tests: whatever a caller or template author sends as parameter values or
declarations, binding either succeeds or fails with a Kiln error, never a Python one."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kiln import errors
from kiln.template.definitions import StackIdentity
from kiln.template.environment import Environment
from kiln.template.parameters import bind_parameters, parse_parameters_section

IDENT = StackIdentity("s", "i", "p")

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                    st.text(max_size=8))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=6)
constraint = st.one_of(
    st.builds(lambda a, b: {"length": {"min": a, "max": b}}, scalars, scalars),
    st.builds(lambda a, b: {"range": {"min": a, "max": b}}, scalars, scalars),
    st.builds(lambda a, b: {"modulo": {"step": a, "offset": b}}, scalars, scalars),
    st.builds(lambda a: {"allowed_values": a}, values),
    st.builds(lambda a: {"allowed_pattern": a}, st.one_of(st.text(max_size=5), scalars)),
    st.builds(lambda a: {"custom_constraint": a}, st.text(max_size=5)),
    st.dictionaries(st.text(max_size=4), values, max_size=2),
)
declaration = st.fixed_dictionaries(
    {"type": st.sampled_from(["string", "number", "json", "comma_delimited_list",
                              "boolean", "other"])},
    optional={"default": values, "constraints": st.lists(constraint, max_size=3),
              "hidden": values, "label": values})


@settings(max_examples=120, deadline=None)
@given(decl=declaration, value=values, pd=values)
def test_bind_never_leaks_python_errors(decl: dict[str, Any], value: Any, pd: Any) -> None:
    try:
        schemas = parse_parameters_section({"p": decl}, "hot", "2021-04-16")
        env = Environment({"parameter_defaults": {"p": pd}})
        bound = bind_parameters(schemas, {"p": value}, env, IDENT)
        bound["p"]
        bound.display_map()
    except errors.KilnError:
        pass


@settings(max_examples=80, deadline=None)
@given(decl=st.dictionaries(st.sampled_from(
    ["Type", "Default", "NoEcho", "AllowedValues", "AllowedPattern", "MinLength",
     "MaxLength", "MinValue", "MaxValue", "ConstraintDescription"]), values, max_size=5),
    ptype=st.sampled_from(["String", "Number", "CommaDelimitedList", "Json", "Boolean"]),
    value=values)
def test_cfn_bind_never_leaks(decl: dict[str, Any], ptype: str, value: Any) -> None:
    decl["Type"] = ptype
    try:
        schemas = parse_parameters_section({"p": decl}, "cfn")
        bind_parameters(schemas, {"p": value}, None, IDENT, family="cfn")["p"]
    except errors.KilnError:
        pass
