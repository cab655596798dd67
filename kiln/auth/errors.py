"""Why authentication failed: the two answers a client can get before any route runs.

    AuthError
    ├── InvalidToken        401 and WWW-Authenticate (missing, garbage, expired, revoked,
    │                       refused credentials)
    └── IdentityUnavailable 503 and Retry-After (Keystone down, slow, or refusing Kiln's
                            own service credentials)

``Throttled`` is not a verdict on the credential: the client's address has spent its
budget of failed authentications (kiln.api.auth_budget), so the credential was not
checked; each API answers it with a 429 in its own format.
"""

from __future__ import annotations


class AuthError(Exception):
    """The request cannot be authenticated; the message is safe to log."""


class InvalidToken(AuthError):
    pass


class IdentityUnavailable(AuthError):
    pass


class Throttled(Exception):
    """Too many failed authentications from this client's address: ``retry_after``
    whole seconds until its budget allows another check; ``message`` says so."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after
