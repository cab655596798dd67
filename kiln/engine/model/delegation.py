"""The engine's seam to deferred authentication: acting for a stack's owner later.

A stack's work does not always have its owner's request behind it: a signal from a
server or an alarm, a scaling adjustment, recovery after an engine died, a create that
outlives the token that started it. For those Kiln acts through what the owner delegated
at create, as Heat does: a Keystone trust from the owner (trustor) to Kiln's ``[trustee]``
user, kept encrypted with the top-level stack (``user_creds``; nested stacks use their
root's). :class:`Delegation` is implemented by :mod:`kiln.auth.trusts` and given to the
engine in keystone mode; without it (noauth) Kiln acts with its own credentials.

Which identity a piece of work acts with (:func:`kiln.engine.runtime.acting`):

- a user's request (create, update, delete, suspend, ...): the request's token, unless
  ``reauthentication_auth_method = trusts`` (then the trust, checked first);
- anything else (signals, alarms, scaling, recovery): the trust, checked first;
- a nested stack: whatever its parent acts with.

A trust that no longer works (deleted behind Kiln's back, its trustor's roles revoked)
fails the work with :class:`kiln.errors.AuthorizationFailure`, whose message names the
trust by its trustor and stack (the trust's id is a secret: never in a message, event,
response or log line). Keystone unreachable is :class:`kiln.errors.ServiceUnavailable`.
"""

from __future__ import annotations

from typing import Protocol

from kiln.db.records import UserCredsRecord
from kiln.engine.model.context import RequestContext


class Delegation(Protocol):
    """Keystone trusts for the engine (kiln.auth.trusts.TrustDelegation)."""

    #: ``deferred_auth_method``: ``trusts`` or ``password``
    method: str

    #: ``reauthentication_auth_method = trusts``: users' own actions act through the
    #: trust too, so they survive the expiry of the token that started them
    reauthenticate: bool

    async def delegate(self, ctx: RequestContext, stack_id: str) -> UserCredsRecord | None:
        """What the caller delegates to Kiln for the new top-level stack ``stack_id``
        (a trust made with the caller's token); None when their token cannot delegate
        (an EC2-signed caller's). Raises Forbidden/ServiceUnavailable."""
        ...

    async def act_as(self, creds: UserCredsRecord, stack_name: str) -> RequestContext:
        """The owner's identity through ``creds``, checked with Keystone now. Raises
        AuthorizationFailure naming the trust when it no longer works."""
        ...

    async def revoke(self, creds: UserCredsRecord, ctx: RequestContext | None) -> None:
        """Delete the trust (with ``ctx``'s token when the caller is its trustor, else
        through the trust itself). Never raises: a stack delete must not fail on it."""
        ...
