"""Constraint kinds: Heat's default messages, description overrides, schema errors."""

from __future__ import annotations

from typing import Any

import pytest

from kiln.template import constraints as c


def fails(con: c.Constraint, value: Any, **kw: Any) -> str:
    with pytest.raises(c.ConstraintViolation) as exc:
        con.validate(value, **kw)
    return str(exc.value)


class TestRange:
    def test_messages(self) -> None:
        assert fails(c.Range(1, 5), 9) == "9 is out of range (min: 1, max: 5)"
        assert fails(c.Range(min=1), "0") == "0 is out of range (min: 1, max: None)"
        assert fails(c.Range(max=2.5), 3) == "3 is out of range (min: None, max: 2.5)"

    def test_bounds_inclusive_and_text_numbers(self) -> None:
        c.Range(1, 5).validate(1)
        c.Range(1, 5).validate("5")
        c.Range(1, 5).validate("2.5")

    def test_description_replaces_message(self) -> None:
        assert fails(c.Range(1, 5, description="one to five"), 7) == "one to five"

    def test_schema_errors(self) -> None:
        with pytest.raises(c.InvalidSchemaError, match="min value and/or a max value"):
            c.Range()
        with pytest.raises(c.InvalidSchemaError, match="min/max must be numeric"):
            c.Range("a", None)  # type: ignore[arg-type]

    def test_rule_text_and_dict(self) -> None:
        assert c.Range(1, 5).describe() == "The value must be in the range 1 to 5."
        assert c.Range(min=1).describe() == "The value must be at least 1."
        assert c.Range(max=1, description="d").describe() == \
            "d\nThe value must be no greater than 1."
        assert c.Range(max=1, description="d").to_dict() == \
            {"description": "d", "range": {"max": 1}}


class TestLength:
    def test_messages(self) -> None:
        assert fails(c.Length(2, 4), "a") == "length (1) is out of range (min: 2, max: 4)"
        assert fails(c.Length(max=1), ["a", "b"]) == \
            "length (2) is out of range (min: None, max: 1)"
        assert fails(c.Length(min=1), {}) == "length (0) is out of range (min: 1, max: None)"

    def test_integral_bounds_required(self) -> None:
        with pytest.raises(c.InvalidSchemaError, match="min/max length must be integral"):
            c.Length(1.5, None)
        with pytest.raises(c.InvalidSchemaError, match="A length constraint must have"):
            c.Length()

    def test_text(self) -> None:
        assert c.Length(1, 3).describe() == "The length must be in the range 1 to 3."
        assert c.Length(1, 3).to_dict() == {"length": {"min": 1, "max": 3}}


class TestModulo:
    def test_message(self) -> None:
        assert fails(c.Modulo(2, 1), 4) == "4 is not a multiple of 2 with an offset of 1"
        c.Modulo(2, 1).validate("5")

    @pytest.mark.parametrize(("step", "offset", "msg"), [
        (None, 1, "must have a step value and an offset value"),
        (0, 0, "step cannot be 0."),
        (2, 2, "offset must be smaller (by absolute value) than step."),
        (-3, 1, "step and offset must be both positive or both negative."),
        (2.5, 1, "step/offset must be integer"),
    ])
    def test_schema_errors(self, step: Any, offset: Any, msg: str) -> None:
        with pytest.raises(c.InvalidSchemaError) as exc:
            c.Modulo(step, offset)
        assert msg in exc.value.message

    def test_text(self) -> None:
        assert c.Modulo(2, 1).describe() == \
            "The value must be a multiple of 2 with an offset of 1."


class TestAllowedValues:
    def test_message_uses_json(self) -> None:
        assert fails(c.AllowedValues(("a", "b")), "c") == \
            '"c" is not an allowed value ["a", "b"]'
        assert fails(c.AllowedValues((1, 2)), 3) == "3 is not an allowed value [1, 2]"

    def test_comparison_in_value_type(self) -> None:
        c.AllowedValues((1, 2)).validate("1", value_type="number")
        c.AllowedValues(("1", "2")).validate(2, value_type="number")
        c.AllowedValues(("true",)).validate("yes", value_type="boolean")

    def test_list_value_every_item(self) -> None:
        c.AllowedValues(("a", "b")).validate(["a", "b", "a"])
        assert fails(c.AllowedValues(("a",)), ["a", "z"]) == \
            '["a", "z"] is not an allowed value ["a"]'

    def test_not_a_list(self) -> None:
        with pytest.raises(c.InvalidSchemaError, match="AllowedValues must be a list"):
            c.AllowedValues.of("abc")

    def test_text(self) -> None:
        assert c.AllowedValues(("a", 1)).describe() == 'Allowed values: "a", 1'


class TestAllowedPattern:
    def test_whole_value_must_match(self) -> None:
        c.AllowedPattern(pattern="[a-z]+").validate("abc")
        assert fails(c.AllowedPattern(pattern="[a-z]+"), "abc1") == \
            '"abc1" does not match pattern "[a-z]+"'

    def test_text_and_errors(self) -> None:
        assert c.AllowedPattern(pattern="x").describe() == "Value must match pattern: x"
        with pytest.raises(c.InvalidSchemaError, match="AllowedPattern must be a string"):
            c.AllowedPattern.of(5)


class TestCustom:
    def test_registry(self) -> None:
        c.register_custom_constraint("test.even", lambda v, ctx: int(v) % 2 == 0)
        try:
            con = c.CustomConstraint(name="test.even")
            con.validate(4)
            assert fails(con, 3) == '"3" does not validate test.even'
            assert con.describe() == "Value must be of type test.even"
        finally:
            c.unregister_custom_constraint("test.even")

    def test_validator_object_with_messages(self) -> None:
        class V:
            message = "Must be an x"

            def validate(self, value: Any, context: Any) -> bool:
                return context == "ok"

            def error(self, value: Any) -> str:
                return f"bad {value}"

        c.register_custom_constraint("test.obj", V())
        try:
            con = c.CustomConstraint(name="test.obj")
            con.validate("a", context="ok")
            assert fails(con, "a", context="no") == "bad a"
            assert con.describe() == "Must be an x"
        finally:
            c.unregister_custom_constraint("test.obj")

    def test_unknown(self) -> None:
        assert fails(c.CustomConstraint(name="nope.nope"), "v") == \
            '"v" does not validate nope.nope (constraint not found)'


def test_applicability() -> None:
    with pytest.raises(c.InvalidSchemaError) as exc:
        c.check_applicable([c.AllowedPattern(pattern="x")], "number", "Number")
    assert exc.value.message == "AllowedPattern constraint invalid for Number"
    with pytest.raises(c.InvalidSchemaError, match="Range constraint invalid for string"):
        c.check_applicable([c.Range(1, 2)], "string", "string")
    c.check_applicable([c.Length(1, 2)], "map", "json")


def test_bool_reading() -> None:
    assert c.str_to_bool(" Yes ") is True
    assert c.str_to_bool("0") is False
    with pytest.raises(ValueError) as exc:
        c.str_to_bool("maybe")
    assert str(exc.value) == ("Unrecognized value 'maybe', acceptable values are: "
                              "'0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', "
                              "'true', 'y', 'yes'")
