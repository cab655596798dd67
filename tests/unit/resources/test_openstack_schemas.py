"""The OpenStack types' schemas against Heat 27's declarations (heat27/openstack_schemas.json,
read from openstack-heat 27.0.1's classes; descriptions left out: Kiln words its own).
Every property with its type, default, required/update_allowed/immutable flags and
constraints, the attribute names, the type's support status and the Neutron extension
it needs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kiln.clients.availability import missing_service
from kiln.clients.manager import network_extension
from tests.unit.resources.fakes import registry

HEAT = json.loads((Path(__file__).parent / "heat27" / "openstack_schemas.json").read_text())
TYPES = HEAT["types"]


def _bare(prop: dict[str, Any]) -> dict[str, Any]:
    """A property schema without its (and its constraints' and items') descriptions."""
    out = {k: v for k, v in prop.items() if k != "description"}
    if "constraints" in out:
        out["constraints"] = [{k: v for k, v in c.items() if k != "description"}
                              for c in out["constraints"]]
    if "schema" in out:
        out["schema"] = {k: _bare(v) for k, v in out["schema"].items()}
    return out


@pytest.mark.parametrize("type_name", sorted(TYPES))
def test_schema_matches_heat_27(type_name: str) -> None:
    heat = TYPES[type_name]
    mine = registry().schema(type_name)
    assert {k: _bare(v) for k, v in mine["properties"].items()} == heat["properties"]
    assert sorted(set(mine["attributes"]) - {"show"}) == heat["attributes"]
    assert mine["support_status"] == heat["support_status"]


@pytest.mark.parametrize("type_name", sorted(t for t in TYPES if t.startswith("OS::Neutron")))
def test_a_missing_extension_makes_the_type_unavailable(type_name: str) -> None:
    cls = registry().get(type_name)
    wanted = TYPES[type_name]["required_extension"]
    assert list(getattr(cls, "required_extension", ())) == wanted
    with_all = frozenset({"network", *map(network_extension, wanted)})
    assert missing_service(cls, with_all) is None
    if wanted:
        assert missing_service(cls, frozenset({"network"})) == (
            f"Required extension {wanted[0]} in neutron service is not available.")


@pytest.mark.parametrize(("type_name", "extension"), [
    ("OS::Neutron::Firewall", "fwaas"), ("OS::Neutron::VPNService", "vpnaas"),
    ("OS::Neutron::PortChain", "sfc"), ("OS::Neutron::TaaS::TapService", "taas"),
    ("OS::Neutron::L2Gateway", "l2-gateway")])
def test_extension_types_kiln_does_not_drive(type_name: str, extension: str) -> None:
    cls = registry().get(type_name)
    assert missing_service(cls, frozenset({"network"})) == (
        f"Required extension {extension} in neutron service is not available.")
    present = frozenset({"network", network_extension(extension)})
    assert missing_service(cls, present) == f"Kiln does not implement {type_name}."
