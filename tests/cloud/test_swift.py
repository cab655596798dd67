"""OS::Swift::Container through kiln serve and heatclient, against a real Swift (proxy,
account, container and object servers from PyPI, keystone auth) started beside the test
cloud and registered in its catalog as ``object-store`` (tests/support/swift.py)."""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import urlparse

import pytest

from tests.cloud.helpers import container_gone, delete_and_wait, outputs, physical_ids, settled
from tests.support.clients import wait_for_stack_status
from tests.support.cloud import Cloud

OUTPUTS = {key: {"value": {"get_attr": ["box", key]}}
           for key in ("DomainName", "WebsiteURL", "RootURL", "ObjectCount", "BytesUsed",
                       "HeadContainer")}


@pytest.fixture
def sdk(swift: Any, cloud: Cloud) -> Any:
    """The cloud's admin connected once Swift is in the catalog: the session's own
    connection read the catalog before Swift was registered, and keeps that one."""
    return cloud.connect()


def _template(props: dict[str, Any]) -> dict[str, Any]:
    return {"heat_template_version": "2018-08-31",
            "resources": {"box": {"type": "OS::Swift::Container", "properties": props}},
            "outputs": OUTPUTS}


def test_container_with_metadata_is_replaced_on_update_and_refuses_a_non_empty_delete(
        swift_heat: Any, sdk: Any) -> None:
    name = f"box-{uuid.uuid4().hex[:6]}"
    swift_heat.stacks.create(stack_name=name, template=_template({
        "X-Container-Read": ".r:*", "X-Container-Meta": {"Colour": "blue"},
        "X-Account-Meta": {"Kiln-Test": name}}))
    stack = settled(swift_heat, name, "CREATE_COMPLETE", timeout=120)
    first = physical_ids(swift_heat, name)["box"]
    assert first.startswith(f"{name}-box-")
    container = sdk.object_store.get_container_metadata(first)
    assert {k.lower(): v for k, v in container.metadata.items()} == {"colour": "blue"}
    assert container.read_ACL == ".r:*"
    account = sdk.object_store.get_account_metadata()
    assert {k.lower(): v for k, v in account.metadata.items()}["kiln-test"] == name

    shown = outputs(stack)
    endpoint = sdk.object_store.get_endpoint()
    assert shown["RootURL"] == endpoint.rstrip("/")
    assert shown["WebsiteURL"] == f"{endpoint.rstrip('/')}/{first}"
    assert shown["DomainName"] == urlparse(endpoint).hostname
    assert (shown["ObjectCount"], shown["BytesUsed"]) == ("0", "0")
    assert shown["HeadContainer"]["x-container-meta-colour"] == "blue"

    # Heat lets no property change in place: a new container replaces the old one
    swift_heat.stacks.update(name, template=_template({
        "X-Container-Meta": {"Colour": "green"}}))
    settled(swift_heat, name, "UPDATE_COMPLETE", timeout=120)
    second = physical_ids(swift_heat, name)["box"]
    assert second != first and container_gone(sdk, first)
    assert {k.lower(): v for k, v in sdk.object_store.get_container_metadata(
        second).metadata.items()} == {"colour": "green"}

    sdk.object_store.upload_object(container=second, name="hello.txt", data=b"hello")
    count = swift_heat.stacks.output_show(name, "ObjectCount")["output"]["output_value"]
    assert count == "1"

    status = delete_and_wait(swift_heat, stack.id)
    assert status == ("DELETE_FAILED: Resource DELETE failed: "
                      "ResourceActionNotSupported: resources.box: "
                      f"Deleting non-empty container ({second}) when PurgeOnDelete is "
                      "False is not supported for resource.")
    assert not container_gone(sdk, second)
    sdk.object_store.delete_object("hello.txt", container=second)
    assert delete_and_wait(swift_heat, stack.id) == "DELETE_COMPLETE"
    assert container_gone(sdk, second)


def test_purge_on_delete_empties_a_named_container(swift_heat: Any, sdk: Any) -> None:
    name = f"purge-{uuid.uuid4().hex[:6]}"
    swift_heat.stacks.create(stack_name=name, template=_template({
        "name": name, "PurgeOnDelete": True}))
    stack = settled(swift_heat, name, "CREATE_COMPLETE", timeout=120)
    assert physical_ids(swift_heat, name)["box"] == name
    for index in range(3):
        sdk.object_store.upload_object(container=name, name=f"o{index}", data=b"x" * index)
    assert delete_and_wait(swift_heat, stack.id) == "DELETE_COMPLETE"
    assert container_gone(sdk, name)


def test_container_type_is_listed_with_swift_in_the_catalog(swift_heat: Any) -> None:
    listed = {t.resource_type for t in swift_heat.resource_types.list()}
    assert "OS::Swift::Container" in listed
    schema = swift_heat.resource_types.get("OS::Swift::Container")
    assert set(schema["properties"]) == {"name", "X-Container-Read", "X-Container-Write",
                                         "X-Container-Meta", "X-Account-Meta",
                                         "PurgeOnDelete"}
    assert set(schema["attributes"]) >= {"DomainName", "WebsiteURL", "RootURL",
                                         "ObjectCount", "BytesUsed", "HeadContainer"}


def test_an_existing_container_is_adopted_by_external_id_and_checked(
        swift_heat: Any, sdk: Any) -> None:
    from heatclient import exc

    name = f"adopt-{uuid.uuid4().hex[:6]}"
    with pytest.raises(exc.HTTPBadRequest) as caught:
        swift_heat.stacks.create(stack_name=f"{name}-x", template=_template({}) | {
            "resources": {"box": {"type": "OS::Swift::Container", "external_id": name}}})
    assert (f"Invalid external resource: Resource {name} (OS::Swift::Container) can not "
            "be found.") in str(caught.value)

    sdk.object_store.create_container(name=name)
    swift_heat.stacks.create(stack_name=name, template=_template({}) | {
        "resources": {"box": {"type": "OS::Swift::Container", "external_id": name}}})
    stack = settled(swift_heat, name, "CREATE_COMPLETE", timeout=120)
    assert physical_ids(swift_heat, name)["box"] == name
    swift_heat.actions.check(name)
    settled(swift_heat, name, "CHECK_COMPLETE", timeout=60)

    sdk.object_store.delete_container(name)
    swift_heat.actions.check(name)
    checked = wait_for_stack_status(swift_heat, name, timeout=60)
    assert checked.stack_status == "CHECK_FAILED"
    assert f"Container {name} not found" in checked.stack_status_reason
    assert delete_and_wait(swift_heat, stack.id) == "DELETE_COMPLETE"
