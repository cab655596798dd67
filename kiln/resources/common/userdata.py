"""The user data a server boots with, by ``user_data_format``.

- ``RAW``: the template's text as it is.
- ``HEAT_CFNTOOLS``: a MIME multipart for cloud-init and heat-cfntools: the template's
  text as ``cfn-userdata`` (run by cloud-init when it starts with ``#!``), the
  resource's metadata as ``cfn-init-data``, the metadata server's URL as
  ``cfn-metadata-server`` and the boto config cfn tools read.
- ``SOFTWARE_CONFIG``: the template's text (as a part when it is not empty) and the
  os-collect-config settings written to ``/var/lib/os-collect-config/...``, so the agents
  poll for deployments; the same settings are in the resource metadata.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from typing import Any


def _part(text: str, subtype: str, filename: str) -> MIMEText:
    part = MIMEText(text, subtype, "utf-8")
    part.add_header("Content-Disposition", "attachment", filename=filename)
    return part


def _multipart(parts: list[MIMEText]) -> str:
    message = MIMEMultipart()
    for part in parts:
        message.attach(part)
    return message.as_string()


def _user_part(user_data: str) -> MIMEText:
    subtype = "x-shellscript" if user_data.startswith("#!") else "x-cfninitdata"
    return _part(user_data, subtype, "cfn-userdata")


def cfntools(user_data: str, metadata: Mapping[str, Any], metadata_url: str,
             region: str) -> str:
    parts = [_user_part(user_data),
             _part(json.dumps(metadata), "x-cfninitdata", "cfn-init-data"),
             _part("[Boto]\ndebug = 0\nis_secure = 0\nhttps_validate_certificates = 1\n"
                   f"cfn_region_name = {region}\ncfn_region_endpoint = "
                   f"{metadata_url.split('://')[-1].split(':')[0]}\n",
                   "x-cfninitdata", "cfn-boto-cfg")]
    if metadata_url:
        parts.append(_part(metadata_url, "x-cfninitdata", "cfn-metadata-server"))
    return _multipart(parts)


def software_config(user_data: str, collect_config: Mapping[str, Any]) -> str:
    files = {"write_files": [
        {"path": "/var/lib/os-collect-config/os_config_files.json",
         "content": json.dumps(["/var/lib/heat-cfntools/cfn-init-data"])},
        {"path": "/var/lib/heat-cfntools/cfn-init-data",
         "content": json.dumps({"os-collect-config": dict(collect_config)})},
    ]}
    parts = [_part("#cloud-config\n" + json.dumps(files), "cloud-config", "cloud-config")]
    if user_data:
        parts.append(_user_part(user_data))
    return _multipart(parts)
