"""Types whose OpenStack service is missing from the catalog are left out of the
listing and refused with Heat's HEAT-E99001 message (recorded from Heat 27 with a
catalog holding no compute or load-balancer service)."""

from __future__ import annotations

import pytest

from kiln.clients.availability import missing_service, service_filter
from kiln.errors import ResourceTypeUnavailable
from kiln.resources.registry import build_registry


def test_the_listing_shows_only_types_whose_service_is_in_the_catalog() -> None:
    registry = build_registry((), use_entry_points=False)
    none = registry.list_types(available=service_filter(frozenset()))
    assert "OS::Heat::None" in none
    assert "OS::Nova::Server" not in none and "OS::Neutron::Net" not in none
    compute = registry.list_types(available=service_filter(frozenset({"compute"})))
    assert "OS::Nova::Server" in compute and "OS::Neutron::Net" not in compute
    everything = frozenset({"compute", "network", "block-storage", "load-balancer"})
    listed = registry.list_types(available=service_filter(everything))
    assert "OS::Cinder::Volume" in listed
    assert "OS::Octavia::LoadBalancer" not in listed     # a service Kiln does not drive


def test_schema_of_an_unavailable_type_is_heats_400() -> None:
    registry = build_registry((), use_entry_points=False)
    with pytest.raises(ResourceTypeUnavailable) as caught:
        registry.schema("OS::Octavia::LoadBalancer", available=service_filter(frozenset()))
    assert caught.value.message == (
        "HEAT-E99001 Service octavia is not available for resource type "
        "OS::Octavia::LoadBalancer, reason: Service endpoint not in service catalog.")
    assert caught.value.http_status == 400
    assert registry.schema("OS::Nova::Server",
                           available=service_filter(frozenset({"compute"})))


def test_the_create_reason_names_the_service_type() -> None:
    registry = build_registry((), use_entry_points=False)
    server = registry.get("OS::Nova::Server")
    assert missing_service(server, frozenset({"network"})) == \
        "nova compute endpoint is not in service catalog."
    assert missing_service(server, frozenset({"compute"})) is None
    assert missing_service(registry.get("OS::Heat::None"), frozenset()) is None
