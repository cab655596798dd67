"""``resource_types/{type}`` for the OpenStack types as Heat 27.0.1 shows them on the test
cloud (compared side by side, property by property: update_allowed, immutable,
required, type, default, support status; attributes and their types): the differences
that sweep found, one test per kind."""

from __future__ import annotations

import pytest

from kiln.resources.registry import global_registry
from kiln.resources.typedocs import schema_body


def _body(type_name: str) -> dict[str, object]:
    return schema_body(type_name, global_registry().get(type_name))


def test_hidden_attribute_is_not_listed() -> None:
    """Heat hides the server's ``first_address`` (deprecated since 2014.2); it still
    resolves for old templates."""
    attrs = _body("OS::Nova::Server")["attributes"]
    assert "first_address" not in attrs  # type: ignore[operator]
    assert "networks" in attrs  # type: ignore[operator]


def test_volume_attributes_are_text() -> None:
    """Heat's Cinder volume answers every plain attribute as the text of Cinder's value,
    and its schema says so."""
    attrs = _body("OS::Cinder::Volume")["attributes"]
    for name in ("size", "bootable", "encrypted"):
        assert attrs[name]["type"] == "string", name  # type: ignore[index]


@pytest.mark.parametrize(
    ("type_name", "version", "message"),
    [
        ("OS::Neutron::SecurityGroup", "2014.1", None),
        ("OS::Neutron::SecurityGroupRule", "7.0.0", None),
        ("OS::Nova::KeyPair", "2014.1", None),
        ("OS::Nova::Flavor", "2014.2", None),
        ("OS::Keystone::Project", "2015.1", "Supported versions: keystone v3"),
        ("OS::Keystone::User", "2015.1", "Supported versions: keystone v3"),
        ("OS::Keystone::Role", "2015.1", "Supported versions: keystone v3"),
        ("OS::Keystone::Domain", "8.0.0", "Supported versions: keystone v3"),
        ("OS::Keystone::Region", "6.0.0", "Supported versions: keystone v3"),
        ("OS::Keystone::GroupRoleAssignment", "5.0.0", "Supported versions: keystone v3"),
        ("OS::Cinder::VolumeType", "2015.1", None),
        ("OS::Neutron::ProviderNet", "2014.1", None),
        ("OS::Nova::ServerGroup", "2014.2", None),
    ],
)
def test_type_support_status_has_heats_version(
    type_name: str, version: str, message: str | None
) -> None:
    assert _body(type_name)["support_status"] == {
        "status": "SUPPORTED",
        "message": message,
        "version": version,
        "previous_status": None,
    }
