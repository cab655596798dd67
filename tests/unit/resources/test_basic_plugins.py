"""The contract's defaults, and OS::Heat::None / Value / RandomString driven through it."""

from __future__ import annotations

import string
from collections import Counter
from typing import Any

import pytest

from kiln.errors import (
    InvalidTemplateAttribute,
    NotSupported,
    ResourceActionNotSupported,
    StackValidationFailed,
)
from kiln.resources.base import Property, Resource, ResourceFailure, select_path
from kiln.resources.heat.random_string import generate
from kiln.template.definitions import ResourceDefinition
from tests.unit.resources.fakes import FakeRuntime, make, run


@pytest.fixture
def rt() -> FakeRuntime:
    return FakeRuntime()


class Plain(Resource):
    type_name = "Test::Plain"
    properties_schema = {
        "a": Property("string", update_allowed=True),
        "b": Property("string"),
        "c": Property("string", immutable=True),
    }


def plain(rt: FakeRuntime, **props: Any) -> Plain:
    return Plain("p", ResourceDefinition("p", "Test::Plain", props, raw={"properties": props}),
                 rt)


def test_status_reason_format() -> None:
    failure = ResourceFailure("0 of 1 received", exc_type="WaitConditionTimeout")
    assert failure.status_reason("wc") == "WaitConditionTimeout: resources.wc: 0 of 1 received"
    assert ResourceFailure("boom").status_reason("x") == "Error: resources.x: boom"


async def test_defaults_make_a_database_only_resource(rt: FakeRuntime) -> None:
    res = plain(rt, a="1")
    assert await run(res, "create") == 1
    assert res.reference_id() == "p"               # no physical id yet: the name
    res.resource_id = "phys-1"
    assert res.reference_id() == "phys-1"
    assert await run(res, "delete") == 1
    assert not Plain.supports("check")
    with pytest.raises(ResourceActionNotSupported,
                       match=r"^signal is not supported for resource\.$"):
        await res.handle_signal({})


def test_update_planning(rt: FakeRuntime) -> None:
    res = plain(rt, a="1", b="x", c="k")
    old = res.properties
    new = Plain.make_properties("p", {"a": "2", "b": "x", "c": "k"})
    diff = res.diff_properties(old, new)
    assert diff == {"a": "2"}
    assert not res.needs_replace(diff)
    assert res.needs_replace(res.diff_properties(old, Plain.make_properties(
        "p", {"a": "1", "b": "y", "c": "k"})))
    with pytest.raises(NotSupported) as info:
        res.diff_properties(old, Plain.make_properties("p", {"c": "other"}))
    assert str(info.value) == ("Update to properties c of p (Test::Plain) is not supported.")
    same = ResourceDefinition("p", "Test::Plain", {"a": "1"}, raw=res.definition.raw)
    assert not res.needs_update(same, {})


def test_attributes(rt: FakeRuntime) -> None:
    res = make(rt, "v", "OS::Heat::Value", {"value": {"a": [1, {"b": 2}]}})
    assert res.get_attribute("value") == {"a": [1, {"b": 2}]}
    assert res.get_attribute("value", "a", 1, "b") == 2
    assert res.get_attribute("value", "a", 7) is None      # missing path step: None
    assert res.get_attribute("show") is None
    assert res.all_attributes() == {"value": {"a": [1, {"b": 2}]}}
    with pytest.raises(InvalidTemplateAttribute,
                       match=r"^The Referenced Attribute \(v nope\) is incorrect\.$"):
        res.get_attribute("nope")
    assert select_path("abc", [0]) is None                 # strings are not traversed


async def test_none_accepts_anything_and_never_updates(rt: FakeRuntime) -> None:
    res = make(rt, "n", "OS::Heat::None", {"anything": [1], "flavor": "m1"})
    await run(res, "create")
    assert res.resource_id and res.reference_id() == res.resource_id
    assert res.get_attribute("whatever", "deep") is None
    assert res.all_attributes() == {}
    changed = ResourceDefinition("n", "OS::Heat::None", {"flavor": "m2"},
                                 raw={"type": "OS::Heat::None", "properties": {"flavor": "m2"}})
    assert not res.needs_update(changed, {})
    await run(res, "delete")


async def test_value_checks_its_value_against_its_type(rt: FakeRuntime) -> None:
    res = make(rt, "v", "OS::Heat::Value", {"value": "42", "type": "number"})
    await run(res, "create")
    assert res.get_attribute("value") == "42"   # checked, not converted (Heat 27)
    assert res.resource_id is not None
    assert res.resource_id.startswith("teststack-v-")
    assert res.reference_id() == res.resource_id
    as_list = make(rt, "l", "OS::Heat::Value", {"value": ["a"], "type": "comma_delimited_list"})
    assert as_list.get_attribute("value") == ["a"]
    with pytest.raises(StackValidationFailed) as info:
        make(rt, "j", "OS::Heat::Value", {"value": "x", "type": "json"})
    assert info.value.message == 'Property error: resources.j.properties.value: "x" is not a map'
    with pytest.raises(StackValidationFailed, match="Property value not assigned"):
        make(rt, "m", "OS::Heat::Value", {})
    assert not res.needs_replace({"value": 1, "type": "string"})  # both update in place


