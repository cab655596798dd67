"""Why authentication failed: the two answers a client can get before any route runs.

    AuthError
    ├── InvalidToken        401 and WWW-Authenticate (missing, garbage, expired, revoked,
    │                       refused credentials)
    └── IdentityUnavailable 503 and Retry-After (Keystone down, slow, or refusing Kiln's
                            own service credentials)
"""

from __future__ import annotations


class AuthError(Exception):
    """The request cannot be authenticated; the message is safe to log."""


class InvalidToken(AuthError):
    pass


class IdentityUnavailable(AuthError):
    pass
