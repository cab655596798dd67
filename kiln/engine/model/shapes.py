"""The shapes the model builds that cross the service's interface to the APIs: a stack's
identity, an output, an issued keypair. Plain TypedDicts importing nothing of Kiln, so
the interface the APIs type against (:mod:`kiln.engine.service.interface`) reaches
neither the database nor a plugin (docs/contracts.md).
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


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
