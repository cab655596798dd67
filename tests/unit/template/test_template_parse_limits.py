"""Parsing a body: JSON or YAML as Heat does, plus the limits that keep Kiln safe."""

from __future__ import annotations

import json
import time

import pytest

from kiln.template import TemplateError, load_template
from kiln.template.errors import (
    RequestLimitExceeded,
    StackValidationFailed,
    TemplateParseError,
)
from kiln.template.parser import MAX_DEPTH


def test_yaml_dates_stay_strings_so_the_version_is_recognised() -> None:
    # PyYAML would make 2016-10-14 a datetime.date; Heat keeps it a string.
    t = load_template("heat_template_version: 2016-10-14\n")
    assert t.version.date == "2016-10-14"
    assert t.raw["heat_template_version"] == "2016-10-14"


def test_json_body_and_decoded_mapping_are_accepted() -> None:
    body = {"heat_template_version": "2015-04-30", "resources": {}}
    assert load_template(json.dumps(body)).version.date == "2015-04-30"
    assert load_template(body).version.date == "2015-04-30"
    assert load_template(json.dumps(body).encode()).version.date == "2015-04-30"


def test_description_defaults_like_heat() -> None:
    assert load_template("heat_template_version: 2015-04-30\n").description == "No description"
    t = load_template("heat_template_version: 2015-04-30\ndescription: hello\n")
    assert t.description == "hello"


def test_size_limit_message_is_heats() -> None:
    body = "heat_template_version: 2015-04-30\ndescription: " + "x" * 200 + "\n"
    with pytest.raises(RequestLimitExceeded) as exc:
        load_template(body, max_size=100)
    assert exc.value.message == (
        f"Request limit exceeded: Template size ({len(body)} bytes) exceeds maximum "
        "allowed size (100 bytes).")
    assert exc.value.http_status == 400


def test_yaml_syntax_error_names_line_and_column() -> None:
    body = "heat_template_version: 2015-04-30\nresources:\n  a: [1, 2\n  b: 3\n"
    with pytest.raises(TemplateParseError) as exc:
        load_template(body)
    assert exc.value.message.startswith("Error parsing template [root stack] ")
    assert "line 4, column" in exc.value.message
    assert exc.value.line == 4  # type: ignore[attr-defined]
    assert exc.value.error_type == "HTTPBadRequest"


def test_a_scalar_its_tag_cannot_convert_is_a_parse_error() -> None:
    # Heat 27 (POST /stacks and /validate): 400 "Template not in valid format: invalid
    # literal for int() with base 10: 'abc'"; before, a Python ValueError escaped here
    with pytest.raises(TemplateParseError) as exc:
        load_template("heat_template_version: 2018-08-31\nresources:\n  a: !!int abc\n")
    assert exc.value.message == ("Template not in valid format: invalid literal for int() "
                                 "with base 10: 'abc'")


def test_not_a_mapping() -> None:
    with pytest.raises(TemplateParseError) as exc:
        load_template("- a\n- b\n")
    assert exc.value.message == "The template is not a JSON object or YAML mapping."


def test_python_tags_are_refused() -> None:
    body = "heat_template_version: 2015-04-30\nx: !!python/object/apply:os.system ['true']\n"
    with pytest.raises(TemplateParseError):
        load_template(body)


def test_alias_bomb_is_rejected_quickly() -> None:
    lines = ["heat_template_version: 2015-04-30", 'a: &a ["lol","lol","lol","lol","lol"]']
    for i in range(1, 12):
        prev = chr(ord("a") + i - 1)
        cur = chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    body = "\n".join(lines) + "\n"
    # CPU time of this process, not wall-clock: the refusal costs a few milliseconds of
    # work (expanding the aliases would take hours); a loaded machine only delays it
    start = time.process_time()
    with pytest.raises(RequestLimitExceeded) as exc:
        load_template(body)
    assert time.process_time() - start < 2.0
    assert "YAML aliases" in exc.value.message


def test_small_aliases_are_fine() -> None:
    body = ("heat_template_version: 2015-04-30\nresources:\n"
            "  a: &r {type: OS::Heat::None, properties: {x: 1}}\n  b: *r\n")
    t = load_template(body)
    assert t.resource_names == ["a", "b"]


@pytest.mark.parametrize("n", [MAX_DEPTH + 5, 100_000, 250_000])
def test_deep_flow_nesting_is_refused_without_crashing(n: int) -> None:
    # libyaml recurses on the C stack; 100k nested brackets would kill the process.
    body = "heat_template_version: 2015-04-30\ndescription: " + "[" * n + "]" * n + "\n"
    with pytest.raises(StackValidationFailed) as exc:
        load_template(body, max_size=10**6)
    assert "nested too deeply" in exc.value.message


def test_deep_json_mapping_is_refused() -> None:
    data: dict[str, object] = {"x": 1}
    for _ in range(MAX_DEPTH + 10):
        data = {"k": data}
    with pytest.raises(StackValidationFailed):
        load_template({"heat_template_version": "2015-04-30", "description": data})


def test_deep_block_nesting_is_refused() -> None:
    lines = ["heat_template_version: 2015-04-30", "resources:"]
    indent = 2
    for i in range(MAX_DEPTH + 5):
        lines.append(" " * indent + f"k{i}:")
        indent += 1
    lines.append(" " * indent + "v")
    with pytest.raises(TemplateError):
        load_template("\n".join(lines) + "\n")


def test_empty_body_has_no_version() -> None:
    with pytest.raises(TemplateError) as exc:
        load_template("")
    assert exc.value.message == ("The template version is invalid: Template version was "
                                 "not provided")


def test_empty_description_is_no_description() -> None:
    assert load_template('heat_template_version: 2015-04-30\ndescription: ""\n').description \
        == "No description"
