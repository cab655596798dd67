"""The fast YAML path gives exactly what Heat's loader gives (PyYAML's safe loader with
timestamps kept as strings), or raises what it raises."""

from __future__ import annotations

import math
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kiln.template import yaml_loader


def heat_load(text: str) -> Any:
    """What Heat 27's template_format.yaml_loader gives (its definition: CSafeLoader with
    str and timestamp constructed as plain strings)."""

    class HeatsLoader(yaml.CSafeLoader):
        pass

    def as_str(loader: Any, node: Any) -> Any:
        return loader.construct_scalar(node)

    HeatsLoader.add_constructor("tag:yaml.org,2002:str", as_str)
    HeatsLoader.add_constructor("tag:yaml.org,2002:timestamp", as_str)
    return yaml.load(text, Loader=HeatsLoader)


def same(a: Any, b: Any) -> bool:
    """Equal, with NaN equal to NaN and the types of scalars compared too."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


SCALARS = [
    "plain", "'quoted'", '"dq"', "2016-10-14", "2001-12-14t21:59:43.10-05:00", "1", "-17",
    "0x1F", "0o17", "017", "0b101", "1_000", "190:20:30", "+12", "1.5", "-.5", "1e3",
    ".inf", "-.Inf", ".nan", "6.8523015e+5", "190:20:30.15", "true", "False", "yes", "No",
    "on", "OFF", "y", "n", "~", "null", "Null", "", "'1'", '"true"', "!!str 12",
    "!!int '12'", "!!float 1", "!!bool yes", "!!null ''", "=", "<<x", "0", "-0", "00",
    "1:2", "12:30:00", "0.", "+.inf", "NaN",
]


def check(text: str) -> None:
    """The fast loader gives Heat's data, or raises Heat's error."""
    try:
        expected = heat_load(text)
    except Exception as exc:  # whatever PyYAML raises, ours must too  # noqa: BLE001
        with pytest.raises(type(exc)) as got:
            yaml_loader.load(text)
        assert str(got.value) == str(exc)
        return
    assert same(yaml_loader.load(text), expected)


@pytest.mark.parametrize("scalar", SCALARS)
def test_scalars_as_heat_loads_them(scalar: str) -> None:
    check(f"a: {scalar}\nb: [{scalar}]\n{scalar or 'k'}: 1\n")


@pytest.mark.parametrize("text", [
    "base: &b {x: 1, y: [1, 2]}\nuse: *b\nagain: *b\n",
    "a: &l [1, 2]\nb: {<<: {m: 1}, n: 2}\n",
    "a: {<<: [{m: 1}, {m: 2, o: 3}], n: 2}\n",
    "s: !!set {a, b}\n",
    "o: !!omap [{a: 1}, {b: 2}]\n",
    "p: !!pairs [{a: 1}, {a: 2}]\n",
    "bin: !!binary aGVsbG8=\n",
    "? [a, b]\n: 1\n",
    "? {a: 1}\n: 1\n",
    "k: 1\nk: 2\n",
    "1: one\n2.5: two\ntrue: t\n~: n\n",
    "x: !custom 1\n",
    "---\na: 1\n---\nb: 2\n",
    "",
    "# only a comment\n",
    "a: !!int abc\n",
    "a: !!str [1]\n",
    "[1, 2]\n",
    "plain scalar\n",
    "a: {b: {c: {d: [1, {e: f}]}}}\n",
    "= : 1\n",
    "a: &x 1\nb: &x 2\nc: *x\n",
    "a: *nowhere\n",
    "a: &s 1\nb: *s\n",
    "? &k key\n: *k\n",
    "- ! plain\n- !!str 1\n- !!map {a: 1}\n- !!seq [1]\n",
    "a: [1, {b: [2, {c: 3}]}, 4]\nd: {}\ne: []\n",
    "--- a\n...\n",
])
def test_documents_as_heat_loads_them(text: str) -> None:
    check(text)


def test_aliases_share_one_object_as_in_pyyaml() -> None:
    data = yaml_loader.load("base: &b {x: [1]}\nuse: *b\nlist: &l [1]\nalso: *l\n")
    assert data["use"] is data["base"]
    assert data["also"] is data["list"]


def test_recursive_alias_is_recursive_data_as_in_pyyaml() -> None:
    data = yaml_loader.load("a: &r [1, *r]\n")
    assert data["a"][1] is data["a"]


_keys = st.text(st.characters(codec="utf-8", categories=["L", "N", "P", "S", "Zs"]),
                max_size=8)
_scalars = st.one_of(st.sampled_from(SCALARS), _keys, st.integers(), st.floats(),
                     st.booleans(), st.none())
_data = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(_keys, inner, max_size=4)), max_leaves=25)


@settings(max_examples=300, deadline=None)
@given(_data, st.booleans())
def test_any_dumped_data_loads_as_heat_loads_it(data: Any, flow: bool) -> None:
    text = yaml.safe_dump({"d": data}, default_flow_style=flow, allow_unicode=True)
    assert same(yaml_loader.load(text), heat_load(text))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=":-[]{},&*!|>'\"#?% \n\tab1.~<=", max_size=60))
def test_arbitrary_text_loads_or_fails_as_heat(text: str) -> None:
    try:
        expected = heat_load(text)
    except Exception as exc:  # whatever PyYAML raises, ours must too  # noqa: BLE001
        with pytest.raises(type(exc)) as got:
            yaml_loader.load(text)
        assert str(got.value) == str(exc)
        return
    assert repr(yaml_loader.load(text)) == repr(expected)


def expanded_shape(data: Any) -> tuple[int, int]:
    """(items of every map and list once aliases are expanded, levels of maps and
    lists): what the parser's shape check measures, by plain recursion."""
    if isinstance(data, dict):
        values: list[Any] = list(data.values())
    elif isinstance(data, list):
        values = data
    else:
        return 0, 0
    below = [expanded_shape(v) for v in values]
    return (len(values) + sum(s for s, _ in below),
            1 + max((d for _, d in below), default=0))


@settings(max_examples=200, deadline=None)
@given(_data, st.booleans())
def test_the_measured_shape_counts_aliases_as_expanded(data: Any, flow: bool) -> None:
    # the same object twice: the dumper writes an anchor and an alias
    text = yaml.safe_dump({"a": data, "b": [data, {"c": data}]}, default_flow_style=flow)
    loaded, shape = yaml_loader.load_with_shape(text)
    assert shape is not None
    assert (shape.elements, shape.depth) == expanded_shape(loaded)


def test_recursive_data_is_left_to_the_shape_check() -> None:
    data, shape = yaml_loader.load_with_shape("a: &r [1, *r]\n")
    assert shape is None and data["a"][1] is data["a"]
