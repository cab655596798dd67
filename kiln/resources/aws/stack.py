"""AWS::CloudFormation::Stack: a nested stack from ``TemplateURL``.

The template is taken from the request's ``files`` under that URL (as the clients send
it), else fetched (allowed schemes, hosts and timeout from ``template_url_*``, every hop
checked by :mod:`kiln.urlfetch`). Attributes are ``Outputs.<key>``; Ref gives the child
stack's ARN.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln import urlfetch
from kiln.errors import InvalidTemplateAttribute
from kiln.resources.base import Properties, Property, ResourceFailure, SupportStatus, Token
from kiln.resources.nested import NestedStackResource
from kiln.resources.provider import _parse


class NestedStack(NestedStackResource):
    type_name = "AWS::CloudFormation::Stack"
    support_status = SupportStatus()
    description = "Represents a child stack to allow composition of templates."
    properties_schema = {
        "TemplateURL": Property("string", "The URL of a template that specifies the stack to "
                                "be created as a resource.", required=True,
                                update_allowed=True),
        "TimeoutInMinutes": Property("integer", "The length of time, in minutes, to wait for "
                                     "the nested stack creation.", update_allowed=True),
        "Parameters": Property("map", "The set of parameters passed to this nested stack.",
                               update_allowed=True),
    }
    attributes_schema = {}

    _fetched: dict[str, str]

    async def _template_text(self, url: str) -> str:
        files = self.runtime.files
        if url in files:
            return str(files[url])
        conf = self.runtime.conf
        try:
            body = await urlfetch.fetch(
                url, allowed_schemes=list(getattr(conf, "template_url_allowed_schemes",
                                                  ["http", "https"])),
                allowed_hosts=list(getattr(conf, "template_url_allowed_hosts", [])),
                timeout=float(getattr(conf, "template_url_timeout", 10)),
                limit=int(getattr(conf, "max_template_size", 524288)))
        except urlfetch.FetchError as exc:
            raise ResourceFailure(f'Could not fetch remote template "{url}": {exc}',
                                  exc_type="Error") from None
        return body.decode("utf-8", "replace")

    async def _load(self, properties: Properties) -> None:
        url = properties["TemplateURL"]
        self._fetched = {url: await self._template_text(url)}

    def child_template(self, properties: Properties) -> Mapping[str, Any]:
        url = properties["TemplateURL"]
        return _parse(self._fetched[url], url)

    def child_parameters(self, properties: Properties) -> Mapping[str, Any]:
        return dict(properties["Parameters"] or {})

    def child_timeout(self) -> int | None:
        timeout = self.properties["TimeoutInMinutes"]
        return int(timeout) if timeout else None

    async def handle_create(self) -> Token:
        await self._load(self.properties)
        return await super().handle_create()

    async def handle_update(self, new_definition: Any, new_properties: Properties,
                            prop_diff: Mapping[str, Any]) -> Token:
        await self._load(new_properties)
        return await super().handle_update(new_definition, new_properties, prop_diff)

    def get_attribute(self, name: str, *path: Any) -> Any:
        if not name.startswith("Outputs."):
            raise InvalidTemplateAttribute(
                f"The Referenced Attribute ({self.name} {name}) is incorrect.")
        key = name.partition(".")[2]
        outputs = self.nested_outputs()
        if self.resource_id and outputs and key not in outputs:
            raise InvalidTemplateAttribute(
                f"The Referenced Attribute ({self.name} {name}) is incorrect.")
        value = outputs.get(key)
        for step in path:
            value = value.get(step) if isinstance(value, Mapping) else None
        return value

    def all_attributes(self) -> dict[str, Any]:
        return {f"Outputs.{k}": v for k, v in self.nested_outputs().items()}

    def reference_id(self) -> str:
        return self.stack_arn() or self.name
