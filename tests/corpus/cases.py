"""The corpus's cases, generated: every combination below is one case.

Generation is deterministic (plain loops over fixed lists; no randomness), so re-running
the recorder asks Heat the same questions. A case is what tests/corpus/wire.py runs;
the recorder stores each case with Heat's answer in tests/corpus/heat27/<area>.json.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

Case = dict[str, Any]

HOT_DATED = ["2013-05-23", "2014-10-16", "2015-04-30", "2015-10-15", "2016-04-08",
             "2016-10-14", "2017-02-24", "2017-09-01", "2018-03-02", "2018-08-31",
             "2021-04-16"]
HOT_ALIASES = ["newton", "ocata", "pike", "queens", "rocky", "wallaby"]
HOT_VERSIONS = HOT_DATED + HOT_ALIASES
CFN_VERSIONS = [("AWSTemplateFormatVersion", "2010-09-09"),
                ("HeatTemplateFormatVersion", "2012-12-12")]
LATEST = "2021-04-16"

SCHEMAS: dict[str, Any] = json.loads(
    (Path(__file__).parents[1] / "unit" / "resources" / "heat27" / "resource_types.json")
    .read_text())["schemas"]


def _validate(template: Any, **extra: Any) -> Case:
    return {"steps": [{"op": "validate", "body": {"template": template, **extra}}]}


def _preview(template: Any, **extra: Any) -> Case:
    return {"steps": [{"op": "preview",
                       "body": {"stack_name": "{name}", "template": template, **extra}}]}


def _create(template: Any, *more: dict[str, Any], random: bool = False, **extra: Any) -> Case:
    body = {"stack_name": "{name}", "template": template, **extra}
    step: dict[str, Any] = {"op": "create", "body": body}
    if random:
        step["random_outputs"] = True
    return {"steps": [step, *more]}


def hot(version: str, **sections: Any) -> dict[str, Any]:
    return {"heat_template_version": version, **sections}


# -- sections ------------------------------------------------------------------------------

NONE = {"type": "OS::Heat::None"}


def _hot_section_rules() -> Iterator[tuple[str, dict[str, Any]]]:
    r = {"r": NONE}
    yield "minimal", {"resources": r}
    yield "empty", {}
    yield "resources_null", {"resources": None}
    yield "unknown_section", {"resources": r, "foo": {}}
    yield "cfn_section_in_hot", {"Resources": {"r": {"Type": "OS::Heat::None"}}}
    yield "resources_list", {"resources": [NONE]}
    yield "resources_string", {"resources": "x"}
    yield "parameters_string", {"parameters": "x", "resources": r}
    yield "parameters_list", {"parameters": ["p"], "resources": r}
    yield "outputs_list", {"outputs": [{"value": 1}], "resources": r}
    yield "outputs_string", {"outputs": "x", "resources": r}
    yield "description_list", {"description": ["x"], "resources": r}
    yield "description_ok", {"description": "hello", "resources": r}
    yield "conditions_ok", {"conditions": {"c": True}, "resources": r}
    yield "conditions_list", {"conditions": [True], "resources": r}
    yield "condition_unknown_fn", {"conditions": {"c": {"bogus": 1}}, "resources": r}
    yield "condition_get_resource", {"conditions": {"c": {"equals": [{"get_resource": "r"}, 1]}},
                                     "resources": r}
    yield "condition_refs_unknown", {"conditions": {"c": "nope"},
                                     "resources": {"r": {**NONE, "condition": "c"}}}
    yield "parameter_groups_ok", {"parameters": {"p": {"type": "string", "default": "x"}},
                                  "parameter_groups": [{"label": "g", "parameters": ["p"]}],
                                  "resources": r}
    yield "parameter_groups_map", {"parameter_groups": {"g": {}}, "resources": r}
    yield "parameter_groups_no_params", {"parameter_groups": [{"label": "g"}], "resources": r}
    yield "parameter_groups_unknown_param", {
        "parameter_groups": [{"label": "g", "parameters": ["nope"]}], "resources": r}
    yield "parameter_groups_twice", {
        "parameters": {"p": {"type": "string", "default": "x"}},
        "parameter_groups": [{"parameters": ["p"]}, {"parameters": ["p"]}], "resources": r}
    yield "resource_no_type", {"resources": {"r": {"properties": {}}}}
    yield "resource_type_list", {"resources": {"r": {"type": ["OS::Heat::None"]}}}
    yield "resource_type_unknown", {"resources": {"r": {"type": "OS::No::Such"}}}
    yield "resource_not_map", {"resources": {"r": "OS::Heat::None"}}
    yield "resource_unknown_key", {"resources": {"r": {**NONE, "foo": 1}}}
    yield "resource_cfn_key", {"resources": {"r": {**NONE, "DependsOn": "x"}}}
    yield "properties_list", {"resources": {"r": {**NONE, "properties": [1]}}}
    yield "metadata_string", {"resources": {"r": {**NONE, "metadata": "x"}}}
    yield "depends_on_unknown", {"resources": {"r": {**NONE, "depends_on": "nope"}}}
    yield "depends_on_map", {"resources": {"r": {**NONE, "depends_on": {"a": 1}}}}
    yield "depends_on_list_ok", {"resources": {"a": NONE, "r": {**NONE, "depends_on": ["a"]}}}
    yield "depends_on_self", {"resources": {"r": {**NONE, "depends_on": ["r"]}}}
    yield "depends_on_cycle", {"resources": {"a": {**NONE, "depends_on": "b"},
                                             "b": {**NONE, "depends_on": "a"}}}
    yield "deletion_policy_bogus", {"resources": {"r": {**NONE, "deletion_policy": "Bogus"}}}
    yield "deletion_policy_retain", {"resources": {"r": {**NONE, "deletion_policy": "Retain"}}}
    yield "deletion_policy_lower", {"resources": {"r": {**NONE, "deletion_policy": "delete"}}}
    yield "update_policy_string", {"resources": {"r": {**NONE, "update_policy": "x"}}}
    yield "resource_condition", {"conditions": {"c": False},
                                 "resources": {"r": {**NONE, "condition": "c"}}}
    yield "resource_condition_inline", {"resources": {"r": {**NONE, "condition": True}}}
    yield "external_id_ok", {"resources": {"r": {**NONE, "external_id": "abc"}}}
    yield "external_id_list", {"resources": {"r": {**NONE, "external_id": [1]}}}
    yield "output_no_value", {"resources": r, "outputs": {"o": {"description": "x"}}}
    yield "output_unknown_key", {"resources": r, "outputs": {"o": {"value": 1, "foo": 2}}}
    yield "output_not_map", {"resources": r, "outputs": {"o": "x"}}
    yield "output_condition", {"conditions": {"c": False}, "resources": r,
                               "outputs": {"o": {"value": 1, "condition": "c"}}}
    yield "param_no_type", {"parameters": {"p": {"default": "x"}}, "resources": r}
    yield "param_bad_type", {"parameters": {"p": {"type": "foo"}}, "resources": r}
    yield "param_unknown_key", {"parameters": {"p": {"type": "string", "foo": 1}},
                                "resources": r}
    yield "param_not_map", {"parameters": {"p": "string"}, "resources": r}
    yield "param_default_bad", {"parameters": {"p": {"type": "number", "default": "abc"}},
                                "resources": r}
    yield "param_cfn_key", {"parameters": {"p": {"Type": "String"}}, "resources": r}
    yield "resource_name_empty", {"resources": {"": NONE}}


def sections() -> Iterator[tuple[str, Case]]:
    for version in HOT_VERSIONS:
        for rule, body in _hot_section_rules():
            yield f"hot-{version}-{rule}", _validate(hot(version, **body))
    for bad in ["2012-01-01", "2013-05-24", "foo", 2013, None]:
        yield f"hot-version-{bad}", _validate({"heat_template_version": bad,
                                                "resources": {"r": NONE}})
    yield "no-version", _validate({"resources": {"r": NONE}})
    for key, version in CFN_VERSIONS:
        for rule, body in _cfn_section_rules():
            yield f"cfn-{key}-{rule}", _validate({key: version, **body})
    yield "cfn-version-bad", _validate({"AWSTemplateFormatVersion": "2011-01-01",
                                        "Resources": {}})
    yield "cfn-both-versions", _validate({"AWSTemplateFormatVersion": "2010-09-09",
                                          "HeatTemplateFormatVersion": "2012-12-12",
                                          "Resources": {}})
    yield "template-list", _validate([1])
    yield "template-string", _validate("heat_template_version: 2013-05-23\nfoo: [")
    yield "template-yaml-ok", _validate("heat_template_version: 2013-05-23\nresources: {}\n")
    yield "template-missing", {"steps": [{"op": "validate", "body": {}}]}


def _cfn_section_rules() -> Iterator[tuple[str, dict[str, Any]]]:
    r = {"r": {"Type": "OS::Heat::None"}}
    yield "minimal", {"Resources": r}
    yield "empty", {}
    yield "unknown_section", {"Resources": r, "Foo": {}}
    yield "hot_section", {"resources": {"r": NONE}}
    yield "resources_list", {"Resources": [1]}
    yield "parameters_list", {"Parameters": [1], "Resources": r}
    yield "outputs_list", {"Outputs": [1], "Resources": r}
    yield "mappings_ok", {"Mappings": {"m": {"k": {"v": 1}}}, "Resources": r}
    yield "mappings_list", {"Mappings": [1], "Resources": r}
    yield "conditions_ok", {"Conditions": {"c": {"Fn::Equals": [1, 1]}}, "Resources": r}
    yield "description_list", {"Description": [1], "Resources": r}
    yield "resource_no_type", {"Resources": {"r": {"Properties": {}}}}
    yield "resource_unknown_key", {"Resources": {"r": {"Type": "OS::Heat::None", "Foo": 1}}}
    yield "resource_hot_key", {"Resources": {"r": {"Type": "OS::Heat::None", "depends_on": []}}}
    yield "dependson_unknown", {"Resources": {"r": {"Type": "OS::Heat::None",
                                                    "DependsOn": "nope"}}}
    yield "deletionpolicy_bogus", {"Resources": {"r": {"Type": "OS::Heat::None",
                                                       "DeletionPolicy": "Bogus"}}}
    yield "deletionpolicy_snapshot", {"Resources": {"r": {"Type": "OS::Heat::None",
                                                          "DeletionPolicy": "Snapshot"}}}
    yield "updatepolicy_string", {"Resources": {"r": {"Type": "OS::Heat::None",
                                                      "UpdatePolicy": "x"}}}
    yield "properties_list", {"Resources": {"r": {"Type": "OS::Heat::None",
                                                  "Properties": [1]}}}
    yield "output_no_value", {"Resources": r, "Outputs": {"o": {"Description": "x"}}}
    yield "output_unknown_key", {"Resources": r, "Outputs": {"o": {"Value": 1, "Foo": 1}}}
    yield "param_no_type", {"Parameters": {"p": {"Default": "x"}}, "Resources": r}
    yield "param_bad_type", {"Parameters": {"p": {"Type": "Foo"}}, "Resources": r}
    yield "param_hot_type", {"Parameters": {"p": {"Type": "string"}}, "Resources": r}
    yield "param_unknown_key", {"Parameters": {"p": {"Type": "String", "Foo": 1}},
                                "Resources": r}
    yield "param_list_type", {"Parameters": {"p": {"Type": "CommaDelimitedList",
                                                   "Default": "a,b"}}, "Resources": r}
    yield "param_number_bad_default", {"Parameters": {"p": {"Type": "Number",
                                                            "Default": "x"}}, "Resources": r}
    yield "condition_unknown", {"Resources": {"r": {"Type": "OS::Heat::None",
                                                    "Condition": "nope"}}}


# -- functions -----------------------------------------------------------------------------

HOT_FUNCTION_ARGS: dict[str, list[Any]] = {
    "get_param": ["p", ["p"], "nope", 5, [], ["p", "x"], ["j", "a"]],
    "get_resource": ["r", "nope", ["r"], 5],
    "get_attr": [["r", "value"], ["r", "show"], ["r"], "r", ["nope", "x"], ["r", "nope"],
                 ["r", "value", 0], []],
    "get_file": ["f.txt", "nope.txt", 5, ["f.txt"]],
    "list_join": [[",", ["a", "b"]], "x", [","], [",", "x"], [",", ["a"], ["b"]],
                  [1, ["a"]], [",", ["a", 1]], [",", [{"a": 1}]]],
    "str_replace": [{"template": "a$x", "params": {"$x": "b"}}, "x", {"template": "a"},
                    {"params": {}}, {"template": 1, "params": {}},
                    {"template": "a", "params": "x"}, {"template": "a", "params": {"a": [1]}},
                    {"template": "a", "params": {}, "extra": 1}],
    "str_replace_strict": [{"template": "a$x", "params": {"$x": "b"}},
                           {"template": "a", "params": {"$x": "b"}}],
    "str_replace_vstrict": [{"template": "a$x", "params": {"$x": "b"}},
                            {"template": "a$x", "params": {"$x": ""}},
                            {"template": "a", "params": {"$x": "b"}}],
    "str_split": [[",", "a,b"], [",", "a,b", 1], [",", "a,b", 5], [","], "x",
                  [",", "a,b", "x"], [1, "a"]],
    "digest": [["sha256", "x"], ["md5", "x"], ["nope", "x"], ["md5"], "x", ["md5", 1]],
    "repeat": [{"for_each": {"%x%": ["a", "b"]}, "template": "v-%x%"},
               {"for_each": {"%x%": "a"}, "template": "%x%"}, {"template": "x"},
               {"for_each": {"%x%": ["a"]}}, "x",
               {"for_each": {"%x%": ["a"], "%y%": [1, 2]}, "template": "%x%%y%",
                "permutations": False},
               {"for_each": {"%x%": ["a"]}, "template": "%x%", "permutations": "x"}],
    "resource_facade": ["metadata", "bogus", 5],
    "map_merge": [[{"a": 1}, {"b": 2}], "x", [{"a": 1}, 1], []],
    "map_replace": [[{"a": 1}, {"keys": {"a": "b"}}], [{"a": 1}, {"values": {1: 2}}],
                    "x", [{"a": 1}], [{"a": 1}, {"bogus": {}}], [{"a": 1}, {"keys": "x"}],
                    [{"a": 1, "b": 2}, {"keys": {"a": "b"}}]],
    "yaql": [{"expression": "$.data.x + 1", "data": {"x": 1}}, {"expression": 1},
             {"expression": "$$$("}, {"data": {}}, "x", {"expression": "$.nope.x", "data": {}}],
    "equals": [[1, 1], [1], "x", [1, 2, 3]],
    "not": [True, [True], "x", {"equals": [1, 1]}],
    "and": [[True, False], "x", [True], [1, 2]],
    "or": [[True, False], "x", [True]],
    "if": [["c", "a", "b"], ["c", "a"], ["nope", "a", "b"], "x", [True, "a", "b"]],
    "contains": [["a", ["a", "b"]], ["a"], ["a", "b"], "x"],
    "filter": [[[1], [1, 2]], [None, [1, None]], [1, [1]], "x", [[1]]],
    "make_url": [{"scheme": "http", "host": "h", "port": 80, "path": "/p",
                  "query": {"a": "b"}}, "x", {"scheme": "http"}, {"host": "h", "port": "x"},
                 {"host": "h", "port": 70000}, {"host": "h", "bogus": 1}],
    "list_concat": [[[1], [2]], "x", [1, [2]], []],
    "list_concat_unique": [[[1], [1, 2]], "x", [[1], 2]],
    "Fn::Select": [[0, ["a"]]],
    "Fn::Join": [[",", ["a"]]],
    "Fn::Split": [[",", "a,b"]],
    "Fn::Replace": [[{"$x": "b"}, "a$x"]],
    "Fn::Base64": ["x"],
    "Fn::MemberListToMap": [["Name", "Value", ["Name.0=a", "Value.0=b"]]],
    "Fn::ResourceFacade": ["Metadata"],
    "Fn::GetAZs": [""],
    "Fn::GetAtt": [["r", "value"]],
    "Ref": ["r"],
}


def _function_template(version: str, fn: str, arg: Any) -> dict[str, Any]:
    body: dict[str, Any] = hot(
        version,
        parameters={"p": {"type": "string", "default": "pv"},
                    "j": {"type": "json", "default": {"a": [1, 2]}}},
        resources={"r": {"type": "OS::Heat::Value", "properties": {"value": "rv"}}},
        outputs={"o": {"value": {fn: arg}}})
    if version >= "2016-10-14" or version in HOT_ALIASES:
        body["conditions"] = {"c": True}
    return body


def functions() -> Iterator[tuple[str, Case]]:
    files = {"f.txt": "file-body"}
    for version in HOT_DATED:
        for fn, args in HOT_FUNCTION_ARGS.items():
            for i, arg in enumerate(args):
                yield (f"hot-{version}-{fn}-{i}",
                       _validate(_function_template(version, fn, arg), files=files))
        # every function's first (well-formed) form evaluated by a real create
        outputs = {f"{fn}": {"value": {fn: args[0]}} for fn, args in HOT_FUNCTION_ARGS.items()}
        template = _function_template(version, "get_param", "p")
        template["outputs"] = outputs
        yield f"hot-{version}-results", _create(template, files=files)
    for key, version in CFN_VERSIONS:
        for fn, args in CFN_FUNCTION_ARGS.items():
            for i, arg in enumerate(args):
                yield f"cfn-{key}-{fn}-{i}", _validate(_cfn_template(key, version, fn, arg))
        template = _cfn_template(key, version, "Ref", "P")
        template["Outputs"] = {fn.replace("::", ""): {"Value": {fn: args[0]}}
                               for fn, args in CFN_FUNCTION_ARGS.items()}
        yield f"cfn-{key}-results", _create(template)


CFN_FUNCTION_ARGS: dict[str, list[Any]] = {
    "Ref": ["P", "R", "nope", ["R"], "AWS::StackName", "AWS::Region"],
    "Fn::GetAtt": [["R", "value"], ["R"], "R", ["nope", "x"], ["R", "nope"]],
    "Fn::Join": [[",", ["a", "b"]], "x", [","], [",", "x"], [1, ["a"]], [",", ["a", 1]]],
    "Fn::Select": [[0, ["a", "b"]], ["1", ["a", "b"]], [5, ["a"]], [0], "x",
                   ["k", {"k": "v"}], [0, "x"], ["x", ["a"]]],
    "Fn::Split": [[",", "a,b"], [","], "x", [1, "a"]],
    "Fn::Replace": [[{"$x": "b"}, "a$x"], [{"$x": "b"}], "x", ["x", "a"]],
    "Fn::Base64": ["x", 1, ["x"]],
    "Fn::FindInMap": [["M", "k", "v"], ["M", "k"], ["nope", "k", "v"], ["M", "nope", "v"],
                      "x"],
    "Fn::GetAZs": ["", "x", [1]],
    "Fn::MemberListToMap": [["Name", "Value", ["Name.0=a", "Value.0=b"]], ["Name"], "x",
                            ["Name", "Value", "x"]],
    "Fn::ResourceFacade": ["Metadata", "bogus"],
    "Fn::If": [["C", "a", "b"], ["C", "a"], ["nope", "a", "b"], "x"],
    "Fn::Equals": [[1, 1], [1], "x"],
    "Fn::Not": [[{"Fn::Equals": [1, 1]}], "x", [1, 2]],
    "Fn::And": [[{"Fn::Equals": [1, 1]}, {"Fn::Equals": [1, 2]}], "x", [True]],
    "Fn::Or": [[{"Fn::Equals": [1, 1]}, {"Fn::Equals": [1, 2]}], "x"],
    "get_param": ["P"],
    "get_attr": [["R", "value"]],
    "list_join": [[",", ["a"]]],
}


def _cfn_template(key: str, version: str, fn: str, arg: Any) -> dict[str, Any]:
    return {key: version,
            "Parameters": {"P": {"Type": "String", "Default": "pv"}},
            "Mappings": {"M": {"k": {"v": "mv"}}},
            "Conditions": {"C": {"Fn::Equals": [1, 1]}},
            "Resources": {"R": {"Type": "OS::Heat::Value", "Properties": {"value": "rv"}}},
            "Outputs": {"O": {"Value": {fn: arg}}}}


# -- parameters ----------------------------------------------------------------------------

PARAM_VALUES: dict[str, list[Any]] = {
    "string": ["x", "", 5, "5"],
    "number": ["1", "1.5", "-2", "x", "", "1e3", "0x10"],
    "json": ['{"a": 1}', "[1, 2]", "x", "", '"s"', "null"],
    "comma_delimited_list": ["a,b", "", "a, b ,c", "a,,b"],
    "boolean": ["true", "yes", "1", "x", "False", "off", "On", ""],
}

CONSTRAINTS: list[tuple[str, str, dict[str, Any], list[Any]]] = [
    ("length", "string", {"length": {"min": 2, "max": 4}}, ["a", "abc", "abcde"]),
    ("length_min", "string", {"length": {"min": 2}}, ["a", "abc"]),
    ("length_list", "comma_delimited_list", {"length": {"min": 2, "max": 3}},
     ["a", "a,b", "a,b,c,d"]),
    ("length_json", "json", {"length": {"max": 1}}, ['{"a":1}', '{"a":1,"b":2}']),
    ("length_number", "number", {"length": {"min": 1}}, ["5"]),
    ("length_bad", "string", {"length": {"min": "x"}}, ["a"]),
    ("length_none", "string", {"length": {}}, ["a"]),
    ("range", "number", {"range": {"min": 1, "max": 10}}, ["0", "5", "11", "10", "1.5"]),
    ("range_max", "number", {"range": {"max": 10}}, ["11", "-100"]),
    ("range_string", "string", {"range": {"min": 1}}, ["5"]),
    ("range_bad", "number", {"range": {"min": "a"}}, ["5"]),
    ("modulo", "number", {"modulo": {"step": 2, "offset": 1}}, ["3", "4", "-1"]),
    ("modulo_no_offset", "number", {"modulo": {"step": 2}}, ["3"]),
    ("modulo_bad_offset", "number", {"modulo": {"step": 2, "offset": 2}}, ["3"]),
    ("modulo_zero", "number", {"modulo": {"step": 0, "offset": 0}}, ["3"]),
    ("modulo_string", "string", {"modulo": {"step": 2, "offset": 1}}, ["3"]),
    ("allowed_values", "string", {"allowed_values": ["a", "b"]}, ["a", "c", ""]),
    ("allowed_values_number", "number", {"allowed_values": [1, 2]}, ["2", "3", "2.0"]),
    ("allowed_values_list", "comma_delimited_list", {"allowed_values": ["a", "b"]},
     ["a,b", "a,c"]),
    ("allowed_values_bool", "boolean", {"allowed_values": [True]}, ["true", "false"]),
    ("allowed_values_string", "string", {"allowed_values": "a"}, ["a"]),
    ("allowed_pattern", "string", {"allowed_pattern": "[a-z]+"}, ["abc", "ABC", "abc1"]),
    ("allowed_pattern_number", "number", {"allowed_pattern": "[0-9]+"}, ["5"]),
    ("allowed_pattern_bad", "string", {"allowed_pattern": "("}, ["a"]),
    ("unknown_constraint", "string", {"bogus": 1}, ["a"]),
    ("two_keys", "string", {"length": {"min": 1}, "allowed_values": ["a"]}, ["a"]),
    ("custom_unknown", "string", {"custom_constraint": "no.such"}, ["a"]),
]

CUSTOM: dict[str, list[str]] = {
    "ip_addr": ["10.0.0.1", "::1", "10.0.0.256", "x"],
    "net_cidr": ["10.0.0.0/24", "10.0.0.1", "10.0.0.0/33"],
    "ip_or_cidr": ["10.0.0.1", "10.0.0.0/8", "x"],
    "mac_addr": ["aa:bb:cc:dd:ee:ff", "aa:bb"],
    "iso_8601": ["2020-01-01T00:00:00Z", "yesterday"],
    "timezone": ["Europe/Paris", "Mars/Base"],
    "cron_expression": ["0 * * * *", "not cron"],
    "dns_name": ["host.example.com", "-bad-.com", "a" * 64 + ".com"],
    "dns_domain": ["example.com.", "example.com", "bad_domain"],
    "rel_dns_name": ["host", "host.", "-h"],
    "expiration": ["2099-01-01T00:00:00Z", "2000-01-01T00:00:00Z", "x"],
    "json_string": ['{"a": 1}', "x"],
}


def _param_template(version: str, definition: dict[str, Any]) -> dict[str, Any]:
    return hot(version, parameters={"p": definition},
               resources={"r": {"type": "OS::Heat::Value",
                                "properties": {"value": {"get_param": "p"}}}})


def parameters() -> Iterator[tuple[str, Case]]:
    for ptype, values in PARAM_VALUES.items():
        for i, value in enumerate(values):
            yield (f"type-{ptype}-{i}",
                   _preview(_param_template(LATEST, {"type": ptype}), parameters={"p": value}))
        yield f"type-{ptype}-missing", _preview(_param_template(LATEST, {"type": ptype}))
        for i, default in enumerate(values[:3]):
            yield (f"type-{ptype}-default-{i}",
                   _validate(_param_template(LATEST, {"type": ptype, "default": default})))
    for version in ("2013-05-23", "2016-10-14", LATEST):
        for name, ptype, constraint, values in CONSTRAINTS:
            for described in (False, True):
                c = {**constraint, "description": "custom text"} if described else constraint
                definition = {"type": ptype, "constraints": [c]}
                for i, value in enumerate(values):
                    yield (f"{version}-{name}-{'d' if described else 'n'}-{i}",
                           _preview(_param_template(version, definition),
                                    parameters={"p": value}))
                yield (f"{version}-{name}-{'d' if described else 'n'}-validate",
                       _validate(_param_template(version, {**definition,
                                                           "default": values[0]})))
    for cname, values in CUSTOM.items():
        definition = {"type": "string", "constraints": [{"custom_constraint": cname}]}
        for i, value in enumerate(values):
            yield (f"custom-{cname}-{i}",
                   _preview(_param_template(LATEST, definition), parameters={"p": value}))
    yield from _parameter_misc()


def _parameter_misc() -> Iterator[tuple[str, Case]]:
    base = {"type": "string"}
    yield "hidden", _create(_param_template(LATEST, {**base, "hidden": True}),
                            parameters={"p": "secret"})
    shared = hot(LATEST, parameters={"word": {**base, "default": "w"}},
                 resources={"word": {"type": "OS::Heat::None"}})
    yield "name_shared_with_resource", _validate(shared)
    yield "name_shared_with_resource_create", _create(shared)
    yield "name_shared_with_resource_preview", _preview(shared)
    yield "unknown_parameter_passed", _preview(_param_template(LATEST, base),
                                               parameters={"p": "a", "zz": "b"})
    yield "parameters_not_map", _preview(_param_template(LATEST, base), parameters=["p"])
    yield "env_parameters", _preview(_param_template(LATEST, base),
                                     environment={"parameters": {"p": "from-env"}})
    yield "env_parameter_defaults", _preview(_param_template(LATEST, base),
                                             environment={"parameter_defaults": {"p": "d"}})
    yield "env_both", _preview(_param_template(LATEST, base),
                               environment={"parameters": {"p": "a"},
                                            "parameter_defaults": {"p": "d"}},
                               parameters={"p": "c"})
    yield "env_unknown_section", _preview(_param_template(LATEST, base),
                                          environment={"bogus": {}}, parameters={"p": "c"})
    yield "env_not_map", _preview(_param_template(LATEST, base), environment=[1],
                                  parameters={"p": "c"})
    yield "label_description", _validate(_param_template(
        LATEST, {**base, "label": "L", "description": "D", "default": "x"}))
    yield "tags", _validate(_param_template(LATEST, {**base, "tags": ["a"], "default": "x"}))
    yield "immutable", _validate(_param_template(LATEST, {**base, "immutable": True,
                                                          "default": "x"}))
    yield "immutable_old", _validate(_param_template("2013-05-23", {**base, "immutable": True,
                                                                    "default": "x"}))
    yield "immutable_update", _create(
        _param_template(LATEST, {**base, "immutable": True}), _update_step(
            {"template": _param_template(LATEST, {**base, "immutable": True}),
             "parameters": {"p": "b"}}), parameters={"p": "a"})
    yield "constraints_not_list", _validate(_param_template(
        LATEST, {**base, "constraints": {"length": {"min": 1}}, "default": "x"}))
    yield "pseudo", _validate(hot(LATEST, resources={"r": {"type": "OS::Heat::Value",
                                                           "properties": {"value": {
                                                               "get_param": "OS::stack_name"}}}}))


def _update_step(body: dict[str, Any], op: str = "update") -> dict[str, Any]:
    return {"op": op, "body": body}


# -- resources -----------------------------------------------------------------------------

BASE_PROPS: dict[str, dict[str, Any]] = {
    "OS::Heat::None": {},
    "OS::Heat::Value": {"value": "v"},
    "OS::Heat::RandomString": {"length": 8},
    "OS::Heat::TestResource": {"value": "t"},
    "OS::Heat::Delay": {"min_wait": 0},
    "OS::Heat::SoftwareConfig": {"config": "echo hi", "group": "script"},
    "OS::Heat::StructuredConfig": {"config": {"a": 1}},
    "OS::Heat::CloudConfig": {"cloud_config": {"runcmd": ["x"]}},
    "OS::Heat::MultipartMime": {"parts": []},
    "OS::Heat::SoftwareComponent": {"configs": [{"actions": ["CREATE"], "config": "x",
                                                 "tool": "script"}]},
    "OS::Heat::DeployedServer": {"name": "srv"},
    "OS::Heat::WaitConditionHandle": {},
    "OS::Heat::UpdateWaitConditionHandle": {},
    "AWS::CloudFormation::WaitConditionHandle": {},
}

CHANGED: dict[str, Any] = {"string": "changed", "integer": 9, "number": 2.5,
                           "boolean": True, "map": {"k": "changed"}, "list": ["changed"],
                           "any": "changed"}
WRONG: dict[str, list[Any]] = {"string": [{"a": 1}, [1]], "integer": ["abc", 1.5],
                               "number": ["abc"], "boolean": ["maybe", 5], "map": ["x", [1]],
                               "list": ["x", {"a": 1}], "any": []}


def _violations(schema: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    for c in schema.get("constraints", []):
        if "allowed_values" in c:
            yield "allowed", (["ZZZ"] if schema["type"] == "list" else "ZZZ")
        if "range" in c:
            if "max" in c["range"]:
                yield "over", c["range"]["max"] + 1
            if "min" in c["range"]:
                yield "under", c["range"]["min"] - 1
        if "length" in c:
            if "min" in c["length"]:
                yield "short", []
            if "max" in c["length"]:
                yield "long", ["x"] * (c["length"]["max"] + 1)


def resources() -> Iterator[tuple[str, Case]]:
    for rtype in sorted(SCHEMAS):
        schema = SCHEMAS[rtype]
        base = BASE_PROPS.get(rtype)
        short = rtype.split("::")[0] + "-" + rtype.split("::")[-1]
        if base is None:
            base = _required_base(rtype)

        def tmpl(props: dict[str, Any], outputs: dict[str, Any] | None = None,
                 rtype: str = rtype) -> dict[str, Any]:
            return hot(LATEST, resources={"r": {"type": rtype, "properties": props}},
                       outputs=outputs or {})
        yield f"{short}-base", _preview(tmpl(base), )
        yield f"{short}-unknown-prop", _preview(tmpl({**base, "bogus_prop": 1}))
        for prop, ps in sorted(schema["properties"].items()):
            for i, wrong in enumerate(WRONG.get(ps["type"], [])):
                yield f"{short}-{prop}-wrong-{i}", _preview(tmpl({**base, prop: wrong}))
            for label, value in _violations(ps):
                yield f"{short}-{prop}-{label}", _preview(tmpl({**base, prop: value}))
            if ps.get("required"):
                missing = {k: v for k, v in base.items() if k != prop}
                yield f"{short}-{prop}-missing", _preview(tmpl(missing))
        if rtype not in BASE_PROPS:
            continue
        # attributes (values are random for some types, so compared by shape)
        outputs: dict[str, Any] = {a: {"value": {"get_attr": ["r", a]}}
                                   for a in schema["attributes"]}
        outputs["ref"] = {"value": {"get_resource": "r"}}
        yield f"{short}-attributes", _create(tmpl(base, outputs), random=True)
        yield f"{short}-unknown-attribute", _create(tmpl(base, {"o": {"value": {
            "get_attr": ["r", "bogus_attr"]}}}))
        # update behaviour per property: preview, then the real update
        yield f"{short}-update-same", _create(tmpl(base), _update_step(
            {"template": tmpl(base)}, "update_preview"), _update_step({"template": tmpl(base)}))
        for prop, ps in sorted(schema["properties"].items()):
            if rtype == "OS::Heat::TestResource" and prop in (
                    "fail", "wait_secs", "action_wait_secs", "attr_wait_secs",
                    "constraint_prop_secs", "client_name", "entity_name"):
                continue
            if rtype == "OS::Heat::DeployedServer" and prop == "software_config_transport":
                continue
            new = _changed_value(rtype, prop, ps)
            if new is None:
                continue
            changed = tmpl({**base, prop: new})
            yield f"{short}-update-{prop}", _create(
                tmpl(base), _update_step({"template": changed}, "update_preview"),
                _update_step({"template": changed}))


def _changed_value(rtype: str, prop: str, ps: dict[str, Any]) -> Any:
    special: dict[tuple[str, str], Any] = {
        ("OS::Heat::RandomString", "character_classes"): [{"class": "digits", "min": 1}],
        ("OS::Heat::RandomString", "character_sequences"): [{"sequence": "ab", "min": 1}],
        ("OS::Heat::RandomString", "length"): 12,
        ("OS::Heat::Delay", "actions"): ["CREATE"],
        ("OS::Heat::Delay", "min_wait"): 0.0,
        ("OS::Heat::Delay", "max_jitter"): 0,
        ("OS::Heat::Delay", "jitter_multiplier"): 0.5,
        ("OS::Heat::Value", "type"): "string",
        ("OS::Heat::SoftwareConfig", "inputs"): [{"name": "i"}],
        ("OS::Heat::SoftwareConfig", "outputs"): [{"name": "o"}],
        ("OS::Heat::StructuredConfig", "inputs"): [{"name": "i"}],
        ("OS::Heat::StructuredConfig", "outputs"): [{"name": "o"}],
        ("OS::Heat::SoftwareComponent", "inputs"): [{"name": "i"}],
        ("OS::Heat::SoftwareComponent", "outputs"): [{"name": "o"}],
        ("OS::Heat::SoftwareComponent", "configs"): [{"actions": ["UPDATE"], "config": "y",
                                                      "tool": "script"}],
        ("OS::Heat::MultipartMime", "parts"): [{"config": "x"}],
        ("OS::Heat::WaitConditionHandle", "signal_transport"): "TOKEN_SIGNAL",
        ("OS::Heat::TestResource", "update_replace"): True,
    }
    if (rtype, prop) in special:
        return special[(rtype, prop)]
    if ps.get("constraints"):
        return None
    return CHANGED.get(ps["type"])


def _required_base(rtype: str) -> dict[str, Any]:
    props = SCHEMAS[rtype]["properties"]
    return {p: CHANGED.get(ps["type"], "x") for p, ps in props.items() if ps.get("required")}


# -- native API error paths ----------------------------------------------------------------

SIMPLE = hot(LATEST, resources={"r": {"type": "OS::Heat::Value", "properties": {"value": 1}}},
             outputs={"o": {"value": {"get_attr": ["r", "value"]}}})
UNKNOWN = "00000000-0000-0000-0000-000000000000"


def _req(method: str, path: str, body: Any = None, keep: list[str] | None = None,
         raw: bool = False) -> dict[str, Any]:
    step: dict[str, Any] = {"op": "request", "method": method, "path": path}
    if body is not None:
        step["body"] = body
    if keep:
        step["keep"] = keep
    if raw:
        step["raw"] = True
    return step


def _with_stack(*steps: dict[str, Any], template: Any = SIMPLE, **extra: Any) -> Case:
    return _create(template, *steps, **extra)


def api() -> Iterator[tuple[str, Case]]:
    bodies: dict[str, Any] = {
        "no_name": {"template": SIMPLE},
        "no_template": {"stack_name": "{name}"},
        "name_number": {"stack_name": 5, "template": SIMPLE},
        "name_bad_chars": {"stack_name": "a b", "template": SIMPLE},
        "name_leading_digit": {"stack_name": "1abc", "template": SIMPLE},
        "name_too_long": {"stack_name": "a" * 256, "template": SIMPLE},
        "name_empty": {"stack_name": "", "template": SIMPLE},
        "template_list": {"stack_name": "{name}", "template": [1]},
        "template_number": {"stack_name": "{name}", "template": 5},
        "template_bad_yaml": {"stack_name": "{name}", "template": "a: [\n"},
        "template_url_and_template": {"stack_name": "{name}", "template": SIMPLE,
                                      "template_url": "http://127.0.0.1:1/t"},
        "template_url_unreachable": {"stack_name": "{name}", "template_url": "http://127.0.0.1:1/t"},
        "template_url_scheme": {"stack_name": "{name}", "template_url": "ftp://h/t"},
        "timeout_string": {"stack_name": "{name}", "template": SIMPLE, "timeout_mins": "abc"},
        "timeout_negative": {"stack_name": "{name}", "template": SIMPLE, "timeout_mins": -1},
        "disable_rollback_string": {"stack_name": "{name}", "template": SIMPLE,
                                    "disable_rollback": "maybe"},
        "tags_number": {"stack_name": "{name}", "template": SIMPLE, "tags": 5},
        "files_list": {"stack_name": "{name}", "template": SIMPLE, "files": [1]},
        "environment_string": {"stack_name": "{name}", "template": SIMPLE, "environment": "a: ["},
        "parameters_string": {"stack_name": "{name}", "template": SIMPLE, "parameters": "x"},
        "body_list": [1],
        "body_string": "x",
        "empty": {},
    }
    for label, body in bodies.items():
        yield f"create-{label}", {"steps": [_req("POST", "/stacks", body)]}
        if isinstance(body, dict) and label not in ("no_name", "name_number", "name_bad_chars",
                                                    "name_leading_digit", "name_too_long",
                                                    "name_empty"):
            yield f"preview-{label}", {"steps": [_req("POST", "/stacks/preview", body)]}
            yield f"validate-{label}", {"steps": [_req("POST", "/validate", body)]}
    for raw, label in [("{", "truncated"), ("not json", "not_json"), ("", "empty_raw"),
                       ("[]", "array"), ("null", "null")]:
        for path in ("/stacks", "/validate", "/stacks/preview"):
            yield f"raw-{label}-{path.strip('/').replace('/', '-')}", {
                "steps": [_req("POST", path, raw, raw=True)]}
    # unknown ids
    unknown_paths = [
        ("GET", f"/stacks/nope/{UNKNOWN}"), ("GET", "/stacks/nope"),
        ("GET", f"/stacks/{UNKNOWN}"), ("DELETE", f"/stacks/nope/{UNKNOWN}"),
        ("PUT", f"/stacks/nope/{UNKNOWN}"), ("PATCH", f"/stacks/nope/{UNKNOWN}"),
        ("GET", f"/stacks/nope/{UNKNOWN}/resources"),
        ("GET", f"/stacks/nope/{UNKNOWN}/events"),
        ("GET", f"/stacks/nope/{UNKNOWN}/outputs"),
        ("GET", f"/stacks/nope/{UNKNOWN}/template"),
        ("GET", f"/stacks/nope/{UNKNOWN}/environment"),
        ("GET", f"/stacks/nope/{UNKNOWN}/files"),
        ("GET", f"/stacks/nope/{UNKNOWN}/snapshots"),
        ("POST", f"/stacks/nope/{UNKNOWN}/actions"),
        ("GET", f"/stacks/nope/{UNKNOWN}/abandon"),
        ("GET", f"/stacks/nope/{UNKNOWN}/export"),
        ("GET", f"/software_configs/{UNKNOWN}"), ("DELETE", f"/software_configs/{UNKNOWN}"),
        ("GET", f"/software_deployments/{UNKNOWN}"),
        ("DELETE", f"/software_deployments/{UNKNOWN}"),
        ("GET", "/resource_types/OS::No::Such"),
        ("GET", "/resource_types/OS::No::Such/template"),
        ("GET", "/template_versions/heat_template_version.1999-01-01/functions"),
        ("GET", "/stacks/nope/resources"),
    ]
    for method, path in unknown_paths:
        body = {"suspend": None} if path.endswith("actions") else (
            {"template": SIMPLE} if method in ("PUT", "PATCH") else None)
        yield f"unknown-{method}-{path.strip('/').replace('/', '_')}", {
            "steps": [_req(method, path, body)]}
    # against an existing stack
    on_stack = [
        ("resource-unknown", _req("GET", "/stacks/{stack}/resources/nope")),
        ("resource-metadata-unknown", _req("GET", "/stacks/{stack}/resources/nope/metadata")),
        ("resource-events-unknown", _req("GET", "/stacks/{stack}/resources/nope/events")),
        ("event-unknown", _req("GET", f"/stacks/{{stack}}/resources/r/events/{UNKNOWN}")),
        ("output-unknown", _req("GET", "/stacks/{stack}/outputs/nope")),
        ("output-known", _req("GET", "/stacks/{stack}/outputs/o", keep=["output"])),
        ("snapshot-unknown", _req("GET", f"/stacks/{{stack}}/snapshots/{UNKNOWN}")),
        ("snapshot-delete-unknown", _req("DELETE", f"/stacks/{{stack}}/snapshots/{UNKNOWN}")),
        ("restore-unknown", _req("POST", f"/stacks/{{stack}}/snapshots/{UNKNOWN}/restore")),
        ("action-empty", _req("POST", "/stacks/{stack}/actions", {})),
        ("action-two", _req("POST", "/stacks/{stack}/actions",
                            {"suspend": None, "resume": None})),
        ("action-bogus", _req("POST", "/stacks/{stack}/actions", {"bogus": None})),
        ("action-list", _req("POST", "/stacks/{stack}/actions", [1])),
        ("resume-not-suspended", _req("POST", "/stacks/{stack}/actions", {"resume": None})),
        ("cancel-not-updating", _req("POST", "/stacks/{stack}/actions",
                                     {"cancel_update": None})),
        ("cancel-norollback-not-updating", _req("POST", "/stacks/{stack}/actions",
                                                {"cancel_without_rollback": None})),
        ("signal-no-hook", _req("POST", "/stacks/{stack}/resources/r/signal",
                                {"unset_hook": "pre-create"})),
        ("signal-unknown-resource", _req("POST", "/stacks/{stack}/resources/nope/signal", {})),
        ("signal-value", _req("POST", "/stacks/{stack}/resources/r/signal", {})),
        ("mark-unhealthy-bad", _req("PATCH", "/stacks/{stack}/resources/r",
                                    {"mark_unhealthy": "maybe"})),
        ("mark-unhealthy-unknown-key", _req("PATCH", "/stacks/{stack}/resources/r",
                                            {"bogus": True})),
        ("mark-unhealthy-unknown-resource", _req("PATCH", "/stacks/{stack}/resources/nope",
                                                 {"mark_unhealthy": True})),
        ("update-bad-template", _req("PUT", "/stacks/{stack}", {"template": [1]})),
        ("update-no-template", _req("PUT", "/stacks/{stack}", {})),
        ("update-bad-param", _req("PATCH", "/stacks/{stack}", {"parameters": {"zz": 1}})),
        ("update-existing-bad", _req("PATCH", "/stacks/{stack}", {"existing": "maybe"})),
        ("update-preview-bad", _req("PUT", "/stacks/{stack}/preview", {"template": [1]})),
        ("update-preview-patch", _req("PATCH", "/stacks/{stack}/preview", {})),
        ("duplicate-name", _req("POST", "/stacks", {"stack_name": "{name}",
                                                    "template": SIMPLE})),
        ("resources-bad-depth", _req("GET", "/stacks/{stack}/resources?nested_depth=x")),
        ("resources-neg-depth", _req("GET", "/stacks/{stack}/resources?nested_depth=-1")),
        ("resources-filter", _req("GET", "/stacks/{stack}/resources?name=r", keep=["len"])),
        ("resources-detail", _req("GET", "/stacks/{stack}/resources?with_detail=maybe")),
        ("events-bad-limit", _req("GET", "/stacks/{stack}/events?limit=x")),
        ("events-neg-limit", _req("GET", "/stacks/{stack}/events?limit=-1")),
        ("events-bad-sort", _req("GET", "/stacks/{stack}/events?sort_keys=bogus")),
        ("events-bad-dir", _req("GET", "/stacks/{stack}/events?sort_dir=sideways")),
        ("events-bad-marker", _req("GET", f"/stacks/{{stack}}/events?marker={UNKNOWN}")),
        ("events-filter", _req("GET", "/stacks/{stack}/events?resource_action=DELETE",
                               keep=["len"])),
        ("show-resource-attr", _req("GET", "/stacks/{stack}/resources/r",
                                    keep=["resource_name", "resource_status",
                                          "resource_type", "attributes"])),
        ("template", _req("GET", "/stacks/{stack}/template")),
        ("outputs-list", _req("GET", "/stacks/{stack}/outputs", keep=["outputs"])),
        ("snapshot-bad-body", _req("POST", "/stacks/{stack}/snapshots", [1])),
        ("abandon", _req("DELETE", "/stacks/{stack}/abandon")),
    ]
    for label, step in on_stack:
        yield f"stack-{label}", _with_stack(step)
    # stack list filters
    for query in ["limit=x", "limit=-1", "sort_keys=bogus", "sort_dir=up",
                  f"marker={UNKNOWN}", "show_deleted=maybe", "show_nested=maybe",
                  "with_count=maybe", "global_tenant=maybe", "status=BOGUS", "tags=a",
                  "not_tags=a", "sort_keys=stack_name&sort_dir=asc", "show_hidden=x"]:
        # other cases' stacks come and go meanwhile: only the status is stable
        yield f"list-{query}", {"steps": [_req("GET", f"/stacks?{query}")]}
    # wrong states: suspend twice, resume, delete while suspended, check
    yield "state-suspend-twice", _with_stack(
        _req("POST", "/stacks/{stack}/actions", {"suspend": None}), {"op": "settle"},
        _req("POST", "/stacks/{stack}/actions", {"suspend": None}), {"op": "settle"})
    yield "state-suspend-resume", _with_stack(
        _req("POST", "/stacks/{stack}/actions", {"suspend": None}), {"op": "settle"},
        _req("POST", "/stacks/{stack}/actions", {"resume": None}), {"op": "settle"})
    yield "state-check", _with_stack(
        _req("POST", "/stacks/{stack}/actions", {"check": None}), {"op": "settle"})
    yield "state-update-while-suspended", _with_stack(
        _req("POST", "/stacks/{stack}/actions", {"suspend": None}), {"op": "settle"},
        _update_step({"template": SIMPLE}))
    yield "state-snapshot-restore", _with_stack(
        _req("POST", "/stacks/{stack}/snapshots", {"name": "s"}, keep=["status", "name"]),
        {"op": "settle"}, _req("GET", "/stacks/{stack}/snapshots", keep=["len"]))
    slow = hot(LATEST, resources={"r": {"type": "OS::Heat::TestResource",
                                        "properties": {"wait_secs": 3}}})
    yield "state-update-in-progress", {"steps": [
        {"op": "create", "body": {"stack_name": "{name}", "template": SIMPLE}},
        _req("PUT", "/stacks/{stack}", {"template": slow}),
        _req("PUT", "/stacks/{stack}", {"template": SIMPLE}),
        {"op": "settle"}]}
    yield "state-suspend-in-progress", {"steps": [
        {"op": "create", "body": {"stack_name": "{name}", "template": SIMPLE}},
        _req("PUT", "/stacks/{stack}", {"template": slow}),
        _req("POST", "/stacks/{stack}/actions", {"suspend": None}),
        {"op": "settle"}]}
    yield "state-failed-create", _create(hot(LATEST, resources={
        "r": {"type": "OS::Heat::TestResource", "properties": {"fail": True}}}))
    yield "state-failed-update-rollback", _with_stack(_update_step(
        {"template": hot(LATEST, resources={"r": {"type": "OS::Heat::TestResource",
                                                  "properties": {"fail": True}}}),
         "disable_rollback": False}))
    yield "state-timeout", _create(slow, timeout_mins=0)


# -- nested stacks, provider templates, groups ---------------------------------------------

CHILD = hot(LATEST, parameters={"x": {"type": "string", "default": "d"}},
            resources={"v": {"type": "OS::Heat::Value",
                             "properties": {"value": {"get_param": "x"}}}},
            outputs={"out": {"value": {"get_attr": ["v", "value"]}}})
CHILD_JSON = json.dumps(CHILD)


def nested() -> Iterator[tuple[str, Case]]:
    files = {"child.yaml": CHILD_JSON}
    def provider(props: Any, outputs: Any = None, *, env: Any = None,
                 tfiles: Any = None, rtype: str = "child.yaml") -> Case:
        template = hot(LATEST, resources={"p": {"type": rtype, "properties": props}},
                       outputs=outputs or {"o": {"value": {"get_attr": ["p", "out"]}}})
        body: dict[str, Any] = {"files": files if tfiles is None else tfiles}
        if env is not None:
            body["environment"] = env
        case = _create(template, **body)
        case["steps"][0]["nested_depth"] = 3
        return case
    yield "provider-ok", provider({"x": "given"})
    yield "provider-default", provider({})
    yield "provider-unknown-prop", provider({"bogus": 1})
    yield "provider-missing-file", provider({}, tfiles={})
    yield "provider-bad-file", provider({}, tfiles={"child.yaml": "a: ["})
    yield "provider-not-template", provider({}, tfiles={"child.yaml": "[1]"})
    yield "provider-unknown-attr", provider({}, {"o": {"value": {"get_attr": ["p", "nope"]}}})
    yield "provider-resource-attr", provider(
        {}, {"o": {"value": {"get_attr": ["p", "resource.v.value"]}}})
    yield "provider-ref", provider({}, {"o": {"value": {"get_resource": "p"}}})
    yield "provider-alias", provider({"x": "y"}, env={"resource_registry": {
        "My::Child": "child.yaml"}}, rtype="My::Child")
    yield "provider-glob", provider({"x": "y"}, env={"resource_registry": {
        "My::*": "OS::Heat::None"}}, rtype="My::Thing")
    yield "provider-alias-unknown", provider({}, rtype="My::Unmapped")
    yield "provider-per-resource", provider({}, env={"resource_registry": {
        "resources": {"p": {"My::Child": "OS::Heat::None"}}}}, rtype="My::Child")
    yield "provider-failing-child", provider({}, tfiles={"child.yaml": json.dumps(hot(
        LATEST, resources={"f": {"type": "OS::Heat::TestResource",
                                 "properties": {"fail": True}}}))})
    yield "provider-child-bad-function", provider({}, tfiles={"child.yaml": json.dumps(hot(
        LATEST, resources={"f": {"type": "OS::Heat::Value",
                                 "properties": {"value": {"get_param": "nope"}}}}))})
    # a provider's list and map properties take the parameters' text forms
    typed = json.dumps(hot(LATEST, parameters={
        "l": {"type": "comma_delimited_list", "default": []},
        "j": {"type": "json", "default": {}}},
        resources={"v": {"type": "OS::Heat::Value", "properties": {"value": {
            "get_param": "l"}}}},
        outputs={"out": {"value": {"get_attr": ["v", "value"]}},
                 "j": {"value": {"get_param": "j"}}}))
    for label, props in [("list-from-string", {"l": "a,b,c"}),
                         ("list-from-empty-string", {"l": ""}),
                         ("map-from-string", {"j": '{"k": 1}'}),
                         ("map-from-list", {"j": [1, 2]})]:
        yield f"provider-{label}", provider(
            props, {"o": {"value": {"get_attr": ["p", "out"]}},
                    "j": {"value": {"get_attr": ["p", "j"]}}},
            tfiles={"child.yaml": typed})
    # a provider template's outputs may use its parent resource's facade
    yield "provider-facade", _create(
        hot(LATEST, resources={"p": {"type": "child.yaml", "metadata": {"m": 1},
                                     "deletion_policy": "Retain"}},
            outputs={"o": {"value": {"get_attr": ["p", "md"]}},
                     "d": {"value": {"get_attr": ["p", "dp"]}}}),
        files={"child.yaml": json.dumps(hot(LATEST, resources={"a": NONE}, outputs={
            "md": {"value": {"resource_facade": "metadata"}},
            "dp": {"value": {"resource_facade": "deletion_policy"}}}))})
    # OS::Heat::Stack: its endpoint and template are checked when the stack is validated
    remote_child = json.dumps(hot(LATEST, resources={"a": NONE}))
    for label, props in [
            ("region", {"context": {"region_name": "Nowhere"}, "template": remote_child}),
            ("own-region", {"context": {"region_name": "RegionOne"},
                            "template": remote_child}),
            ("credentials", {"context": {"credential_secret_id": "abc"},
                             "template": remote_child}),
            ("unknown-type", {"context": {"region_name": "RegionOne"},
                              "template": json.dumps(hot(LATEST, resources={
                                  "a": {"type": "No::Such"}}))}),
            ("region-and-bad-template", {"context": {"region_name": "Nowhere"},
                                         "template": "a: ["})]:
        template = hot(LATEST, resources={"s": {"type": "OS::Heat::Stack",
                                                "properties": props}})
        yield f"os-heat-stack-context-{label}", _create(template)
        yield f"os-heat-stack-context-{label}-preview", _preview(template)
        yield f"os-heat-stack-context-{label}-validate", _validate(template)
    for i, child in enumerate([CHILD, hot(LATEST, resources={"a": NONE})]):
        stack_res = hot(LATEST, resources={"s": {"type": "OS::Heat::Stack", "properties": {
            "template": json.dumps(child), "parameters": {"x": "p"}}}},
            outputs={"o": {"value": {"get_attr": ["s", "outputs"]}}})
        yield f"os-heat-stack-{i}", _create(stack_res)
    yield "os-heat-stack-bad-template", _create(hot(LATEST, resources={"s": {
        "type": "OS::Heat::Stack", "properties": {"template": "a: ["}}}))
    yield "os-heat-stack-no-template", _create(hot(LATEST, resources={"s": {
        "type": "OS::Heat::Stack", "properties": {}}}))
    yield "aws-stack-no-url", _create(hot(LATEST, resources={"s": {
        "type": "AWS::CloudFormation::Stack", "properties": {}}}))
    # groups
    def group(props: dict[str, Any], outputs: dict[str, Any] | None = None,
              rtype: str = "OS::Heat::ResourceGroup", random: bool = False,
              **extra: Any) -> Case:
        template = hot(LATEST, resources={"g": {"type": rtype, "properties": props}},
                       outputs=outputs or {})
        case = _create(template, random=random, **extra)
        case["steps"][0]["nested_depth"] = 2
        return case
    member = {"type": "OS::Heat::Value", "properties": {"value": "m-%index%"}}
    yield "group-ok", group({"count": 3, "resource_def": member},
                            {"refs": {"value": {"get_attr": ["g", "refs"]}},
                             "values": {"value": {"get_attr": ["g", "value"]}},
                             "one": {"value": {"get_attr": ["g", "resource.1.value"]}},
                             "map": {"value": {"get_attr": ["g", "refs_map"]}}})
    yield "group-zero", group({"count": 0, "resource_def": member},
                              {"values": {"value": {"get_attr": ["g", "value"]}}})
    yield "group-negative", group({"count": -1, "resource_def": member})
    yield "group-no-def", group({"count": 1})
    yield "group-def-no-type", group({"count": 1, "resource_def": {"properties": {}}})
    yield "group-def-unknown-type", group({"count": 1, "resource_def": {"type": "No::Such"}})
    yield "group-def-bad-prop", group({"count": 1, "resource_def": {
        "type": "OS::Heat::RandomString", "properties": {"length": "x"}}})
    yield "group-index-var", group({"count": 2, "index_var": "__i__", "resource_def": {
        "type": "OS::Heat::Value", "properties": {"value": "v__i__"}}},
        {"values": {"value": {"get_attr": ["g", "value"]}}})
    yield "group-removal", group({"count": 3, "resource_def": member,
                                  "removal_policies": [{"resource_list": ["1"]}]},
                                 {"refs": {"value": {"get_attr": ["g", "refs_map"]}}})
    yield "group-bad-attr", group({"count": 1, "resource_def": member},
                                  {"o": {"value": {"get_attr": ["g", "resource.9.value"]}}})
    yield "group-provider-member", group({"count": 2, "resource_def": {"type": "child.yaml"}},
                                         {"o": {"value": {"get_attr": ["g", "out"]}}},
                                         files=files)
    yield "group-scale", _create(
        hot(LATEST, resources={"g": {"type": "OS::Heat::ResourceGroup", "properties": {
            "count": 2, "resource_def": member}}}),
        _update_step({"template": hot(LATEST, resources={"g": {
            "type": "OS::Heat::ResourceGroup", "properties": {"count": 4,
                                                             "resource_def": member}}})}),
        _update_step({"template": hot(LATEST, resources={"g": {
            "type": "OS::Heat::ResourceGroup", "properties": {"count": 1,
                                                             "resource_def": member}}})}))
    yield "chain-ok", group({"resources": ["OS::Heat::None", "OS::Heat::RandomString"]},
                            {"refs": {"value": {"get_attr": ["g", "refs"]}}},
                            rtype="OS::Heat::ResourceChain", random=True)
    yield "chain-concurrent", group({"resources": ["OS::Heat::None"], "concurrent": True},
                                    rtype="OS::Heat::ResourceChain")
    yield "chain-unknown-type", group({"resources": ["No::Such"]},
                                      rtype="OS::Heat::ResourceChain")
    yield "chain-bad-props", group({"resources": ["OS::Heat::None"],
                                    "resource_properties": "x"},
                                   rtype="OS::Heat::ResourceChain")
    yield "asg-ok", group({"min_size": 1, "max_size": 3, "resource": member},
                          {"size": {"value": {"get_attr": ["g", "current_size"]}}},
                          rtype="OS::Heat::AutoScalingGroup")
    yield "asg-min-over-max", group({"min_size": 3, "max_size": 1, "resource": member},
                                    rtype="OS::Heat::AutoScalingGroup")
    yield "asg-desired-out", group({"min_size": 1, "max_size": 2, "desired_capacity": 5,
                                    "resource": member}, rtype="OS::Heat::AutoScalingGroup")
    for label, template in [
        ("group", hot(LATEST, resources={"g": {"type": "OS::Heat::ResourceGroup", "properties": {
            "count": 2, "resource_def": member}}})),
        ("provider", hot(LATEST, resources={"p": {"type": "child.yaml"}}))]:
        yield f"preview-{label}", _preview(template, files=files)
        yield f"validate-show-nested-{label}", {"steps": [_req(
            "POST", "/validate?show_nested=true", {"template": template, "files": files},
            keep=["Parameters", "NestedParameters"])]}


# -- hooks, external ids, outputs ----------------------------------------------------------

def hooks() -> Iterator[tuple[str, Case]]:
    two = hot(LATEST, resources={"a": {"type": "OS::Heat::Value", "properties": {"value": 1}},
                                 "b": {"type": "OS::Heat::Value",
                                       "properties": {"value": {"get_attr": ["a", "value"]}}}})
    def env(hook: Any, name: str = "a") -> dict[str, Any]:
        return {"resource_registry": {"resources": {name: {"hooks": hook}}}}
    yield "pre-create", {"steps": [
        {"op": "create_nowait", "body": {"stack_name": "{name}", "template": two,
                                         "environment": env("pre-create")}}]}
    def paused(hook: Any, *after: dict[str, Any]) -> Case:
        return {"steps": [
            {"op": "create_nowait", "body": {"stack_name": "{name}", "template": two,
                                             "environment": env(hook)}},
            {"op": "wait_event", "text": "paused until Hook"}, *after]}
    def clear(name: str, hook: str) -> dict[str, Any]:
        return _req("POST", f"/stacks/{{stack}}/resources/{name}/signal", {"unset_hook": hook})
    settle = {"op": "settle"}
    yield "clear-pre-create", paused("pre-create", clear("a", "pre-create"), settle)
    yield "clear-post-create", paused("post-create", clear("a", "post-create"), settle)
    yield "clear-pre-then-post", paused(
        ["pre-create", "post-create"], clear("a", "pre-create"),
        {"op": "wait_event", "text": "paused until Hook post-create"},
        clear("a", "post-create"), settle)
    # a refused signal leaves the hook set: the case ends there (the stack stays paused)
    yield "clear-wrong-hook", paused("pre-create", clear("a", "pre-update"))
    yield "clear-bogus-hook", paused("pre-create", clear("a", "bogus"))
    yield "clear-twice", paused("pre-create", clear("a", "pre-create"),
                                clear("a", "pre-create"))
    yield "clear-other-resource", paused("pre-create", clear("b", "pre-create"))
    yield "glob-hook", {"steps": [
        {"op": "create_nowait", "body": {"stack_name": "{name}", "template": two,
                                         "environment": env("pre-create", "*")}},
        {"op": "wait_event", "text": "paused until Hook"},
        clear("a", "pre-create"),
        {"op": "wait_event", "text": "paused until Hook pre-create is cleared"}]}
    yield "bad-hook-name", _create(two, environment=env("pre-bogus"))
    yield "hook-not-list", _create(two, environment=env({"a": 1}))
    yield "pre-update", {"steps": [
        {"op": "create", "body": {"stack_name": "{name}", "template": two,
                                  "environment": env("pre-update")}},
        _req("PUT", "/stacks/{stack}", {"template": hot(LATEST, resources={
            "a": {"type": "OS::Heat::Value", "properties": {"value": 2}},
            "b": {"type": "OS::Heat::Value", "properties": {"value": 3}}}),
            "environment": env("pre-update")}),
        {"op": "wait_event", "text": "paused until Hook pre-update"},
        _req("POST", "/stacks/{stack}/resources/a/signal", {"unset_hook": "pre-update"}),
        {"op": "settle"}]}
    yield "pre-delete", {"steps": [
        {"op": "create", "body": {"stack_name": "{name}", "template": two,
                                  "environment": env("pre-delete")}},
        _req("DELETE", "/stacks/{stack}"),
        {"op": "wait_event", "text": "paused until Hook pre-delete"},
        _req("POST", "/stacks/{stack}/resources/a/signal", {"unset_hook": "pre-delete"}),
        {"op": "settle", "resources": False}]}


def external() -> Iterator[tuple[str, Case]]:
    for rtype in ["OS::Heat::None", "OS::Heat::Value", "OS::Heat::RandomString",
                  "OS::Heat::TestResource", "OS::Heat::SoftwareConfig"]:
        props = BASE_PROPS.get(rtype, {})
        template = hot(LATEST, resources={"r": {"type": rtype, "properties": props,
                                                "external_id": "ext-1"}},
                       outputs={"ref": {"value": {"get_resource": "r"}}})
        yield f"external-{rtype.split('::')[-1]}", _create(template)
    yield "external-old-version", _validate(hot("2016-10-14", resources={"r": {
        **NONE, "external_id": "x"}}))
    changed = hot(LATEST, resources={"r": {**NONE, "external_id": "ext-2"}})
    yield "external-update-id", _create(
        hot(LATEST, resources={"r": {**NONE, "external_id": "ext-1"}}),
        _update_step({"template": changed}))


def outputs() -> Iterator[tuple[str, Case]]:
    res = {"r": {"type": "OS::Heat::Value", "properties": {"value": {"a": [1, 2]}}},
           "f": {"type": "OS::Heat::TestResource", "properties": {"value": "x"}}}
    values: dict[str, Any] = {
        "literal": 1, "map": {"a": 1}, "null": None,
        "attr_path": {"get_attr": ["r", "value", "a", 1]},
        "attr_path_bad": {"get_attr": ["r", "value", "zz"]},
        "attr_path_index_bad": {"get_attr": ["r", "value", "a", 5]},
        "attr_show": {"get_attr": ["f", "show", "resource_type"]},
        "unknown_attr": {"get_attr": ["f", "nope"]},
        "test_output": {"get_attr": ["f", "output"]},
        "all_attrs": {"get_attr": ["r"]},
        "ref": {"get_resource": "r"},
        "yaql_error": {"yaql": {"expression": "$.data.a.b", "data": {"a": 1}}},
        "str_replace_bad": {"str_replace": {"template": "x", "params": {
            "x": {"get_attr": ["r", "value"]}}}},
        "list_join_map": {"list_join": [",", [{"get_attr": ["r", "value"]}]]},
    }
    for label, value in values.items():
        for with_desc in (False, True):
            out = {"value": value, **({"description": "d"} if with_desc else {})}
            yield (f"{label}-{'desc' if with_desc else 'plain'}",
                   _create(hot(LATEST, resources=res, outputs={"o": out})))
    yield "failed-resource-output", _create(hot(LATEST, resources={
        "f": {"type": "OS::Heat::TestResource", "properties": {"fail": True}}},
        outputs={"o": {"value": {"get_attr": ["f", "output"]}}}))
    for facade in ("metadata", "deletion_policy", "update_policy"):
        yield f"resource_facade-top-{facade}", _create(hot(LATEST, resources=res, outputs={
            "o": {"value": {"resource_facade": facade}}, "ok": {"value": 1}}))
    yield "condition-false", _create(hot(LATEST, conditions={"c": False}, resources=res,
                                         outputs={"o": {"value": 1, "condition": "c"}}))
    yield "condition-if", _create(hot(LATEST, conditions={"c": False}, resources=res,
                                      outputs={"o": {"value": {"if": ["c", 1, 2]}}}))


AREAS = {
    "sections": sections, "functions": functions, "parameters": parameters,
    "resources": resources, "api": api, "nested": nested, "hooks": hooks,
    "external": external, "outputs": outputs,
}


def all_cases() -> dict[str, dict[str, Case]]:
    """Every case, by area, then by name."""
    out: dict[str, dict[str, Case]] = {}
    for area, generate in AREAS.items():
        cases = out.setdefault(area, {})
        for name, case in generate():
            assert name not in cases, name
            cases[name] = case
    return out
