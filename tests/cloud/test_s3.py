"""AWS::S3::Bucket through kiln serve and heatclient (a CloudFormation template), against
the real Swift beside the test cloud: the bucket is a Swift container whose ACLs,
website and tag metadata Swift itself reports, and which Swift serves anonymously when
the bucket is public."""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import urlparse

import httpx
import pytest

from tests.cloud.helpers import container_gone, delete_and_wait, outputs, physical_ids, settled
from tests.support.cloud import Cloud


@pytest.fixture
def sdk(swift: Any, cloud: Cloud) -> Any:
    """The admin connected once Swift is in the catalog (see test_swift.py)."""
    return cloud.connect()


def _template(buckets: dict[str, dict[str, Any]]) -> dict[str, Any]:
    resources = {name: {"Type": "AWS::S3::Bucket", **body} for name, body in buckets.items()}
    out = {f"{name}{attr}": {"Value": {"Fn::GetAtt": [name, attr]}}
           for name in buckets for attr in ("DomainName", "WebsiteURL")}
    out |= {f"{name}Ref": {"Value": {"Ref": name}} for name in buckets}
    return {"AWSTemplateFormatVersion": "2010-09-09", "Resources": resources, "Outputs": out}


def _meta(sdk: Any, container: str) -> dict[str, str]:
    """The container's headers as Swift reports them (lower-case names)."""
    response = sdk.object_store.request(f"/{container}", "HEAD")
    return {k.lower(): v for k, v in response.headers.items()}


def test_acls_website_and_tags_become_the_container_s_and_public_means_public(
        swift_heat: Any, sdk: Any) -> None:
    name = f"s3-{uuid.uuid4().hex[:6]}"
    swift_heat.stacks.create(stack_name=name, template=_template({
        "web": {"Properties": {
            "AccessControl": "PublicRead",
            "WebsiteConfiguration": {"IndexDocument": "index.html",
                                     "ErrorDocument": "error.html"},
            "Tags": [{"Key": "Owner", "Value": "kiln"}, {"Key": "Env", "Value": "test"}]}},
        "private": {},
        "staff": {"Properties": {"AccessControl": "AuthenticatedRead"}}}))
    stack = settled(swift_heat, name, "CREATE_COMPLETE", timeout=120)
    ids = physical_ids(swift_heat, name)
    shown = outputs(stack)
    endpoint = sdk.object_store.get_endpoint().rstrip("/")
    for bucket in ("web", "private", "staff"):
        assert ids[bucket].startswith(f"{name}-{bucket}-")
        assert shown[f"{bucket}Ref"] == ids[bucket]
        assert shown[f"{bucket}DomainName"] == urlparse(endpoint).hostname
        assert shown[f"{bucket}WebsiteURL"] == f"{endpoint}/{ids[bucket]}"

    # Kiln acts in the cloud as the test cloud's admin (project admin, user admin)
    web = _meta(sdk, ids["web"])
    assert (web["x-container-read"], web["x-container-write"]) == (".r:*", "admin:admin")
    assert (web["x-container-meta-web-index"], web["x-container-meta-web-error"]) == (
        "index.html", "error.html")
    assert (web["x-container-meta-s3-tag-owner"], web["x-container-meta-s3-tag-env"]) == (
        "kiln", "test")
    private = _meta(sdk, ids["private"])
    assert (private["x-container-read"], private["x-container-write"]) == (
        "admin:admin", "admin:admin")
    assert not any(k.startswith("x-container-meta-") for k in private)
    assert _meta(sdk, ids["staff"])["x-container-read"] == "admin"

    # public means anyone: Swift serves the object without a token; not the private one
    for bucket in ("web", "private"):
        sdk.object_store.upload_object(container=ids[bucket], name="index.html",
                                       data=b"<h1>hi</h1>")
    assert httpx.get(f"{shown['webWebsiteURL']}/index.html", timeout=30).text == "<h1>hi</h1>"
    assert httpx.get(f"{shown['privateWebsiteURL']}/index.html",
                     timeout=30).status_code == 401

    # a non-empty bucket is not deleted (Heat's words), an emptied one is
    status = delete_and_wait(swift_heat, stack.id)
    assert status.startswith("DELETE_FAILED: Resource DELETE failed: "
                             "ResourceActionNotSupported: resources.")
    assert any(f"The bucket you tried to delete is not empty ({ids[b]}). is not supported "
               "for resource." in status for b in ("web", "private"))  # whichever was first
    for bucket in ("web", "private"):
        sdk.object_store.delete_object("index.html", container=ids[bucket])
    assert delete_and_wait(swift_heat, stack.id) == "DELETE_COMPLETE"
    assert all(container_gone(sdk, ids[b]) for b in ("web", "private", "staff"))


def test_a_tag_change_replaces_the_bucket_and_retain_keeps_it(swift_heat: Any,
                                                              sdk: Any) -> None:
    name = f"s3r-{uuid.uuid4().hex[:6]}"

    def template(value: str, **policy: str) -> dict[str, Any]:
        return _template({"box": {**policy, "Properties": {
            "Tags": [{"Key": "Colour", "Value": value}]}}})

    swift_heat.stacks.create(stack_name=name, template=template("blue"))
    stack = settled(swift_heat, name, "CREATE_COMPLETE", timeout=120)
    first = physical_ids(swift_heat, name)["box"]
    swift_heat.stacks.update(name, template=template("green"))
    settled(swift_heat, name, "UPDATE_COMPLETE", timeout=120)
    second = physical_ids(swift_heat, name)["box"]
    assert second != first and container_gone(sdk, first)
    assert _meta(sdk, second)["x-container-meta-s3-tag-colour"] == "green"

    # a new deletion policy alone changes no property: the same bucket, now retained
    swift_heat.stacks.update(name, template=template("green", DeletionPolicy="Retain"))
    settled(swift_heat, name, "UPDATE_COMPLETE", timeout=120)
    assert physical_ids(swift_heat, name)["box"] == second
    assert delete_and_wait(swift_heat, stack.id) == "DELETE_COMPLETE"
    assert _meta(sdk, second)["x-container-meta-s3-tag-colour"] == "green"
    sdk.object_store.delete_container(second)


def test_public_read_write_is_refused_by_swift(swift_heat: Any) -> None:
    name = f"s3w-{uuid.uuid4().hex[:6]}"
    swift_heat.stacks.create(stack_name=name, template=_template({
        "open": {"Properties": {"AccessControl": "PublicReadWrite"}}}))
    stack = settled(swift_heat, name, "CREATE_FAILED", timeout=120)
    assert stack.stack_status_reason == (
        "Resource CREATE failed: BadRequest: resources.open: Referrers not allowed in "
        "write ACL: '.r:*'")
    assert delete_and_wait(swift_heat, stack.id) == "DELETE_COMPLETE"


def test_the_bucket_type_is_listed_with_swift_in_the_catalog(swift_heat: Any) -> None:
    assert "AWS::S3::Bucket" in {t.resource_type for t in swift_heat.resource_types.list()}
