"""Parsing of stack bodies: templates, environments and options, with Heat's rules."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kiln import errors
from kiln.api.faults import HTTPError
from kiln.api.instantiation import Instantiation, parse_environment, parse_template


def test_yaml_template_keeps_dates_as_strings() -> None:
    tpl = parse_template("heat_template_version: 2018-08-31\nresources: {}\n", 10000)
    assert tpl == {"heat_template_version": "2018-08-31", "resources": {}}


def test_json_template_text_is_parsed_as_json() -> None:
    tpl = parse_template('{"AWSTemplateFormatVersion": "2010-09-09"}', 10000)
    assert tpl == {"AWSTemplateFormatVersion": "2010-09-09"}


def test_empty_environment_text_is_an_empty_environment() -> None:
    assert parse_environment("") == {}
    assert parse_environment("parameters: {a: 1}") == {"parameters": {"a": 1}}


def _inst(body: dict[str, Any], **kw: Any) -> Instantiation:
    return Instantiation(body, max_template_size=10000, **kw)


def test_environment_gets_every_section_and_the_body_parameters() -> None:
    env = _inst({"environment": {"parameter_defaults": {"x": 1}},
                 "parameters": {"p": "v"}}).environment()
    assert env == {"parameters": {"p": "v"}, "resource_registry": {},
                   "parameter_defaults": {"x": 1}, "encrypted_param_names": [],
                   "event_sinks": []}


def test_environment_files_replace_the_merged_environment() -> None:
    env = _inst({"environment": {"bogus": 1}, "environment_files": ["e.yaml"]}).environment()
    assert env["parameters"] == {}


def test_args_are_the_remaining_options_with_types_checked() -> None:
    data = _inst({"stack_name": "s", "template": {}, "timeout_mins": "5", "tags": "a,b",
                  "disable_rollback": "false", "adopt_stack_data": None})
    assert data.args() == {"timeout_mins": 5, "tags": ["a", "b"], "disable_rollback": False,
                           "adopt_stack_data": None}


def test_patch_marks_existing_and_may_omit_the_template() -> None:
    data = _inst({"parameters": {"p": 1}}, patch=True)
    assert data.args(is_update=True) == {"existing": True}
    template = asyncio.run(data.template(allowed_schemes=["http"], timeout=1))
    assert template is None


def test_clear_parameters_must_be_names() -> None:
    assert _inst({"clear_parameters": ["a"]}).args(is_update=True) == {
        "clear_parameters": ["a"]}
    with pytest.raises(HTTPError):
        _inst({"clear_parameters": "a"}).args(is_update=True)


def test_adopt_data_supplies_the_template() -> None:
    data = _inst({"stack_name": "s",
                  "adopt_stack_data": '{"template": {"heat_template_version": "2015-04-30"}}'})
    template = asyncio.run(data.template(allowed_schemes=["http"], timeout=1))
    assert template == {"heat_template_version": "2015-04-30"}
    assert data.args()["adopt_stack_data"] == {
        "template": {"heat_template_version": "2015-04-30"}}


def test_stack_name_rules() -> None:
    assert _inst({"stack_name": "a-b.c_1"}).stack_name() == "a-b.c_1"
    with pytest.raises(errors.StackValidationFailed):
        _inst({"stack_name": "a/b"}).stack_name()
