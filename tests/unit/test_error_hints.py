"""kiln.errors' suggestions: the closest known name, and a hint found through the errors
that reword the one carrying it."""

from __future__ import annotations

from kiln.errors import StackValidationFailed, did_you_mean, hint_of


def test_did_you_mean_the_closest_name_or_nothing() -> None:
    assert did_you_mean("lenght", ["length", "sequence"]) == "did you mean length?"
    assert did_you_mean("LENGTH", ["length"]) == "did you mean length?"
    assert did_you_mean("max_resource_per_stack", ["max_resources_per_stack", "debug"],
                        "'{}'") == "did you mean 'max_resources_per_stack'?"
    assert did_you_mean("zzzzzz", ["length", "sequence"]) is None
    assert did_you_mean("length", ["length"]) is None


def test_a_hint_survives_a_rewording_that_keeps_the_message() -> None:
    try:
        try:
            raise StackValidationFailed("Unknown Property lenght", hint="did you mean length?")
        except StackValidationFailed as inner:
            raise StackValidationFailed(f"Property error: resources.r: {inner.message}"
                                        ) from None
    except StackValidationFailed as outer:
        assert hint_of(outer) == "did you mean length?"


def test_an_unrelated_error_raised_while_handling_one_gets_no_hint() -> None:
    try:
        try:
            raise StackValidationFailed("Unknown Property lenght", hint="did you mean length?")
        except StackValidationFailed:
            raise StackValidationFailed("something else went wrong") from None
    except StackValidationFailed as outer:
        assert hint_of(outer) is None
