"""Every HOT function, with each version's semantics where they differ.

Expected values were observed on a real Heat 27 (same templates as stack outputs).
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from kiln.errors import KilnError
from kiln.template import load_template
from kiln.template.errors import StackValidationFailed
from tests.unit.template.tplhelpers import FakeResolver, bind, hot, value

PARAMS = {
    "s": {"type": "string", "default": "a,b"},
    "j": {"type": "json", "default": {"a": [1, {"b": 2}], "c": "x"}},
    "l": {"type": "comma_delimited_list", "default": "x,y,z"},
    "n": {"type": "number", "default": 3},
}


def out(fn: Any, version: str = "2021-04-16", **kw: Any) -> Any:
    return value(fn, version, parameters=PARAMS, **kw)


def err(fn: Any, version: str = "2021-04-16", **kw: Any) -> str:
    with pytest.raises(KilnError) as exc:
        out(fn, version, **kw)
    return getattr(exc.value, "detail", exc.value.message)


# -- get_param -------------------------------------------------------------------------

@pytest.mark.parametrize("args,expected", [
    (["j", "a", 1, "b"], 2), (["j", "a", "1", "b"], 2), (["j", "zz"], ""),
    (["l", 1], "y"), (["n", 0], ""), (["s", 0], "a"), (["j", "a", "x"], ""),
    ("s", "a,b"), ("l", ["x", "y", "z"])])
def test_get_param_with_path(args: Any, expected: Any) -> None:
    assert out({"get_param": args}) == expected


def test_get_param_unknown() -> None:
    assert err({"get_param": "nope"}) == "The Parameter (nope) was not provided."


def test_get_param_user_value_wins_over_default() -> None:
    assert value({"get_param": "s"}, parameters=PARAMS, params={"s": "given"}) == "given"


def test_get_param_bad_arguments() -> None:
    assert err({"get_param": []}) == 'Function "get_param" must have arguments'
    assert err({"get_param": {"a": 1}}) == 'Argument to "get_param" must be string or list'
    assert err({"get_param": [1]}) == 'Parameter name in "get_param" must be string'


# -- get_resource / get_attr --------------------------------------------------------------

RES = {"r": {"type": "OS::Heat::Value", "properties": {"value": 1}}}
ATTRS = {"r": {"value": {"k": [1, {"x": "y"}]}, "show": {"id": "r-id"}}}


@pytest.mark.parametrize("version", ["2013-05-23", "2014-10-16", "2021-04-16"])
def test_get_resource_and_get_attr(version: str) -> None:
    resolver = FakeResolver(ATTRS)
    assert out({"get_resource": "r"}, version, resources=RES, resolver=resolver) == "r-id"
    assert out({"get_attr": ["r", "value", "k", 1, "x"]}, version, resources=RES,
               resolver=resolver) == "y"
    assert out({"get_attr": ["r", "value", "k", 5]}, version, resources=RES,
               resolver=resolver) is None


def test_get_attr_2013_selects_the_path_itself() -> None:
    resolver = FakeResolver(ATTRS)
    assert out({"get_attr": ["r", "value", "k", 1, "x"]}, "2013-05-23", resources=RES,
               resolver=resolver) == "y"
    # a string index into a list selects nothing (Heat 27: null)
    assert out({"get_attr": ["r", "value", "k", "1", "x"]}, "2013-05-23", resources=RES,
               resolver=resolver) is None
    # the whole attribute is fetched, then selected here
    assert ("attribute", "r", "value") in resolver.calls


@pytest.mark.parametrize("version,whole", [("2015-04-30", False), ("2015-10-15", True),
                                           ("2021-04-16", True)])
def test_get_attr_with_only_a_resource_name(version: str, whole: bool) -> None:
    resolver = FakeResolver(ATTRS)
    if whole:
        assert out({"get_attr": ["r"]}, version, resources=RES, resolver=resolver) == \
            ATTRS["r"]
    else:
        with pytest.raises(StackValidationFailed) as exc:
            out({"get_attr": ["r"]}, version, resources=RES, resolver=resolver)
        assert exc.value.message == (
            'outputs.o.value.get_attr: Arguments to "get_attr" must be of the form '
            "[resource_name, attribute, (path), ...]")


def test_get_attr_argument_errors() -> None:
    with pytest.raises(StackValidationFailed) as exc:
        out({"get_attr": []}, resources=RES)
    assert exc.value.detail == ('Arguments to "get_attr" can be of the next forms: '
                                "[resource_name] or [resource_name, attribute, (path), ...]")
    with pytest.raises(StackValidationFailed) as exc:
        out({"get_attr": {"r": 1}}, resources=RES)
    assert exc.value.detail == 'Argument to "get_attr" must be a list'


def test_resource_facade() -> None:
    assert out({"resource_facade": "metadata"}) == {"m": 1}
    assert out({"resource_facade": "deletion_policy"}) == "Retain"
    with pytest.raises(StackValidationFailed) as exc:
        out({"resource_facade": "nope"})
    assert exc.value.detail == ('Incorrect arguments to "resource_facade" should be one of: '
                                "metadata, deletion_policy, update_policy")


# -- strings ------------------------------------------------------------------------------

def test_get_file() -> None:
    assert out({"get_file": "a.sh"}, files={"a.sh": "#!/bin/sh"}) == "#!/bin/sh"
    assert err({"get_file": "nofile"}) == ('No content found in the "files" section for '
                                           "get_file path: nofile")


@pytest.mark.parametrize("version,expected", [
    ("2015-04-30", "Items to join must be strings not {'x': 1}"),
    ("2015-10-15", 'a,{"x": 1}')])
def test_list_join_serialises_maps_from_2015_10_15(version: str, expected: str) -> None:
    fn = {"list_join": [",", ["a", {"x": 1}]]}
    if version >= "2015-10-15":
        assert out(fn, version) == expected
    else:
        assert err(fn, version) == expected


def test_list_join_several_lists_and_nulls() -> None:
    assert out({"list_join": [",", ["a", "b"], ["c"], [{"x": 1}, [1, 2]]]}) == \
        'a,b,c,{"x": 1},[1, 2]'
    assert out({"list_join": ["-", {"get_param": "l"}]}) == "x-y-z"
    assert out({"list_join": [",", ["a", None, "b"]]}) == "a,,b"
    with pytest.raises(StackValidationFailed) as exc:
        load_template(hot("2015-04-30", outputs={"o": {"value": {
            "list_join": [",", ["a"], ["b"]]}}}))
    assert exc.value.detail == ('Incorrect arguments to "list_join" should be: "list_join" : '
                                '[ " ", [ "str1", "str2"]]')
    assert err({"list_join": [1, ["a"]]}) == '"list_join" delimiter must be a string'
    assert err({"list_join": [",", "ab"]}) == '"list_join" must operate on a list'


def test_str_replace_prefers_longer_keys_and_never_rescans_values() -> None:
    fn = {"str_replace": {"template": "abc abcd a", "params": {"abc": "X", "a": "Y",
                                                               "abcd": "Z"}}}
    assert out(fn) == "X Z Y"
    assert out({"str_replace": {"template": "ab", "params": {"a": "b", "b": "c"}}}) == "bc"


@pytest.mark.parametrize("version,expected", [
    ("2015-04-30", '"str_replace" params must be strings or numbers, param V is not valid'),
    ("2015-10-15", "v=[1]")])
def test_str_replace_json_values_from_2015_10_15(version: str, expected: str) -> None:
    fn = {"str_replace": {"template": "v=V", "params": {"V": [1]}}}
    if version >= "2015-10-15":
        assert out(fn, version) == expected
    else:
        assert err(fn, version) == expected


def test_str_replace_scalars_and_nulls() -> None:
    assert out({"str_replace": {"template": "n=N", "params": {"N": 1.5}}}) == "n=1.5"
    assert out({"str_replace": {"template": "n=N", "params": {"N": None}}}) == "n="
    assert out({"str_replace": {"template": "v=$v", "params": {"$v": [1, {"a": 2}]}}}) == \
        'v=[1, {"a": 2}]'


def test_str_replace_strict_and_vstrict() -> None:
    fn = {"str_replace_strict": {"template": "n=N", "params": {"N": 1, "M": 2, "LL": 3}}}
    assert err(fn) == "The following params were not found in the template: LL,M"
    fn = {"str_replace_vstrict": {"template": "n=N", "params": {"N": ""}}}
    assert err(fn) == ("str_replace_vstrict has an undefined or empty value for param N, "
                       "must be a defined non-empty value")
    fn = {"str_replace_strict": {"template": "n=N", "params": {"N": ""}}}
    assert out(fn) == "n="


def test_str_replace_syntax_error_is_quoted_like_heat() -> None:
    with pytest.raises(StackValidationFailed) as exc:
        load_template(hot(outputs={"o": {"value": {"str_replace": {"template": "x"}}}}))
    assert exc.value.message == (
        "outputs.o.value.str_replace: '\"str_replace\" syntax should be str_replace:\\n"
        "              template: This is var1 template var2\\n              params:\\n"
        "                var1: a\\n                var2: string'")


@pytest.mark.parametrize("args,expected", [
    ([",", "a,b,c", 1], "b"), ([",", "a,b,c", -1], "c"), ([",", "a,b,c"], ["a", "b", "c"]),
    ([",", None], None)])
def test_str_split(args: Any, expected: Any) -> None:
    assert out({"str_split": args}) == expected


def test_str_split_errors() -> None:
    assert err({"str_split": [",", "a,b,c", 7]}) == \
        'Incorrect index to "str_split" should be between 0 and 2'
    assert err({"str_split": [",", "a,b,c", "x"]}) == (
        'Incorrect index to "str_split" should be: "str_split" : [ ",", "apples,pears", '
        "<index>]")
    # Heat leaks "'int' object has no attribute 'split'" here; Kiln says what is wrong.
    assert "splits a string" in err({"str_split": [",", 5]})


def test_digest() -> None:
    assert out({"digest": ["sha512", "hello"]}) == hashlib.sha512(b"hello").hexdigest()
    assert out({"digest": ["md5", "x"]}, "2015-04-30") == "9dd4e461268c8034f5c8564e155c67a6"
    assert err({"digest": ["nope", "x"]}).startswith("Algorithm must be one of {")
    assert err({"digest": ["md5"]}) == 'Function "digest" usage: ["<algorithm>", "<value>"]'
    # Heat leaks a codec error for non-Latin-1 text; Kiln reports it plainly.
    assert "Latin-1" in err({"digest": ["sha256", "é€"]})


# -- collections ----------------------------------------------------------------------------

def test_repeat_versions() -> None:
    cross = {"template": "%a%-%b%", "for_each": {"%a%": ["x", "y"], "%b%": ["p", "q"]}}
    assert out({"repeat": cross}, "2015-04-30") == ["x-p", "x-q", "y-p", "y-q"]
    paired = dict(cross, permutations=False)
    # before 2017-09-01 "permutations" is ignored
    assert out({"repeat": paired}, "2016-10-14") == ["x-p", "x-q", "y-p", "y-q"]
    assert out({"repeat": paired}, "2017-09-01") == ["x-p", "y-q"]
    uneven = {"template": "%a%", "for_each": {"%a%": ["x", "y"], "%b%": ["p"]},
              "permutations": False}
    assert err({"repeat": uneven}) == ("For repeat, the length of for_each values should "
                                       "be equal if no nested loop.")
    over_map = {"template": "%a%", "for_each": {"%a%": {"m": 1, "n": 2}}}
    assert err({"repeat": over_map}, "2015-10-15") == \
        'The values of the "for_each" argument to "repeat" must be lists'
    assert out({"repeat": over_map}, "2016-10-14") == ["m", "n"]
    assert out({"repeat": {"template": "%a%", "for_each": {"%a%": None}}}) == []
    nested = {"template": {"k_%a%": ["%a%"]}, "for_each": {"%a%": ["x"]}}
    assert out({"repeat": nested}) == [{"k_x": ["x"]}]


def test_repeat_shape_errors() -> None:
    # Heat 27 checks for_each when it validates the stack (a create: 400), not when it
    # parses the template
    with pytest.raises(StackValidationFailed) as exc:
        bind(hot(outputs={"o": {"value": {"repeat": {"template": "x",
                                                      "for_each": [1]}}}})).validate()
    assert exc.value.detail == 'The "for_each" argument to "repeat" must contain a map'
    with pytest.raises(StackValidationFailed) as exc:
        load_template(hot(outputs={"o": {"value": {"repeat": {
            "template": "x", "for_each": {"a": ["b"]}, "permutations": "no"}}}}))
    assert exc.value.detail == '"permutations" should be boolean type for repeat function.'


def test_map_merge_and_map_replace() -> None:
    assert out({"map_merge": [{"a": 1, "b": 2}, None, {"b": 3}]}) == {"a": 1, "b": 3}
    assert out({"map_replace": [{"k1": "v1", "k2": "v2"},
                                {"keys": {"k1": "K1"}, "values": {"v2": "V2"}}]}) == \
        {"K1": "v1", "k2": "V2"}
    assert err({"map_replace": [{"k1": "v1", "k2": "v2"}, {"keys": {"k1": "k2"}}]}) == \
        "key replacement k2 collides with a key in the input map"
    assert err({"map_merge": [{"a": 1}, [1]]}).startswith(
        "Incorrect arguments: Items to merge must be maps. [1] is type")


def test_filter_concat_contains() -> None:
    assert out({"filter": [[1, None], [1, 2, None, 3]]}) == [2, 3]
    assert out({"filter": [None, [1, 2]]}) == [1, 2]
    assert out({"list_concat": [[1, 2], None, [2, {"a": 1}]]}) == [1, 2, 2, {"a": 1}]
    assert out({"list_concat_unique": [[1, 2], [2, {"a": 1}, {"a": 1}]]}) == [1, 2, {"a": 1}]
    assert out({"contains": ["b", ["a", "b"]]}) is True
    assert out({"contains": ["bc", "abcd"]}) is True
    assert err({"contains": ["a", 5]}) == 'Second argument to "contains" should be a sequence.'
    assert err({"list_concat": [[1], "x"]}) == (
        'Incorrect arguments: Items to concat must be lists. [[1], "x"] contains an item '
        'that is not a list: "x"')


def test_make_url() -> None:
    fn = {"make_url": {"scheme": "https", "username": "u s", "password": "p@", "host": "::1",
                       "port": 8080, "path": "/a b", "query": {"q": "x/y", "r": "1 2"},
                       "fragment": "f g"}}
    assert out(fn) == "https://u%20s:p%40@[::1]:8080/a%20b?q=x/y&r=1+2#f%20g"
    assert out({"make_url": {"host": "example.com", "path": "x"}}) == "//example.com/x"
    with pytest.raises(StackValidationFailed) as exc:
        out({"make_url": {"host": "h", "port": 70000}})
    assert exc.value.detail == "Invalid URL port 70000, must be in range 1-65535"
    with pytest.raises(StackValidationFailed) as exc:
        out({"make_url": {"hots": "h"}})
    assert exc.value.detail == 'Invalid arguments to "make_url": hots'


# -- if / yaql ------------------------------------------------------------------------------

CONDS = {"c_on": True, "c_off": {"not": "c_on"}}


def test_if_picks_a_branch() -> None:
    assert out({"if": ["c_on", "yes", "no"]}, conditions=CONDS) == "yes"
    assert out({"if": [{"equals": [{"get_param": "n"}, 3]}, "eq", "ne"]},
               conditions=CONDS) == "eq"
    assert out({"if": [True, "t", "f"]}, conditions=CONDS) == "t"


def test_if_without_false_branch_omits_the_item_from_2021_04_16() -> None:
    assert out([1, {"if": ["c_off", 2]}, 3], conditions=CONDS) == [1, 3]
    assert out({"a": 1, "b": {"if": ["c_off", 2]}}, conditions=CONDS) == {"a": 1}
    assert out({"if": ["c_off", 2]}, conditions=CONDS) is None
    with pytest.raises(StackValidationFailed) as exc:
        load_template(hot("2018-08-31", conditions=CONDS,
                          outputs={"o": {"value": {"if": ["c_off", 2]}}}))
    assert exc.value.message == ('outputs.o.value.if: Arguments to "if" must be of the '
                                 "form: [condition_name, value_if_true, value_if_false]")


def test_if_only_resolves_the_chosen_branch() -> None:
    assert out({"if": ["c_on", "ok", {"get_param": "nope"}]}, conditions=CONDS) == "ok"


def test_yaql() -> None:
    assert out({"yaql": {"expression": "$.data.l.select($ * 2)", "data": {"l": [1, 2, 3]}}}) \
        == [2, 4, 6]
    assert out({"yaql": {"expression": "$.data", "data": 5}}) == 5
    with pytest.raises(StackValidationFailed) as exc:
        bind(hot(outputs={"o": {"value": {"yaql": {"expression": "$.data.a["}}}})).validate()
    assert exc.value.message == ("outputs.o.value.yaql: Bad expression Parse error: "
                                 "unexpected end of statement.")


def test_yaql_limits_come_from_the_caller() -> None:
    fn = {"yaql": {"expression": "range(1000).toList()"}}
    assert err(fn) == "Collection length exceeds 200 elements"
    body = hot(outputs={"o": {"value": fn}})
    small = bind(body, yaql_limits=(2000, 100000))
    assert len(small.resolve(small.template.outputs["o"].value)) == 1000
    quota = bind(hot(outputs={"o": {"value": {"yaql": {"expression": "'a' * 100000"}}}}))
    assert quota.output("o").error == "Expression consumed too much memory"


@pytest.mark.parametrize("version", ["2013-05-23", "2021-04-16"])
def test_get_param_pseudo_parameters(version: str) -> None:
    # tplhelpers.IDENTITY: stack "teststack", id "1234", project "proj"
    assert out({"get_param": "OS::stack_name"}, version) == "teststack"
    assert out({"get_param": "OS::stack_id"}, version) == "1234"
    assert out({"get_param": "OS::project_id"}, version) == "proj"


def test_unhashable_keys_and_attributes_get_clear_errors() -> None:
    # Heat 27 leaks "unhashable type: 'list'" for both.
    assert err({"map_replace": [{"a": 1}, {"keys": {"a": [1]}}]}) == (
        'Incorrect arguments to "map_replace": replacement key [1] must be a string or '
        "number")
    assert err({"get_attr": ["r", ["x"]]}, resources=RES) == \
        "The Referenced Attribute (r ['x']) is incorrect."


def test_yaql_sets_become_lists() -> None:
    # Heat's API encodes the set yaql returns as a JSON list.
    assert out({"yaql": {"expression": "$.data.keys()", "data": {"b": 1, "a": 2}}}) == \
        ["a", "b"]
