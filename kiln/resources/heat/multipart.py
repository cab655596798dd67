"""OS::Heat::MultipartMime: several configs joined into one multi-part MIME message."""

from __future__ import annotations

import email
import json
import os
import uuid
from email.message import Message
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from typing import Any

from kiln.errors import EntityNotFound
from kiln.resources.base import Property
from kiln.resources.heat.software_config import SoftwareConfig
from kiln.template.constraints import AllowedValues


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except (ValueError, TypeError, AttributeError):
        return False
    return True


def _text_part(body: str, subtype: str | None, filename: str | None) -> MIMEText:
    if not subtype and filename:
        # Heat derives the subtype from the file name *without* its extension
        subtype = os.path.splitext(filename)[0]
    try:
        body.encode("us-ascii")
        charset = "us-ascii"
    except UnicodeEncodeError:
        charset = "utf-8"
    part = MIMEText(body, subtype, charset) if subtype else MIMEText(body, _charset=charset)
    if filename:
        part.add_header("Content-Disposition", "attachment", filename=filename)
    return part


class MultipartMime(SoftwareConfig):
    type_name = "OS::Heat::MultipartMime"
    description = (
        "Assembles a collection of software configurations as a multi-part mime.\n\n"
        "Parts in the message can be populated with inline configuration or\n"
        "references to other config resources. If the referenced resource is itself\n"
        "a valid multi-part mime message, that will be broken into parts and\n"
        "those parts appended to this message.\n\n"
        "The resulting multi-part mime message will be stored by the configs API\n"
        "and can be referenced in properties such as OS::Nova::Server user_data.\n\n"
        "This resource is generally used to build a list of cloud-init\n"
        "configuration elements including scripts and cloud-config. Since\n"
        "cloud-init is boot-only configuration, any changes to the definition\n"
        "will result in the replacement of all servers which reference it.")
    properties_schema = {
        "group": Property(
            "string",
            "Namespace to group this multi-part configs by when delivered to a server. This "
            "may imply what configuration tool is going to perform the configuration.",
            default="Heat::Ungrouped"),
        "parts": Property(
            "list", "Parts belonging to this message.", default=[],
            schema=Property("map", schema={
                "config": Property(
                    "string",
                    "Content of part to attach, either inline or by referencing the ID of "
                    "another software config resource.",
                    required=True),
                "filename": Property("string", "Optional filename to associate with part."),
                "type": Property("string", "Whether the part content is text or multipart.",
                                 default="text",
                                 constraints=[AllowedValues(("text", "multipart"))]),
                "subtype": Property("string", "Optional subtype to specify with the type."),
            })),
    }

    async def _part_body(self, config: str) -> Any:
        if _is_uuid(config):
            try:
                return (await self.runtime.software_configs.get(config))["config"]
            except EntityNotFound:
                return config
        return config

    async def build_message(self) -> str:
        subparts: list[Message] = []
        for item in self.properties["parts"]:
            body = await self._part_body(item["config"])
            if item["type"] == "multipart":
                parsed = email.message_from_string(body)
                if parsed.is_multipart():
                    for sub in parsed.get_payload():
                        assert isinstance(sub, Message)
                        subparts.append(_text_part(str(sub.get_payload()),
                                                   sub.get_content_subtype(),
                                                   sub.get_filename()))
            else:
                subparts.append(_text_part(body, item["subtype"], item["filename"]))
        return MIMEMultipart(_subparts=subparts).as_string()

    async def handle_create(self) -> None:
        message = await self.build_message()
        stored = await self.runtime.software_configs.create(
            name=self.physical_resource_name(), group=self.properties["group"],
            config=message, inputs=[], outputs=[], options={})
        self.resource_id = str(stored["id"])
        self.data["config"] = json.dumps(message)
