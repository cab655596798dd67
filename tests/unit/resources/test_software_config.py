"""The software-config family stores immutable configs through runtime.software_configs.

Expected stored configs were worked out from Heat 27's behaviour (observed outputs of
``get_attr: [r, config]`` for the same properties).
"""

from __future__ import annotations

import email

import pytest

from kiln.errors import StackValidationFailed
from tests.unit.resources.fakes import FakeRuntime, make, run


@pytest.fixture
def rt() -> FakeRuntime:
    return FakeRuntime()


async def test_software_config_round_trip(rt: FakeRuntime) -> None:
    res = make(rt, "sc", "OS::Heat::SoftwareConfig", {
        "group": "script",
        "config": "echo hi",
        "inputs": [{"name": "foo", "default": "dflt"},
                   {"name": "bar", "type": "Number", "replace_on_change": True},
                   {"name": "baz", "description": "d"}],
        "outputs": [{"name": "result"}, {"name": "err", "error_output": True}],
        "options": {"a": 1},
    })
    await run(res, "create")
    stored = rt.software_configs.configs[res.resource_id or ""]
    assert res.reference_id() == stored["id"]
    assert stored["name"].startswith("teststack-sc-")
    assert stored["group"] == "script"
    assert stored["config"] == "echo hi"
    assert stored["options"] == {"a": 1}
    # what Heat 27 stored for the same resource (GET /software_configs/{id})
    assert stored["inputs"] == [
        {"name": "foo", "description": "", "type": "String", "default": "dflt"},
        {"name": "bar", "description": "", "type": "Number", "default": 0,
         "replace_on_change": True},
        {"name": "baz", "description": "d", "type": "String", "default": ""}]
    assert stored["outputs"] == [
        {"name": "result", "description": "", "type": "String", "error_output": False},
        {"name": "err", "description": "", "type": "String", "error_output": True}]
    assert res.get_attribute("config") == "echo hi"
    await run(res, "delete")
    assert rt.software_configs.configs == {}
    await run(res, "delete")                          # already gone: still fine


def test_any_change_replaces_the_config(rt: FakeRuntime) -> None:
    res = make(rt, "sc", "OS::Heat::SoftwareConfig", {"config": "x"})
    assert res.needs_replace({"config": "y"})


async def test_structured_config_keeps_the_map(rt: FakeRuntime) -> None:
    res = make(rt, "st", "OS::Heat::StructuredConfig",
               {"config": {"a": [1, 2], "b": {"get_input": "x"}}})
    await run(res, "create")
    assert res.get_attribute("config") == {"a": [1, 2], "b": {"get_input": "x"}}


async def test_cloud_config_is_yaml_with_header(rt: FakeRuntime) -> None:
    res = make(rt, "cc", "OS::Heat::CloudConfig", {"cloud_config": {
        "packages": ["a", "b"], "write_files": [{"path": "/x", "content": "hello\nworld"}],
        "runcmd": [["ls", "-l"]], "b": {"z": 1, "a": True}}})
    await run(res, "create")
    # exactly what Heat 27 stored for this cloud_config
    assert res.get_attribute("config") == (
        "#cloud-config\nb:\n  a: true\n  z: 1\npackages:\n- a\n- b\nruncmd:\n- - ls\n  - -l\n"
        "write_files:\n- content: 'hello\n\n    world'\n  path: /x\n")
    assert rt.software_configs.configs[res.resource_id or ""]["group"] == "Heat::Ungrouped"


async def test_software_component(rt: FakeRuntime) -> None:
    res = make(rt, "comp", "OS::Heat::SoftwareComponent",
               {"configs": [{"tool": "script", "config": "echo 1"}]})
    await run(res, "create")
    stored = rt.software_configs.configs[res.resource_id or ""]
    assert stored["group"] == "component"
    assert stored["config"] == {"configs": [{"actions": ["CREATE", "UPDATE"],
                                             "config": "echo 1", "tool": "script"}]}
    assert res.get_attribute("config") is None        # as Heat 27 answers


def test_software_component_validation(rt: FakeRuntime) -> None:
    with pytest.raises(StackValidationFailed) as info:
        make(rt, "comp", "OS::Heat::SoftwareComponent", {"configs": [
            {"tool": "a", "actions": ["CREATE"]}, {"tool": "b", "actions": ["CREATE"]}]})
    assert info.value.message == ('Defining more than one configuration for the same action '
                                  'in SoftwareComponent "comp" is not allowed.')
    with pytest.raises(StackValidationFailed, match=r"configs: length \(0\) is out of range"):
        make(rt, "c2", "OS::Heat::SoftwareComponent", {"configs": []})


async def test_multipart_mime(rt: FakeRuntime) -> None:
    sc = make(rt, "sc", "OS::Heat::SoftwareConfig", {"config": "#!/bin/sh\necho hi"})
    await run(sc, "create")
    mm = make(rt, "mm", "OS::Heat::MultipartMime", {"parts": [
        {"config": sc.reference_id()},
        {"config": "plain text", "filename": "f.sh"},
        {"config": "#cloud-config\n{}", "subtype": "cloud-config"},
    ]})
    await run(mm, "create")
    message = email.message_from_string(mm.get_attribute("config"))
    assert message.get_content_type() == "multipart/mixed"
    parts = message.get_payload()
    assert isinstance(parts, list)
    assert [p.get_content_type() for p in parts] == [
        "text/plain", "text/f", "text/cloud-config"]     # Heat: subtype from "f.sh" is "f"
    assert parts[0].get_payload() == "#!/bin/sh\necho hi"  # referenced config is inlined
    assert parts[1].get_filename() == "f.sh"
    assert rt.software_configs.configs[mm.resource_id or ""]["config"] == \
        mm.get_attribute("config")


async def test_multipart_of_multipart_flattens(rt: FakeRuntime) -> None:
    inner = make(rt, "inner", "OS::Heat::MultipartMime", {"parts": [
        {"config": "one", "subtype": "x-shellscript"}, {"config": "two"}]})
    await run(inner, "create")
    outer = make(rt, "outer", "OS::Heat::MultipartMime", {"parts": [
        {"config": inner.reference_id(), "type": "multipart"}, {"config": "three"}]})
    await run(outer, "create")
    parts = email.message_from_string(outer.get_attribute("config")).get_payload()
    assert isinstance(parts, list)
    assert [p.get_payload() for p in parts] == ["one", "two", "three"]
    assert parts[0].get_content_type() == "text/x-shellscript"


async def test_input_defaults_are_typed_like_heat(rt: FakeRuntime) -> None:
    res = make(rt, "sc", "OS::Heat::SoftwareConfig", {"inputs": [
        {"name": "l", "type": "CommaDelimitedList", "default": "a,b"},
        {"name": "j", "type": "Json"},
        {"name": "b", "type": "Boolean", "default": "true"},
        {"name": "n", "type": "Number", "default": "3"}]})
    await run(res, "create")
    stored = rt.software_configs.configs[res.resource_id or ""]
    # observed on Heat 27 for the same properties
    assert stored["config"] is None
    assert stored["group"] == "Heat::Ungrouped"
    assert stored["inputs"] == [
        {"name": "l", "description": "", "type": "CommaDelimitedList", "default": ["a", "b"]},
        {"name": "j", "description": "", "type": "Json", "default": {}},
        {"name": "b", "description": "", "type": "Boolean", "default": True},
        {"name": "n", "description": "", "type": "Number", "default": 3}]
