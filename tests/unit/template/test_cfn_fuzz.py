"""Property test: any tree of CFN functions with arbitrary arguments either loads and
resolves (each output to a value or an output error) or is rejected with a Kiln error;
a Python error never escapes."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kiln import errors
from kiln.template import StackIdentity, load_template

FUNCTIONS = ["Ref", "Fn::GetAtt", "Fn::Join", "Fn::Select", "Fn::Split", "Fn::Replace",
             "Fn::Base64", "Fn::FindInMap", "Fn::GetAZs", "Fn::MemberListToMap",
             "Fn::ResourceFacade", "Fn::If", "Fn::Equals", "Fn::Not", "Fn::And", "Fn::Or"]
NAMES = st.sampled_from(["P", "L", "R", "M", "k", "v", "C", "AWS::StackName", "x", ""])

scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), NAMES,
                    st.text(max_size=6))
trees = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(NAMES, inner, max_size=2),
        st.builds(lambda f, a: {f: a}, st.sampled_from(FUNCTIONS), inner)),
    max_leaves=12)


class World:
    def reference(self, name: str) -> Any:
        return name

    def attribute(self, name: str, attr: str, path: Sequence[Any]) -> Any:
        return {"a": [1, {"b": 2}]}

    def all_attributes(self, name: str) -> Mapping[str, Any]:
        return {}

    def resource_type(self, name: str) -> str:
        return "OS::Heat::None"

    def facade(self, kind: str) -> Any:
        return {}

    def availability_zones(self) -> list[str]:
        return ["nova"]


@settings(max_examples=100, deadline=None)
@given(value=trees, cond=trees)
def test_cfn_trees_never_leak_python_errors(value: Any, cond: Any) -> None:
    template = {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Parameters": {"P": {"Type": "String", "Default": "p"},
                       "L": {"Type": "CommaDelimitedList", "Default": "a,b"}},
        "Mappings": {"M": {"k": {"v": "found"}}},
        "Conditions": {"C": cond},
        "Resources": {"R": {"Type": "OS::Heat::None", "Properties": {"p": value}}},
        "Outputs": {"o": {"Value": value}},
    }
    try:
        bound = load_template(json.dumps(template)).bind(
            identity=StackIdentity("s", "i", "p"), resolver=World())
        bound.outputs()
        bound.validate()
        for definition in bound.resource_definitions().values():
            bound.resolve(definition.properties)
    except errors.KilnError:
        pass
