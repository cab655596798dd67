"""AWS::S3::Bucket: a Swift container, mapped as Heat 27 maps it.

- ``AccessControl`` becomes the container's ACLs, with the caller's names
  (``project:user``, as Kiln acts in the cloud): ``PublicRead`` reads ``.r:*``,
  ``AuthenticatedRead`` the project, anything else (and none) the caller; writes are
  the caller's, or ``.r:*`` for ``PublicReadWrite``, which Swift refuses (referrers may
  not write), so such a bucket fails with Swift's reason, as in Heat.
- ``WebsiteConfiguration`` becomes ``X-Container-Meta-Web-Index``/``-Error`` (for
  Swift's staticweb middleware, where the operator runs it).
- ``Tags`` become ``X-Container-Meta-S3-Tag-<Key>`` metadata.

No property changes in place: an update replaces the bucket. A delete refuses a bucket
that still holds objects; ``DeletionPolicy: Retain`` keeps it (the engine's). The
attributes come from the account's URL: ``DomainName`` its host, ``WebsiteURL`` the
container's URL.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from kiln.resources.aws.ec2_vpc import tags_property
from kiln.resources.base import Attribute, Property, ResourceFailure, Token
from kiln.resources.common.swift import SwiftResource, object_path
from kiln.template.constraints import AllowedValues

ACLS = ("Private", "PublicRead", "PublicReadWrite", "AuthenticatedRead", "BucketOwnerRead",
        "BucketOwnerFullControl")


class S3Bucket(SwiftResource):
    type_name = "AWS::S3::Bucket"
    properties_schema = {
        "AccessControl": Property("string", "A predefined access control list (ACL) that "
                                            "grants permissions on the bucket.",
                                  constraints=[AllowedValues(ACLS)]),
        "WebsiteConfiguration": Property(
            "map", "Information used to configure the bucket as a static website.",
            schema={"IndexDocument": Property("string", "The name of the index document."),
                    "ErrorDocument": Property("string", "The name of the error document.")}),
        "Tags": tags_property("Tags to attach to the bucket.", implemented=True),
    }
    attributes_schema = {
        "DomainName": Attribute("The DNS name of the specified bucket.", "string"),
        "WebsiteURL": Attribute("The website endpoint for the specified bucket.", "string"),
    }

    async def _headers(self) -> dict[str, str]:
        p = self.properties
        headers = {f"X-Container-Meta-S3-Tag-{t['Key']}": str(t["Value"])
                   for t in p.get("Tags") or ()}
        site = p.get("WebsiteConfiguration")
        if site is not None:
            for key, header in (("IndexDocument", "Web-Index"), ("ErrorDocument", "Web-Error")):
                if site.get(key) is not None:
                    headers[f"X-Container-Meta-{header}"] = str(site[key])
        project, user = await self.caller_names()
        acl = p.get("AccessControl")
        owner = f"{project}:{user}"
        readers = {"PublicRead": ".r:*", "PublicReadWrite": ".r:*",
                   "AuthenticatedRead": project}
        headers["X-Container-Read"] = readers.get(str(acl), owner)
        headers["X-Container-Write"] = ".r:*" if acl == "PublicReadWrite" else owner
        return headers

    async def handle_create(self) -> Token:
        name = self.physical_resource_name()
        await self.swift("PUT", object_path(name), await self._headers())
        self.resource_id = name
        self.data["account"] = await self.account_url()
        return None

    async def handle_delete(self) -> Token:
        return None if self.resource_id is None else {"bucket": self.resource_id}

    async def check_delete_complete(self, token: Token) -> bool:
        if not token or await self.delete_container(token["bucket"]):
            return True
        listing = await self.swift("GET", f"{object_path(token['bucket'])}?format=json",
                                   ok_missing=True)
        if listing is not None and listing[1]:
            raise ResourceFailure(
                f"The bucket you tried to delete is not empty ({token['bucket']}). is "
                "not supported for resource.", exc_type="ResourceActionNotSupported")
        return False  # emptied since Swift refused: the next poll deletes it

    def resolve_attribute(self, name: str) -> Any:
        account = self.data.get("account")
        if account is None:
            return None
        url = urlparse(account)
        if name == "DomainName":
            return url.hostname
        if name == "WebsiteURL":
            return f"{url.scheme}://{url.netloc}{url.path}/{self.resource_id}"
        return None