class TestRandomString:
    async def test_default_is_32_letters_and_digits(self, rt: FakeRuntime) -> None:
        res = make(rt, "pw", "OS::Heat::RandomString")
        await run(res, "create")
        value = res.get_attribute("value")
        assert len(value) == 32
        assert set(value) <= set(string.ascii_letters + string.digits)
        assert res.reference_id() == value              # the string is the reference
        assert res.data["value"] == value

    def test_reference_before_create_is_the_name(self, rt: FakeRuntime) -> None:
        assert make(rt, "pw", "OS::Heat::RandomString").reference_id() == "pw"

    async def test_classes_and_sequences_with_minimums(self, rt: FakeRuntime) -> None:
        res = make(rt, "pw", "OS::Heat::RandomString", {
            "length": 12,
            "character_classes": [{"class": "digits", "min": 5}],
            "character_sequences": [{"sequence": "!@", "min": 4}],
        })
        for _ in range(20):
            await run(res, "create")
            value = res.get_attribute("value")
            counts = Counter("d" if c.isdigit() else "s" if c in "!@" else "x" for c in value)
            assert len(value) == 12
            assert counts["x"] == 0
            assert counts["d"] >= 5 and counts["s"] >= 4

    async def test_sequences_alone_keep_the_default_class(self, rt: FakeRuntime) -> None:
        # Heat 27 observed: the default lettersdigits class still applies
        res = make(rt, "pw", "OS::Heat::RandomString",
                   {"length": 40, "character_sequences": [{"sequence": "!", "min": 1}]})
        await run(res, "create")
        value = res.get_attribute("value")
        assert "!" in value
        assert set(value) <= set(string.ascii_letters + string.digits + "!")

    async def test_deprecated_sequence_property(self, rt: FakeRuntime) -> None:
        res = make(rt, "pw", "OS::Heat::RandomString", {"length": 40, "sequence": "octdigits"})
        await run(res, "create")
        assert set(res.get_attribute("value")) <= set(string.octdigits)

    def test_minimums_larger_than_length(self, rt: FakeRuntime) -> None:
        with pytest.raises(StackValidationFailed) as info:
            make(rt, "pw", "OS::Heat::RandomString",
                 {"length": 5, "character_classes": [{"class": "digits", "min": 10}]})
        assert info.value.message == ("Length property cannot be smaller than combined "
                                      "character class and character sequence minimums")

    def test_any_change_replaces(self, rt: FakeRuntime) -> None:
        res = make(rt, "pw", "OS::Heat::RandomString")
        assert res.needs_replace({"salt": "new"})
        assert res.needs_replace({"length": 8})

    @pytest.mark.parametrize("name", ["letters", "lowercase", "uppercase", "hexdigits",
                                      "octdigits", "digits"])
    async def test_each_class_draws_only_its_characters(self, rt: FakeRuntime,
                                                        name: str) -> None:
        pools = {"letters": string.ascii_letters, "lowercase": string.ascii_lowercase,
                 "uppercase": string.ascii_uppercase, "hexdigits": "0123456789ABCDEF",
                 "octdigits": string.octdigits, "digits": string.digits}
        res = make(rt, "pw", "OS::Heat::RandomString",
                   {"length": 200, "character_classes": [{"class": name}]})
        await run(res, "create")
        value = res.get_attribute("value")
        assert set(value) <= set(pools[name])
        assert len(set(value)) > 1

    def test_generate_is_a_shuffle_of_the_minimums(self) -> None:
        value = generate(3, [("a", 1), ("b", 1), ("c", 1)])
        assert sorted(value) == ["a", "b", "c"]


def test_generation_is_unbiased() -> None:
    # the guaranteed minimums must not sit at fixed positions, and draws must be uniform
    orders = Counter(generate(2, [("a", 1), ("b", 1)]) for _ in range(2000))
    assert set(orders) == {"ab", "ba"}
    assert 800 < orders["ab"] < 1200                    # ~9 standard deviations of slack
    letters = Counter("".join(generate(64, [("abcdefg", 1)]) for _ in range(200)))
    assert all(1500 < n < 2150 for n in letters.values())   # 12800 draws over 7 letters


def test_deletion_policies() -> None:
    none_cls = type(make(FakeRuntime(), "n", "OS::Heat::None"))
    for ok in ("Delete", "Retain"):
        none_cls.validate_deletion_policy(ok)
    with pytest.raises(StackValidationFailed, match=r'^"Snapshot" deletion policy not supported$'):
        none_cls.validate_deletion_policy("Snapshot")
    with pytest.raises(StackValidationFailed, match=r'^Invalid deletion policy "Keep"$'):
        none_cls.validate_deletion_policy("Keep")

    class Snap(Resource):
        type_name = "Test::Snap"

        async def handle_snapshot_delete(self, state: tuple[str, str]) -> None:
            return None

    Snap.validate_deletion_policy("Snapshot")
    assert Snap.replace_create_first
