"""Every template function (HOT and CFN, conditions included) against inputs that would
explode in time or memory. Each case either is refused *before* the result is built,
with a StackValidationFailed at the function's place (``resources.v.properties.value``),
or completes: a function that cannot produce more than it reads is fed the largest
inputs (a quadratic ``filter`` or ``list_concat_unique`` over 100,000 items must
finish, not freeze the engine). A coverage test makes every function of every version
table appear here, so a new function gets its hostile case too."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from kiln.template import load_template
from kiln.template.errors import StackValidationFailed
from kiln.template.versions import REGISTRY, ensure_loaded
from tests.unit.template.tplhelpers import IDENTITY, FakeResolver

LIMIT = 10_000
BIG = "a" * 9_000                                     # under the limit alone
HUGE = [str(i) for i in range(100_000)]               # a parameter may be this long
BIG_MAP = {f"k{i}": "v" for i in range(6_000)}        # 12,000 with its values
REFUSED = f"would be larger than {LIMIT} characters or items (max_function_output_size)"
YAQL_TIMEOUT = 0.5


@dataclass(frozen=True)
class Case:
    family: str              # "hot" | "cfn"
    snippet: Any             # the value of resource v's property "value"
    refused: str | None      # the error text expected at the place; None: it completes
    version: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # more template sections


def _p(name: str, family: str = "hot") -> dict[str, str]:
    return {"get_param": name} if family == "hot" else {"Ref": name}


CORPUS: dict[tuple[str, str], Case] = {
    # -- builders: refused before building ------------------------------------------
    ("hot", "list_join"): Case("hot", {"list_join": [",", [_p("big"), _p("big")]]}, REFUSED),
    ("hot", "str_replace"): Case("hot", {"str_replace": {
        "template": _p("big"), "params": {"a": "bb"}}}, REFUSED),
    ("hot", "str_replace_strict"): Case("hot", {"str_replace_strict": {
        "template": _p("big"), "params": {"a": "bb"}}}, REFUSED),
    ("hot", "str_replace_vstrict"): Case("hot", {"str_replace_vstrict": {
        "template": _p("big"), "params": {"a": "bb"}}}, REFUSED),
    ("hot", "repeat"): Case("hot", {"repeat": {"template": "%a%%b%%c%", "for_each": {
        "%a%": _p("huge"), "%b%": _p("huge"), "%c%": _p("huge")}}}, REFUSED),
    ("hot", "map_merge"): Case("hot", {"map_merge": [_p("big_map"), _p("big_map")]},
                               REFUSED),
    ("hot", "list_concat"): Case("hot", {"list_concat": [_p("huge")]}, REFUSED),
    ("hot", "list_concat_unique"): Case("hot", {"list_concat_unique": [_p("huge")]},
                                        REFUSED),
    # a back-reference: RE2 cannot run it, so Python's engine does, in the sandbox
    ("hot", "yaql"): Case("hot", {"yaql": {"expression": "regex('(a+)+\\\\1$').matches($.data)",
                                           "data": "a" * 40 + "b"}},
                          f"did not finish within {YAQL_TIMEOUT:g} seconds (yaql_timeout)"),
    ("hot", "Fn::Join"): Case("hot", {"Fn::Join": [",", [_p("big"), _p("big")]]}, REFUSED,
                              version="2013-05-23"),
    ("hot", "Fn::Replace"): Case("hot", {"Fn::Replace": [{"a": "bb"}, _p("big")]},
                                 REFUSED, version="2013-05-23"),
    ("cfn", "Fn::Join"): Case("cfn", {"Fn::Join": [",", [_p("big", "cfn"),
                                                         _p("big", "cfn")]]}, REFUSED),
    ("cfn", "Fn::Replace"): Case("cfn", {"Fn::Replace": [{"a": "bb"}, _p("big", "cfn")]},
                                 REFUSED),
    # -- functions that produce no more than they read: the largest inputs complete --
    ("hot", "filter"): Case("hot", {"filter": [_p("huge"), _p("huge")]}, None),
    ("hot", "contains"): Case("hot", {"contains": ["nope", _p("huge")]}, None),
    ("hot", "get_param"): Case("hot", _p("huge"), None),
    ("hot", "get_resource"): Case("hot", {"get_resource": "r"}, None),
    ("hot", "get_attr"): Case("hot", {"get_attr": ["r", "x"]}, None),
    ("hot", "get_file"): Case("hot", {"get_file": "f"}, None),
    ("hot", "resource_facade"): Case("hot", {"resource_facade": "metadata"}, None),
    ("hot", "str_split"): Case("hot", {"str_split": ["a", _p("big")]}, None),
    ("hot", "digest"): Case("hot", {"digest": ["sha512", _p("big")]}, None),
    ("hot", "map_replace"): Case("hot", {"map_replace": [_p("big_map"), {
        "values": {"v": "w"}}]}, None),
    ("hot", "make_url"): Case("hot", {"make_url": {"scheme": "http", "host": _p("big")}},
                              None),
    ("hot", "if"): Case("hot", {"if": [{"equals": [_p("huge"), _p("huge")]}, "y", "n"]},
                        None),
    ("hot", "equals"): Case("hot", {"if": [{"equals": [_p("huge"), _p("huge")]}, 1, 0]},
                            None),
    ("hot", "not"): Case("hot", {"if": [{"not": {"equals": [_p("big"), "x"]}}, 1, 0]}, None),
    ("hot", "and"): Case("hot", {"if": [{"and": [True, {"contains": ["x", _p("huge")]}]},
                                        1, 0]}, None),
    ("hot", "or"): Case("hot", {"if": [{"or": [False, {"equals": [_p("big"), "x"]}]}, 1, 0]},
                        None),
    ("hot", "Ref"): Case("hot", {"Ref": "big"}, None, version="2013-05-23"),
    ("hot", "Fn::Select"): Case("hot", {"Fn::Select": [99_999, _p("huge")]}, None,
                                version="2015-04-30"),
    ("hot", "Fn::Split"): Case("hot", {"Fn::Split": ["a", _p("big")]}, None,
                               version="2013-05-23"),
    ("hot", "Fn::Base64"): Case("hot", {"Fn::Base64": _p("big")}, None,
                                version="2013-05-23"),
    ("hot", "Fn::MemberListToMap"): Case("hot", {"Fn::MemberListToMap": [
        "Name", "Value", _p("huge")]}, "Member list items must be", version="2013-05-23"),
    ("hot", "Fn::ResourceFacade"): Case("hot", {"Fn::ResourceFacade": "Metadata"}, None,
                                        version="2013-05-23"),
    ("hot", "Fn::GetAZs"): Case("hot", {"Fn::GetAZs": ""}, None, version="2013-05-23"),
    ("cfn", "Ref"): Case("cfn", {"Ref": "huge"}, None),
    ("cfn", "Fn::GetAtt"): Case("cfn", {"Fn::GetAtt": ["r", "x"]}, None),
    ("cfn", "Fn::Select"): Case("cfn", {"Fn::Select": [99_999, _p("huge", "cfn")]}, None),
    ("cfn", "Fn::Split"): Case("cfn", {"Fn::Split": ["a", _p("big", "cfn")]}, None),
    ("cfn", "Fn::Base64"): Case("cfn", {"Fn::Base64": _p("big", "cfn")}, None),
    ("cfn", "Fn::MemberListToMap"): Case("cfn", {"Fn::MemberListToMap": [
        "Name", "Value", [f".member.{i}.Name=k{i}" for i in range(5_000)]]}, None),
    ("cfn", "Fn::ResourceFacade"): Case("cfn", {"Fn::ResourceFacade": "Metadata"}, None),
    ("cfn", "Fn::GetAZs"): Case("cfn", {"Fn::GetAZs": ""}, None),
    ("cfn", "Fn::FindInMap"): Case("cfn", {"Fn::FindInMap": ["m", "k", "v"]}, None,
                                   extra={"Mappings": {"m": {"k": {"v": BIG}}}}),
    ("cfn", "Fn::If"): Case("cfn", {"Fn::If": ["c", _p("big", "cfn"), "n"]}, None,
                            extra={"Conditions": {"c": {"Fn::Equals": [
                                {"Ref": "huge"}, {"Ref": "huge"}]}}}),
    ("cfn", "Fn::Equals"): Case("cfn", {"Fn::If": ["c", 1, 0]}, None, extra={
        "Conditions": {"c": {"Fn::Equals": [{"Ref": "big"}, "x"]}}}),
    ("cfn", "Fn::Not"): Case("cfn", {"Fn::If": ["c", 1, 0]}, None, extra={
        "Conditions": {"c": {"Fn::Not": [{"Fn::Equals": [{"Ref": "big"}, "x"]}]}}}),
    ("cfn", "Fn::And"): Case("cfn", {"Fn::If": ["c", 1, 0]}, None, extra={
        "Conditions": {"c": {"Fn::And": [{"Fn::Equals": [{"Ref": "big"}, "x"]},
                                         {"Fn::Equals": ["a", "a"]}]}}}),
    ("cfn", "Fn::Or"): Case("cfn", {"Fn::If": ["c", 1, 0]}, None, extra={
        "Conditions": {"c": {"Fn::Or": [{"Fn::Equals": [{"Ref": "big"}, "x"]},
                                        {"Fn::Equals": ["a", "b"]}]}}}),
}


def _every_function() -> set[tuple[str, str]]:
    ensure_loaded()
    names = set()
    for version in REGISTRY.all_versions():
        for conditions in (False, True):
            names |= {(version.family, n)
                      for n in version.available_functions(conditions=conditions)}
    return names


def test_the_corpus_has_a_case_for_every_function() -> None:
    assert set(CORPUS) == _every_function()


def _template(case: Case) -> dict[str, Any]:
    if case.family == "hot":
        return {"heat_template_version": case.version or "2021-04-16",
                "parameters": {"big": {"type": "string"},
                               "huge": {"type": "comma_delimited_list"},
                               "big_map": {"type": "json"}},
                "resources": {"r": {"type": "OS::Heat::None"},
                              "v": {"type": "OS::Heat::Value",
                                    "properties": {"value": case.snippet}}},
                **case.extra}
    return {"AWSTemplateFormatVersion": "2010-09-09",
            "Parameters": {"big": {"Type": "String"},
                           "huge": {"Type": "CommaDelimitedList"}},
            "Resources": {"r": {"Type": "OS::Heat::None"},
                          "v": {"Type": "OS::Heat::Value",
                                "Properties": {"value": case.snippet}}},
            **case.extra}


@pytest.mark.parametrize("key", sorted(CORPUS), ids=lambda k: f"{k[0]}-{k[1]}")
def test_hostile_input(key: tuple[str, str]) -> None:
    case = CORPUS[key]
    params: dict[str, Any] = {"big": BIG, "huge": ",".join(HUGE)}
    if case.family == "hot":
        params["big_map"] = BIG_MAP
    template = load_template(_template(case), files={"f": BIG})
    bound = template.bind(user_params=params, identity=IDENTITY,
                          resolver=FakeResolver({"r": {"x": BIG}}), max_output=LIMIT,
                          yaql_timeout=YAQL_TIMEOUT)
    definition = bound.resource_definitions()["v"]
    if case.refused is None:
        bound.resolve(definition.properties)
        return
    with pytest.raises(StackValidationFailed) as caught:
        bound.resolve(definition.properties)
    props = "properties" if case.family == "hot" else "Properties"
    assert tuple(caught.value.path[:4]) == (
        "resources" if case.family == "hot" else "Resources", "v", props, "value")
    assert case.refused in str(caught.value)
