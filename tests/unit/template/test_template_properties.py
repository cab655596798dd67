"""Property tests: no input makes the template layer raise anything but its own errors;
resolution is deterministic; dependency order agrees with the graph."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kiln.errors import KilnError
from kiln.graph import Graph
from kiln.template import load_template
from tests.unit.template.tplhelpers import ALL_HOT, FakeResolver, bind, hot

HOT_FUNCTIONS = ["get_param", "get_resource", "get_attr", "get_file", "list_join",
                 "str_replace", "str_replace_strict", "str_replace_vstrict", "str_split",
                 "digest", "repeat", "resource_facade", "map_merge", "map_replace", "yaql",
                 "equals", "not", "and", "or", "if", "contains", "filter", "make_url",
                 "list_concat", "list_concat_unique", "Ref", "Fn::Join", "Fn::Select",
                 "Fn::GetAtt", "Fn::Split", "Fn::Replace", "Fn::Base64", "Fn::FindInMap",
                 "Fn::If", "Fn::Equals", "Fn::Not", "Fn::And", "Fn::Or", "Fn::GetAZs",
                 "Fn::MemberListToMap", "Fn::ResourceFacade"]
KEYS = st.sampled_from(["a", "b", "p", "r1", "r2", "template", "params", "for_each",
                        "expression", "data", "keys", "values", "host", "port", "%x%",
                        "c1", "value", "permutations"])

scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 70000),
                    st.floats(allow_nan=False, allow_infinity=False, width=32),
                    st.sampled_from(["", "a", "r1", "r2", "p", "c1", "%x%", "md5", "sha256",
                                     ",", "$.data", "1 + 1", "value", "metadata", "x,y"]),
                    st.text(max_size=6))


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(KEYS, children, max_size=4),
        st.builds(lambda k, v: {k: v}, st.sampled_from(HOT_FUNCTIONS), children),
    )


snippets = st.recursive(scalars, _extend, max_leaves=25)


@st.composite
def templates(draw: st.DrawFn) -> dict[str, Any]:
    version = draw(st.sampled_from(ALL_HOT))
    body: dict[str, Any] = hot(version)
    body["parameters"] = {"p": {"type": "json", "default": draw(snippets.filter(
        lambda s: s is not None and json.dumps(s) is not None))}}
    resources = {}
    for name in ("r1", "r2"):
        resources[name] = {"type": "OS::Heat::None", "properties": {"v": draw(snippets)}}
        if draw(st.booleans()):
            resources[name]["depends_on"] = draw(st.sampled_from(["r1", "r2", ["r1"]]))
    body["resources"] = resources
    body["outputs"] = {"o1": {"value": draw(snippets)}, "o2": {"value": draw(snippets)}}
    if version >= "2016-10-14":
        body["conditions"] = {"c1": draw(st.one_of(st.booleans(), snippets))}
    return body


@st.composite
def cfn_templates(draw: st.DrawFn) -> dict[str, Any]:
    key, version = draw(st.sampled_from([("AWSTemplateFormatVersion", "2010-09-09"),
                                         ("HeatTemplateFormatVersion", "2012-12-12")]))
    body: dict[str, Any] = {key: version}
    body["Parameters"] = {"p": {"Type": "String", "Default": "x"}}
    body["Mappings"] = {"m": {"a": {"b": "c"}}}
    body["Resources"] = {n: {"Type": "OS::Heat::None",
                             "Properties": {"v": draw(snippets)}} for n in ("r1", "r2")}
    body["Outputs"] = {"o1": {"Value": draw(snippets)}}
    if key == "AWSTemplateFormatVersion":
        body["Conditions"] = {"c1": draw(st.one_of(st.booleans(), snippets))}
    return body


def _exercise(body: dict[str, Any]) -> Any:
    """Everything the engine would do with a template; returns what it resolved."""
    b = bind(body, resolver=FakeResolver({"r1": {"value": [1, {"a": "b"}]}}),
             files={"a": "content"})
    b.validate()
    props = {n: b.resolve(d.properties) for n, d in b.resource_definitions().items()}
    outs = {k: (o.value, o.error) for k, o in b.outputs().items()}
    return props, outs, dict(b.dependencies())


def _only_client_errors(fn: Any, *args: Any) -> Any:
    try:
        return fn(*args)
    except KilnError as exc:
        assert 400 <= exc.http_status < 500, exc
        assert exc.message
        return ("error", type(exc).__name__, exc.message)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_arbitrary_text_is_a_template_or_a_template_error(text: str) -> None:
    _only_client_errors(load_template, text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200))
def test_arbitrary_bytes_are_a_template_or_a_template_error(body: bytes) -> None:
    _only_client_errors(load_template, body)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet="heat_mplvrsion:2015-10-{}[]\n \"',&*!|>#abc", max_size=200))
def test_yaml_shaped_text_is_a_template_or_a_template_error(text: str) -> None:
    _only_client_errors(load_template, "heat_template_version: 2016-10-14\n" + text)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(templates())
def test_random_function_trees_only_raise_template_errors(body: dict[str, Any]) -> None:
    _only_client_errors(_exercise, body)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cfn_templates())
def test_random_cfn_trees_only_raise_template_errors(body: dict[str, Any]) -> None:
    _only_client_errors(_exercise, body)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(templates())
def test_resolving_is_deterministic(body: dict[str, Any]) -> None:
    first = _only_client_errors(_exercise, body)
    second = _only_client_errors(_exercise, json.loads(json.dumps(body)))
    assert first == second


@st.composite
def dependency_templates(draw: st.DrawFn) -> dict[str, Any]:
    names = [f"r{i}" for i in range(draw(st.integers(1, 12)))]
    resources: dict[str, Any] = {}
    for name in names:
        refs = draw(st.lists(st.sampled_from(names), max_size=3))
        kind = draw(st.sampled_from(["get_resource", "get_attr", "depends_on"]))
        snippet: dict[str, Any] = {"type": "OS::Heat::None"}
        if kind == "depends_on":
            snippet["depends_on"] = refs
        elif kind == "get_resource":
            snippet["properties"] = {"x": [{"get_resource": r} for r in refs]}
        else:
            snippet["properties"] = {"x": [{"get_attr": [r, "a"]} for r in refs]}
        resources[name] = snippet
    return hot("2021-04-16", resources=resources)


@settings(max_examples=120, deadline=None)
@given(dependency_templates())
def test_dependency_order_is_consistent_with_the_graph(body: dict[str, Any]) -> None:
    from kiln.graph import CircularDependencyException

    b = bind(body)
    try:
        b.validate()
    except CircularDependencyException:
        return
    deps = b.dependencies()
    order = Graph.from_edges(list(deps), {k: list(v) for k, v in deps.items()}
                             ).topological_order()
    assert sorted(order) == sorted(body["resources"])
    position = {n: i for i, n in enumerate(order)}
    for name, needs in deps.items():
        for dep in needs:
            assert position[dep] < position[name]
    # every reference written in the template is a dependency
    for name, snippet in body["resources"].items():
        written = set(snippet.get("depends_on", []))
        for item in (snippet.get("properties") or {}).get("x", []):
            ref = item.get("get_resource") or item["get_attr"][0]
            written.add(ref)
        assert deps[name] == written


# -- well-shaped calls with random leaves: reach the resolution code of every function --

leaves = st.one_of(scalars, st.lists(scalars, max_size=3),
                   st.dictionaries(KEYS, scalars, max_size=3))


def _shaped(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    c = children
    return st.one_of(
        st.builds(lambda a: {"get_param": a}, st.one_of(
            st.sampled_from(["p", "OS::stack_name", "nope"]),
            st.lists(st.one_of(st.just("p"), c), min_size=1, max_size=4))),
        st.builds(lambda a: {"get_attr": a}, st.lists(
            st.one_of(st.sampled_from(["r1", "r2", "value"]), c), min_size=1, max_size=4)),
        st.builds(lambda a: {"get_resource": a}, st.one_of(st.just("r1"), c)),
        st.builds(lambda d, ls: {"list_join": [d, *ls]}, c, st.lists(c, min_size=1,
                                                                       max_size=3)),
        st.builds(lambda f, t, p: {f: {"template": t, "params": p}},
                  st.sampled_from(["str_replace", "str_replace_strict",
                                   "str_replace_vstrict"]),
                  c, st.dictionaries(KEYS, c, max_size=3)),
        st.builds(lambda a: {"str_split": a}, st.lists(c, min_size=2, max_size=3)),
        st.builds(lambda a, b: {"digest": [a, b]}, st.one_of(st.just("sha256"), c), c),
        st.builds(lambda t, f, p: {"repeat": {"template": t, "for_each": f,
                                              "permutations": p}},
                  c, st.dictionaries(st.sampled_from(["%x%", "%y%"]), c, min_size=1),
                  st.booleans()),
        st.builds(lambda a: {"map_merge": a}, st.lists(c, max_size=3)),
        st.builds(lambda a, b: {"map_replace": [a, b]}, c, st.fixed_dictionaries(
            {}, optional={"keys": c, "values": c})),
        st.builds(lambda e, d: {"yaql": {"expression": e, "data": d}},
                  st.sampled_from(["$.data", "$.data.len()", "$.data.keys()",
                                   "$.data.select($)", "1/0", "$.data + 1"]), c),
        st.builds(lambda a, b: {"if": [a, b]}, st.one_of(st.just("c1"), st.booleans(), c),
                  c),
        st.builds(lambda a, b, d: {"if": [a, b, d]}, st.one_of(st.just("c1"), c), c, c),
        st.builds(lambda a, b: {"filter": [a, b]}, c, c),
        st.builds(lambda a: {"list_concat": a}, st.lists(c, max_size=3)),
        st.builds(lambda a: {"list_concat_unique": a}, st.lists(c, max_size=3)),
        st.builds(lambda a, b: {"contains": [a, b]}, c, c),
        st.builds(lambda a: {"make_url": a}, st.dictionaries(st.sampled_from(
            ["scheme", "host", "port", "path", "query", "fragment", "username"]), c,
            max_size=4)),
        st.builds(lambda a: {"resource_facade": a}, st.sampled_from(
            ["metadata", "deletion_policy", "update_policy"])),
        st.builds(lambda a: {"get_file": a}, st.one_of(st.just("a"), c)),
        st.lists(c, max_size=3), st.dictionaries(KEYS, c, max_size=3),
    )


shaped = st.recursive(leaves, _shaped, max_leaves=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shaped, shaped, st.one_of(st.booleans(), shaped))
def test_well_shaped_calls_only_raise_template_errors(prop: Any, out: Any, cond: Any) -> None:
    body = hot("2021-04-16",
               parameters={"p": {"type": "json", "default": {"a": [1, "x"]}}},
               conditions={"c1": cond if isinstance(cond, bool) else {"equals": [cond, 1]}},
               resources={"r1": {"type": "OS::Heat::None", "properties": {"v": prop}},
                          "r2": {"type": "OS::Heat::None"}},
               outputs={"o": {"value": out}})
    _only_client_errors(_exercise, body)
