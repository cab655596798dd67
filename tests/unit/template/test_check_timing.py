"""When Heat checks function arguments: at parse (every resource) or at validation (only
resources that exist, not OS::Heat::None at create), and only the branch an ``if`` picks.

heat27_check_timing.json holds what a live Heat 27 answered for 402 templates: each
malformed function (every HOT and CFN function with a shape rule, removed functions,
make_url, yaql, repeat, get_attr/get_resource/Ref to nothing, result-time errors) placed
in the metadata of an enabled resource (``en_meta``), of a resource whose condition is
false (``off_meta``, ``off_props``), in an OS::Heat::None's properties or metadata
(``none_props``, ``none_meta``), in an output with a false condition (``out_off``) or
without one (``out_en``), inside ``if`` branches, nested in other functions, and in
conditions. For each: the template, POST /stacks' 400 message or null when the stack
was accepted (with the output Heat then showed), and POST /validate's 400 message or
null. ``stack_name`` is the name Heat's create used where its message contains it.

Kiln's template layer must reject exactly what Heat rejected, with Heat's text: a create
is what the engine checks (``resource_definitions`` then ``validate(placeholders=False)``),
POST /validate is ``validate()``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from kiln.errors import KilnError
from kiln.template import StackIdentity, load_template

CASES: dict[str, dict[str, Any]] = json.loads(
    (Path(__file__).parent / "heat27_check_timing.json").read_text())


class Resolver:
    """Resources that exist: ``other`` is an OS::Heat::RandomString (attributes
    ``value`` and ``salt`` are the ones these templates name)."""

    def reference(self, name: str) -> Any:
        return f"{name}-id"

    def attribute(self, name: str, attr: str, path: Sequence[Any]) -> Any:
        return None

    def all_attributes(self, name: str) -> Mapping[str, Any]:
        return {}

    def resource_type(self, name: str) -> str:
        return ""

    def facade(self, kind: str) -> Any:
        return None

    def availability_zones(self) -> list[str]:
        return []

    def has_attribute(self, name: str, attr: str) -> bool:
        return name != "other" or attr in ("value", "salt")


def outcome(case: Mapping[str, Any], *, create: bool) -> str | None:
    """The template layer's error message, or None if it accepts the template."""
    stack_name = case.get("stack_name", "kiln") if create else "dummy"
    try:
        bound = load_template(json.dumps(case["template"])).bind(
            identity=StackIdentity(stack_name, "id", "project"), resolver=Resolver())
        bound.resource_definitions()
        bound.validate(placeholders=not create)
    except KilnError as exc:
        return exc.message
    return None


def test_the_observations_cover_every_placement() -> None:
    placements = {name.split("@")[1] for name in CASES}
    assert {"en_meta", "off_meta", "off_props", "none_props", "none_meta", "out_off",
            "out_en"} <= placements
    assert sum(case["create"] is None for case in CASES.values()) > 150
    assert sum(case["create"] is not None for case in CASES.values()) > 150


@pytest.mark.parametrize("name", sorted(CASES))
def test_rejects_what_heat_rejects(name: str) -> None:
    case = CASES[name]
    assert (outcome(case, create=True), outcome(case, create=False)) == \
        (case["create"], case["validate"])


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if "output" in c))
def test_outputs_of_accepted_stacks(name: str) -> None:
    case = CASES[name]
    bound = load_template(json.dumps(case["template"])).bind(
        identity=StackIdentity("kiln", "id", "project"), resolver=Resolver())
    shown = bound.output("o").to_dict()
    expected = case["output"]
    assert shown.get("output_value") == expected.get("output_value")
    assert shown.get("output_error") == expected.get("output_error")


def test_none_mapped_through_the_registry_is_a_placeholder() -> None:
    # a type the environment maps to OS::Heat::None gets Heat's None treatment
    from kiln.template.environment import build_environment

    case = CASES["make_url_notmap@none_props"]
    template = json.loads(json.dumps(case["template"]))
    template["resources"]["r"]["type"] = "My::Stub"
    env = build_environment({"resource_registry": {"My::Stub": "OS::Heat::None"}})
    bound = load_template(json.dumps(template)).bind(environment=env, resolver=Resolver())
    bound.resource_definitions()
    bound.validate(placeholders=False)
    with pytest.raises(KilnError) as exc:
        bound.validate()
    assert exc.value.message == case["validate"]


def test_a_resolver_may_say_which_resources_validate_their_definition() -> None:
    class Knows(Resolver):
        def validates_definition(self, name: str) -> bool:
            return name != "r"

    case = CASES["make_url_notmap@en_meta"]  # an OS::Heat::RandomString
    bound = load_template(json.dumps(case["template"])).bind(resolver=Knows())
    bound.resource_definitions()
    bound.validate(placeholders=False)
