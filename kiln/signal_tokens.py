"""Tokens Kiln issues for TOKEN_SIGNAL when no identity service issues them.

Heat gives a wait-condition handle a Keystone token of the stack's user; without
Keystone, Kiln mints its own: ``kiln-signal.<payload>.<mac>``, the payload naming the
project, stack and resource, the MAC an HMAC-SHA256 under a key derived from
``auth_encryption_key``. The native API accepts such a token only for a signal to the
resource it names (a forged or altered one is refused with 401); other tokens are left
to the API's own authentication. Imports nothing from Kiln.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass

PREFIX = "kiln-signal."


@dataclass(frozen=True)
class SignalGrant:
    project_id: str
    stack_id: str
    resource_name: str


def _key(secret: str) -> bytes:
    return hmac.new(b"kiln signal tokens v1", secret.encode(), hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def issue(secret: str, grant: SignalGrant) -> str:
    payload = _b64(json.dumps([grant.project_id, grant.stack_id, grant.resource_name],
                              separators=(",", ":")).encode())
    mac = _b64(hmac.new(_key(secret), payload.encode(), hashlib.sha256).digest())
    return f"{PREFIX}{payload}.{mac}"


def is_signal_token(token: str | None) -> bool:
    return bool(token) and str(token).startswith(PREFIX)


def verify(secret: str, token: str) -> SignalGrant | None:
    """The grant a genuine token carries; None for a forged or malformed one."""
    if not is_signal_token(token):
        return None
    payload, _, mac = token[len(PREFIX):].partition(".")
    expected = _b64(hmac.new(_key(secret), payload.encode(), hashlib.sha256).digest())
    if not hmac.compare_digest(expected.encode(), mac.encode()):
        return None
    try:
        project, stack, resource = json.loads(base64.urlsafe_b64decode(payload + "=="))
    except (ValueError, TypeError):
        return None
    return SignalGrant(str(project), str(stack), str(resource))
