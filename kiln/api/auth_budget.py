"""A budget of failed authentications per client address (issue 22).

A request with a bad or missing credential costs its check: a Keystone token
validation, an EC2 signature sent to Keystone's ec2tokens, a keypair or temp URL read
from the database. Without a bound, whoever reaches a listener could spend that
capacity (Keystone's included) with garbage credentials and starve everyone else, and
guess passwords or keys as fast as the server answers. So each client address has a
token bucket (kiln.api.ratelimit) that only failures spend; requests that authenticate
never touch it, so legitimate clients are never charged.

While an address's bucket is empty, its requests are still checked, but only from what
this process already holds in memory (kiln.auth.cache.MEMORY_ONLY: a cached valid
token or Keystone answer, a cached keypair): a credential that would need a remote call
is not checked and the request is answered 429 with ``Retry-After`` in the API's own
format. A client with a valid, recently used credential behind the same address (a NAT)
is therefore still served; the flood costs nothing but the refusals.

The key is the TCP peer (uvicorn runs without proxy headers: no header can choose it);
an IPv6 client is keyed by its /64, as one host may hold a whole /64. The listeners of
one process share the buckets (kiln.api.ratelimit.shared_limits).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable
from typing import TypeVar

from starlette.types import Scope

from kiln.api.aws import errors as aws_errors
from kiln.api.ratelimit import Refusal, TokenBucketLimiter
from kiln.auth.cache import MEMORY_ONLY, NotInMemory
from kiln.auth.errors import Throttled

T = TypeVar("T")


def client_key(scope: Scope) -> str:
    """The budget's key for the request's TCP peer."""
    client = scope.get("client")
    host = str(client[0]) if client else ""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host or "unknown"
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def _message(refusal: Refusal) -> str:
    return (f"Too many failed authentications from this address: at most "
            f"{refusal.rate:g} per second (bursts of {refusal.burst}) on this API process "
            f"([kiln_api] failed_auth_rate); retry after {refusal.retry_after} s")


class FailedAuthBudget:
    """The failure budgets of one API process, over ``limiter`` (keyed by address)."""

    def __init__(self, limiter: TokenBucketLimiter) -> None:
        self.limiter = limiter

    async def guard(self, scope: Scope, check: Callable[[], Awaitable[T]],
                    is_failure: Callable[[BaseException], bool]) -> T:
        """``check()`` (the authentication) under the budget of the request's address.
        A failure (``is_failure``) spends one token; with none left the request raises
        :class:`Throttled` instead of checking anything it cannot check from memory."""
        key = client_key(scope)
        refusal = self.limiter.peek(key)
        if refusal is None:
            try:
                return await check()
            except Exception as exc:
                if not is_failure(exc):
                    raise
                refused = self.limiter.take(key)
                if refused is None:
                    raise
                raise Throttled(_message(refused), refused.retry_after) from None
        token = MEMORY_ONLY.set(True)
        try:
            return await check()
        except NotInMemory:
            raise Throttled(_message(refusal), refusal.retry_after) from None
        except Exception as exc:
            if not is_failure(exc):
                raise
            self.limiter.take(key)  # refused: only its log line, once a minute
            raise Throttled(_message(refusal), refusal.retry_after) from None
        finally:
            MEMORY_ONLY.reset(token)


def _aws_refusal(exc: BaseException) -> bool:
    """A signature the AWS listeners refused (not Keystone being unavailable: 5xx)."""
    return isinstance(exc, aws_errors.AwsError) and exc.status < 500


async def aws_guard(scope: Scope, limiter: TokenBucketLimiter,
                    check: Callable[[], Awaitable[T]]) -> T:
    """:meth:`FailedAuthBudget.guard` for the CFN and CloudWatch listeners: an address
    over its budget gets AWS's ``Throttling`` (429, ``Retry-After``)."""
    try:
        return await FailedAuthBudget(limiter).guard(scope, check, _aws_refusal)
    except Throttled as exc:
        raise aws_errors.Throttling(exc.message, retry_after=exc.retry_after) from None
