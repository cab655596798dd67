"""The shapes the engine below the service builds that cross the service's interface to
the APIs: a stack's identity, an output, an issued keypair, software configs and
deployments (and the time format replies use). Plain TypedDicts importing nothing of Kiln, so
the interface the APIs type against (:mod:`kiln.engine.service.interface`) reaches
neither the database nor a plugin (docs/contracts.md).
"""

from __future__ import annotations

import datetime as dt
from typing import Any, NotRequired, TypedDict


def isotime(value: dt.datetime | None) -> str | None:
    """A stored time as Heat's replies write it (UTC, seconds, ``Z``)."""
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    return value.replace(microsecond=0).isoformat() + "Z"


class StackIdentityReply(TypedDict):
    """Heat's stack identity: enough to build any link to the stack."""

    stack_name: str
    stack_id: str
    tenant: str
    path: str


class OutputReply(TypedDict):
    """One output as Heat shows it: a value, or ``output_error`` when it failed."""

    output_key: str
    description: str
    output_value: Any
    output_error: NotRequired[str]


class IssuedKeypair(TypedDict):
    """An EC2 keypair Kiln issued (EngineService's keypairs), secret included."""

    access_key: str
    secret: str
    project_id: str
    user_id: str
    stack_id: str | None
    resource_name: str | None


class SoftwareConfigSummaryReply(TypedDict):
    """A software config as the config list names it (no document)."""

    id: str
    name: str | None
    group: str | None
    creation_time: str | None
    #: an admin's listing names each config's project, as Heat's does
    project: NotRequired[str]


class SoftwareConfigReply(TypedDict):
    """A software config as create, show and a server's deployment metadata give it."""

    id: str
    name: str | None
    group: str | None
    creation_time: str | None
    config: Any
    inputs: list[Any]
    outputs: list[Any]
    options: Any


class SoftwareDeploymentReply(TypedDict):
    """A software deployment as create, show, update and the list give it."""

    id: str
    server_id: str
    config_id: str
    input_values: Any
    output_values: Any
    action: str
    status: str
    status_reason: str
    creation_time: str | None
    #: present once the deployment has been updated, as in Heat
    updated_time: NotRequired[str | None]
