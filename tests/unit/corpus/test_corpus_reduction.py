"""The corpus's reduction: what it hides must differ between runs and servers, what it
keeps must not (tests/corpus/wire.py, shared by the recorder and the comparison)."""

from __future__ import annotations

from typing import Any

from tests.corpus.compare import clean, explain, heat_misbehaved
from tests.corpus.wire import norm, shape, stack_name


def test_volatile_parts_become_placeholders() -> None:
    heat = ("http://127.0.0.1:8180/v1/admin/stacks/c-x/6f1c2a3b-1111-4a2b-9c3d-0123456789ab "
            "at 2026-11-24T02:01:40Z: c-x-r-u2fnrgteazh7")
    kiln = ("http://127.0.0.1:40211/v1/admin/stacks/c-x/0d9e8f7a-2222-4b3c-8d4e-fedcba987654 "
            "at 2025-01-02T03:04:05.123456: c-x-r-abcdefgh1234")
    assert norm(heat) == norm(kiln) == "<url>/stacks/c-x/<uuid> at <time>: c-x-r-<random>"


def test_what_a_client_reads_is_kept() -> None:
    message = "Property error: resources.r.properties.length: 0 is out of range (min: 1)"
    assert norm({"m": [message, 5, None]}) == {"m": [message, 5, None]}
    # twelve lowercase letters outside a corpus stack's name are not a random suffix
    assert norm("outputs.o.value-abcdefghijkl") == "outputs.o.value-abcdefghijkl"


def test_random_values_compare_by_type_and_length() -> None:
    assert shape({"v": "Xl2KouV8", "n": [1, "ab"]}) == {"v": "<str:8>", "n": [1, "<str:2>"]}
    assert shape("Xl2KouV8") != shape("Xl2KouV")


def test_stack_names_are_valid_and_distinct() -> None:
    assert stack_name("hot-2013-05-23-get_attr-1") == "c-hot-2013-05-23-get_attr-1"
    assert stack_name("list-limit=x") != stack_name("list-limit=y")
    assert stack_name("a b") == "c-a-b"


def test_heat_answers_not_to_copy() -> None:
    assert heat_misbehaved([{"status": 500}]) == "Heat answered 500"
    assert heat_misbehaved([{"status": 400, "type": "ValueError", "message": None}])
    assert heat_misbehaved([{"failure": "TimeoutError"}])
    assert heat_misbehaved([{"status": 400, "type": "HTTPBadRequest",
                             "message": "No stack name specified"}]) is None


def test_a_difference_names_the_step_and_field() -> None:
    heat: list[dict[str, Any]] = [{"status": 201}, {"status": 400, "message": "a"}]
    kiln: list[dict[str, Any]] = [{"status": 201}, {"status": 400, "message": "b"}]
    assert explain(heat, kiln) == 'step 2 message: Heat "a" / Kiln "b"'
    assert not clean([{"status": 502}])
    assert clean([{"status": 404, "message": "Not found"}])
