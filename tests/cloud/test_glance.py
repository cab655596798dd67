"""OS::Glance::WebImage through kiln serve and heatclient: Glance imports the image from
a URL this test serves on 127.0.0.1. Glance refuses to fetch from a loopback address
unless its ``[import_filtering_opts]`` allow it (tests/support/cloud/configs.py does, for
clouds started since); on a cloud started before, the refusal is what is checked."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from tests.cloud.helpers import delete_and_wait, find, physical_ids, settled
from tests.support.clients import wait_for_stack_status
from tests.support.local_http import local_http_server

DATA = bytes(range(256)) * 4096          # 1 MiB


class _Image(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(DATA)))
        self.end_headers()
        self.wfile.write(DATA)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def image_url() -> Iterator[str]:
    with local_http_server(_Image) as base:
        yield f"{base}/disk.raw"


def _loopback_allowed(cloud: Any) -> bool:
    conf = cloud.layout.state / "glance" / "glance-api.conf"
    return "allowed_hosts = [127.0.0.1]" in conf.read_text()


def _template(url: str, name: str, *, later: bool = False) -> dict[str, Any]:
    props: dict[str, Any] = {"location": url, "name": name, "disk_format": "raw",
                             "container_format": "bare", "tags": ["one"],
                             "extra_properties": {"purpose": "kiln"}}
    if later:
        props.update(tags=["two"], extra_properties={"stage": "later"}, os_distro="cirros",
                     active=False)
    return {"heat_template_version": "2018-08-31",
            "resources": {"image": {"type": "OS::Glance::WebImage", "properties": props}}}


def test_web_image_is_imported_updated_and_deleted(cloud_heat: Any, sdk: Any, cloud: Any,
                                                   image_url: str) -> None:
    name = f"kimg-{uuid.uuid4().hex[:6]}"
    cloud_heat.stacks.create(stack_name=name, template=_template(image_url, name))
    stack = wait_for_stack_status(cloud_heat, name, timeout=180)
    ids = physical_ids(cloud_heat, name)
    if not _loopback_allowed(cloud):
        assert stack.stack_status == "CREATE_FAILED"
        assert "BadRequest: resources.image: " in stack.stack_status_reason
        assert "does not pass filtering" in stack.stack_status_reason
        assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"
        assert find(sdk.image.find_image, ids["image"]) is None
        return
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    image = sdk.image.get_image(ids["image"])
    assert (image.name, image.status, image.size) == (name, "active", len(DATA))
    assert image.hash_value == hashlib.sha512(DATA).hexdigest()
    assert image.tags == ["one"] and image.properties["purpose"] == "kiln"

    cloud_heat.stacks.update(name, template=_template(image_url, name, later=True))
    stack = settled(cloud_heat, name, "UPDATE_COMPLETE", timeout=120)
    image = sdk.image.get_image(ids["image"])
    assert (image.status, image.tags, image.os_distro) == ("deactivated", ["two"], "cirros")
    assert image.properties.get("stage") == "later" and "purpose" not in image.properties

    assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"
    assert find(sdk.image.find_image, ids["image"]) is None


def test_web_image_checks_its_formats_and_members(cloud_heat: Any) -> None:
    from heatclient import exc

    for props, message in (
            ({"disk_format": "raw", "container_format": "ami"},
             "Invalid mix of disk and container formats."),
            ({"disk_format": "raw", "container_format": "bare", "members": ["p"]},
             "members property should only be specified for visibility with value "
             "shared.")):
        with pytest.raises(exc.HTTPBadRequest) as caught:
            cloud_heat.stacks.create(stack_name=f"img-{uuid.uuid4().hex[:6]}", template={
                "heat_template_version": "2018-08-31", "resources": {"image": {
                    "type": "OS::Glance::WebImage",
                    "properties": {"location": "http://example.invalid/x", **props}}}})
        assert message in str(caught.value)


def test_glance_image_is_heats_hidden_placeholder(cloud_heat: Any) -> None:
    """Heat 27 keeps OS::Glance::Image only so old templates load: it creates nothing
    and is not listed."""
    name = f"oldimg-{uuid.uuid4().hex[:6]}"
    cloud_heat.stacks.create(stack_name=name, template={
        "heat_template_version": "2018-08-31", "resources": {"image": {
            "type": "OS::Glance::Image",
            "properties": {"location": "http://example.invalid/x", "disk_format": "raw"}}}})
    stack = settled(cloud_heat, name, "CREATE_COMPLETE", timeout=60)
    listed = {t.resource_type for t in cloud_heat.resource_types.list()}
    assert "OS::Glance::Image" not in listed and "OS::Glance::WebImage" in listed
    assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"


def _unreachable_url(loopback_allowed: bool) -> str | None:
    """An http URL where nothing listens that Glance's filter lets through, so that its
    download is refused at once: a closed loopback port when Glance may fetch from
    127.0.0.1, else port 80 of this machine's own non-loopback address (None when there
    is no such address or something answers there)."""
    import socket

    if loopback_allowed:
        with socket.socket() as closed:
            closed.bind(("127.0.0.1", 0))
            return f"http://127.0.0.1:{closed.getsockname()[1]}/kiln-missing.raw"
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))          # no packet is sent for a UDP connect
        address = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    if address.startswith("127."):
        return None
    try:
        socket.create_connection((address, 80), timeout=2).close()
    except OSError:
        return f"http://{address}/kiln-missing.raw"
    return None


def test_an_import_glance_gives_up_on_fails_the_image(cloud_heat: Any, sdk: Any,
                                                     cloud: Any) -> None:
    """Glance leaves the image queued and names the failed store; Heat would wait for the
    stack's timeout, Kiln fails the resource at once."""
    url = _unreachable_url(_loopback_allowed(cloud))
    if url is None:
        pytest.skip("no non-loopback address with a free port 80 on this machine")
    name = f"kimg-{uuid.uuid4().hex[:6]}"
    cloud_heat.stacks.create(stack_name=name, template=_template(url, name))
    stack = settled(cloud_heat, name, "CREATE_FAILED", timeout=120)
    assert (f"ImageImportFailed: resources.image: Glance could not import the image from "
            f"{url} (failed stores: file)") in stack.stack_status_reason
    image_id = physical_ids(cloud_heat, name)["image"]
    assert sdk.image.get_image(image_id).status == "queued"
    assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"
    assert find(sdk.image.find_image, image_id) is None
