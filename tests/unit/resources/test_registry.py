"""Where plugins come from, and the resource_types API bodies they produce.

The expected bodies in heat27/resource_types.json were recorded from a live Heat 27
(GET /v1/{project}/resource_types[...]) for every type Kiln implements here.
"""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kiln.errors import EntityNotFound, HTTPBadRequest, NotSupported, ResourceTypeNotFound
from kiln.resources.base import Resource, SupportStatus
from kiln.resources.registry import InvalidFilter, Registry, build_registry
from tests.unit.resources.fakes import registry

HEAT = json.loads((Path(__file__).parent / "heat27" / "resource_types.json").read_text())
MINE = sorted(HEAT["schemas"])


@pytest.mark.parametrize("type_name", MINE)
def test_schema_body_matches_heat(type_name: str) -> None:
    assert registry().schema(type_name) == HEAT["schemas"][type_name]


@pytest.mark.parametrize("key", sorted(HEAT["templates"]))
def test_template_body_matches_heat(key: str) -> None:
    type_name, template_type = key.split("|")
    assert registry().template(type_name, template_type) == HEAT["templates"][key]


def test_listing_keeps_heats_order_and_descriptions() -> None:
    listed = registry().list_types()
    heat_order = [t for t in HEAT["list"] if t in listed]
    assert listed[:len(heat_order)] == heat_order
    described = {d["resource_type"]: d["description"] for d in HEAT["list_with_description"]}
    for item in registry().list_types(with_description=True):
        if item["resource_type"] in HEAT["schemas"]:        # the types recorded here
            assert item["description"] == described[item["resource_type"]]


def test_listing_filters() -> None:
    reg = registry()
    # name is a regular expression matched at the start, as in Heat
    assert reg.list_types(type_name="OS::Heat::W.*", version="2014.2") == \
        HEAT["list_name_W_version_2014_2"]
    assert reg.list_types(type_name="Wait") == []
    assert reg.list_types(type_name="*") == []          # invalid regex matches nothing
    assert "OS::Heat::None" in reg.list_types(support_status="SUPPORTED")
    assert reg.list_types(support_status="DEPRECATED") == []
    with pytest.raises(InvalidFilter) as info:
        reg.list_types(support_status="FOO")
    assert info.value.error_type == "Invalid"
    assert str(info.value) == (
        "Data supplied was not valid: Invalid support status and should be one of "
        "('UNKNOWN', 'SUPPORTED', 'DEPRECATED', 'UNSUPPORTED', 'HIDDEN')")


def test_unknown_and_hidden_types() -> None:
    reg = Registry()

    class Hidden(Resource):
        type_name = "Test::Hidden"
        support_status = SupportStatus("HIDDEN")

    reg.register("Test::Hidden", Hidden)
    assert reg.list_types() == []
    with pytest.raises(NotSupported, match=r"^Test::Hidden is not supported\.$"):
        reg.schema("Test::Hidden")
    with pytest.raises(EntityNotFound, match=r"The Resource Type \(X::Y\) could not be found"):
        reg.schema("X::Y")
    with pytest.raises(ResourceTypeNotFound, match=r"The Resource Type \(X::Y\) could not"):
        reg.get("X::Y")
    with pytest.raises(HTTPBadRequest, match='Invalid template type "foo", valid types are'):
        registry().template("OS::Heat::None", "foo")


PLUGIN_WITH_MAPPING = '''
from kiln.resources.base import Resource, Property

class Thing(Resource):
    """A thing an operator added."""
    properties_schema = {"size": Property("integer", "How big.")}

def resource_mapping():
    return {"Acme::Thing": Thing, "OS::Heat::None": Thing}
'''

PLUGIN_WITH_CLASSES = '''
from kiln.resources.base import Resource

class Widget(Resource):
    type_name = "Acme::Widget"
'''


@pytest.fixture
def plugin_dir(tmp_path: Path) -> Path:
    (tmp_path / "thing.py").write_text(PLUGIN_WITH_MAPPING)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "widget.py").write_text(PLUGIN_WITH_CLASSES)
    return tmp_path


def test_plugin_dirs_add_and_override_types(plugin_dir: Path) -> None:
    reg = build_registry([str(plugin_dir)], use_entry_points=False)
    thing = reg.get("Acme::Thing")
    assert reg.get("Acme::Widget").__name__ == "Widget"
    assert reg.get("OS::Heat::None") is thing          # operator plugins win over built-ins
    assert reg.schema("Acme::Thing")["properties"]["size"]["type"] == "integer"
    listing = reg.list_types(with_description=True)
    assert {"resource_type": "Acme::Thing",
            "description": "A thing an operator added."} in listing
    # types Heat does not have are listed after Heat's, in load order (sorted file paths)
    assert reg.list_types()[-2:] == ["Acme::Widget", "Acme::Thing"]


@pytest.fixture
def installed_distribution(tmp_path: Path) -> Iterator[None]:
    """A real (tiny) installed distribution advertising kiln.resources entry points."""
    pkg = tmp_path / "acme_plugins"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "gadget.py").write_text(textwrap.dedent('''
        from kiln.resources.base import Resource
        class Gadget(Resource):
            type_name = "Acme::Gadget"
        class Gizmo(Resource):
            type_name = "Acme::Gizmo"
    '''))
    dist = tmp_path / "acme_plugins-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-plugins\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[kiln.resources]\ngadgets = acme_plugins.gadget\ngizmo = acme_plugins.gadget:Gizmo\n")
    sys.path.insert(0, str(tmp_path))
    try:
        yield
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.startswith("acme_plugins")]:
            del sys.modules[name]


def test_entry_points_add_types(installed_distribution: None) -> None:
    reg = build_registry(builtins=False)
    assert set(reg.list_types()) >= {"Acme::Gadget", "Acme::Gizmo"}


def test_builtins_cover_the_cloud_free_types() -> None:
    expected = {
        "OS::Heat::None", "OS::Heat::Value", "OS::Heat::RandomString", "OS::Heat::TestResource",
        "OS::Heat::SoftwareConfig", "OS::Heat::StructuredConfig", "OS::Heat::CloudConfig",
        "OS::Heat::MultipartMime", "OS::Heat::SoftwareComponent",
        "OS::Heat::WaitConditionHandle", "OS::Heat::WaitCondition",
        "OS::Heat::UpdateWaitConditionHandle", "AWS::CloudFormation::WaitConditionHandle",
        "AWS::CloudFormation::WaitCondition"}
    assert expected <= set(registry().types())


def test_schema_with_description() -> None:
    body: dict[str, Any] = registry().schema("OS::Heat::Value", with_description=True)
    assert body["description"].startswith("A resource which exposes its value property")
