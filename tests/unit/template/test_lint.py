"""kiln.template.lint: warnings for a map spelt like a function, and the templates that
let /validate?all_errors=true find every resource's error."""

from __future__ import annotations

from typing import Any

from kiln.template import lint

HOT = {"heat_template_version": "2018-08-31"}


def test_a_single_key_map_spelt_like_a_function_is_warned_of() -> None:
    template = {**HOT, "resources": {"r": {"type": "OS::Heat::Value", "properties": {
        "value": {"list_join": [",", [{"get_atr": ["s", "value"]}, {"str_replce": {}}]]}}}},
        "outputs": {"o": {"value": {"get_resoruce": "r"}}}}
    assert lint.function_typos(template) == [
        'resources.r.properties.value.list_join[1][0]: {get_atr: ["s", "value"]} is a map, '
        "not a function: did you mean get_attr?",
        "resources.r.properties.value.list_join[1][1]: {str_replce: {}} is a map, not a "
        "function: did you mean str_replace?",
        'outputs.o.value: {get_resoruce: "r"} is a map, not a function: did you mean '
        "get_resource?"]


def test_ordinary_maps_and_real_functions_are_not_warned_of() -> None:
    template: dict[str, Any] = {**HOT, "parameters": {"get_parm": {"type": "string"}},
                                "resources": {"r": {"type": "OS::Heat::RandomString",
                                                    "properties": {"length": 8,
                                                                   "character_classes": [
                                                                       {"class": "digits"}],
                                                                   "salt": {"get_param": "x"}},
                                                    "metadata": {"length": 1}}}}
    assert lint.function_typos(template) == []
    assert lint.function_typos({"no": "version"}) == []


def test_a_cfn_template_is_checked_against_its_own_functions() -> None:
    template = {"HeatTemplateFormatVersion": "2012-12-12", "Resources": {
        "r": {"Type": "OS::Heat::None", "Properties": {"a": {"Fn::Joni": ["", []]},
                                                       "b": {"get_param": "p"}}}}}
    assert lint.function_typos(template) == [
        'Resources.r.Properties.a: {Fn::Joni: ["", []]} is a map, not a function: did you '
        "mean Fn::Join?"]


def test_isolated_keeps_one_resource_and_what_references_need_of_the_others() -> None:
    template = {**HOT, "resources": {
        "a": {"type": "OS::Nova::Server", "properties": {"x": 1}, "depends_on": ["b"],
              "metadata": {"m": 1}, "update_policy": {}},
        "b": {"type": "My::Typo", "condition": "c"}}}
    assert lint.isolated(template, "b")["resources"] == {
        "a": {"type": "OS::Heat::None", "depends_on": ["b"]},
        "b": {"type": "My::Typo", "condition": "c"}}
    assert lint.stripped(template)["resources"] == {
        "a": {"type": "OS::Heat::None", "depends_on": ["b"]},
        "b": {"type": "OS::Heat::None", "condition": "c"}}
    assert lint.resource_names(template) == ["a", "b"]
    assert template["resources"]["a"]["type"] == "OS::Nova::Server"  # left as it was


def test_a_get_param_of_an_undeclared_name_is_warned_of() -> None:
    template: dict[str, Any] = {**HOT, "parameters": {"length": {"type": "number"},
                                                      "tags": {"type": "json"}},
                                "resources": {"r": {"type": "OS::Heat::RandomString",
                                                    "properties": {
                                                        "length": {"get_param": "lenght"},
                                                        "salt": {"get_param": "OS::stack_id"},
                                                        "x": {"get_param": ["tags", "a"]},
                                                        "y": {"get_param": ["tgas", "a"]}}}},
                                "outputs": {"o": {"value": {"get_param": "zzz"}}}}
    assert lint.unknown_parameters(template) == [
        'resources.r.properties.length.get_param: "lenght" is not a parameter of the '
        "template: did you mean length?",
        'resources.r.properties.y.get_param: "tgas" is not a parameter of the template: '
        "did you mean tags?",
        'outputs.o.value.get_param: "zzz" is not a parameter of the template']
    assert lint.unknown_parameters({"AWSTemplateFormatVersion": "2010-09-09"}) == []
    assert lint.unknown_parameters({**HOT, "resources": {"r": {"type": "OS::Heat::None"}}}) \
        == []
