"""Where a server's os-collect-config agent polls for its software deployments, and
with which credentials: OS::Heat::DeployedServer publishes it, and so does
OS::Nova::Server with ``user_data_format: SOFTWARE_CONFIG``.

The configuration goes into the resource's metadata (``os-collect-config``) next to the
``deployments`` list the engine maintains; the credentials come from the runtime's stack
user (Heat's stack-domain user) or a temp URL Kiln itself serves.
"""

from __future__ import annotations

import secrets
import string
from collections.abc import Mapping
from typing import Any

from kiln import tempurl
from kiln.resources.base import Resource, ResourceFailure

TRANSPORTS = ("POLL_SERVER_CFN", "POLL_SERVER_HEAT", "POLL_TEMP_URL", "ZAQAR_MESSAGE")


def _password() -> str:
    """32 characters with at least one lower, upper, digit and symbol (Heat's rule)."""
    pools = (string.ascii_lowercase, string.ascii_uppercase, string.digits, "!@#%^&*")
    everything = "".join(pools)
    chars = [secrets.choice(p) for p in pools]
    chars += [secrets.choice(everything) for _ in range(32 - len(chars))]
    secrets.SystemRandom().shuffle(chars)
    return "".join(chars)


async def collect_config(res: Resource, transport: str) -> dict[str, Any]:
    """The os-collect-config section for *transport*, creating credentials."""
    if transport == "POLL_SERVER_HEAT":
        password = res.data.get("password") or _password()
        res.data["password"] = password
        user = await res.runtime.stack_user(res.name, password=password)
        return {
            "collectors": ["heat", "local"],
            "heat": {
                "user_id": user.get("user_id"),
                "password": password,
                "auth_url": user.get("auth_url"),
                "project_id": user.get("project_id"),
                "stack_id": f"{res.runtime.stack_name}/{res.runtime.stack_id}",
                "resource_name": res.name,
                "region_name": user.get("region_name"),
            },
        }
    if transport == "POLL_SERVER_CFN":
        user = await res.runtime.stack_user(res.name, keypair=True)
        return {
            "collectors": ["cfn", "local"],
            "cfn": {
                "metadata_url": user.get("metadata_url"),
                "access_key_id": user.get("access_key_id"),
                "secret_access_key": user.get("secret_access_key"),
                "stack_name": res.runtime.stack_name,
                "path": f"{res.name}.Metadata",
            },
        }
    if transport == "POLL_TEMP_URL":
        return {
            "collectors": ["request", "local"],
            "request": {"metadata_url": metadata_temp_url(res)},
        }
    raise ResourceFailure(
        f"software_config_transport {transport} needs a cloud service Kiln does not provide",
        exc_type="NotSupported",
    )


def metadata_temp_url(res: Resource) -> str:
    """Kiln's stand-in for Heat's Swift temp URL: a signed GET of this resource's
    metadata, served by Kiln itself (:mod:`kiln.api.tempurl`)."""
    key = res.data.get("temp_url_key")
    if key is None:
        key = res.data["temp_url_key"] = tempurl.new_key()
    rt = res.runtime
    return tempurl.make_url(
        tempurl.base_url(rt.conf),
        key,
        method="GET",
        project_id=rt.project_id,
        stack_id=rt.stack_id,
        resource_name=res.name,
    )


async def publish(res: Resource, transport: str) -> None:
    """Put in *res*'s metadata where and how the server's os-collect-config agent polls
    for deployments over *transport* (the old transport's keys blanked out)."""
    if transport != "POLL_TEMP_URL":
        res.data.pop("temp_url_key", None)  # revokes the URL polled until now
    occ = await collect_config(res, transport)
    old = dict(res.metadata.get("os-collect-config") or {})
    for key in ("heat", "zaqar", "cfn", "request"):  # blank out the old transport
        if key in old and key not in occ and isinstance(old[key], Mapping):
            occ[key] = dict.fromkeys(old[key])
    res.metadata = {
        **res.metadata,
        "deployments": list(res.metadata.get("deployments") or []),
        "os-collect-config": occ,
    }
