"""Per-credential rate limits on the endpoints servers' agents call (issue 22).

Servers call Kiln all day: os-collect-config polls metadata every 30 s, heat-config-notify
and cfn-signal send signals, cfn-push-stats pushes metrics every minute. A server (or
whoever stole one stack's credential) that calls far more often than that would take
other tenants' share of the API process; Heat has no bound here. Each call on those
endpoints therefore spends a token from the bucket of the credential that authenticated
it (a stack user, an EC2 access key, a temp URL's resource, a signal token's resource),
one bucket family per kind of call (signals, metadata polls, PutMetricData). An empty
bucket is a 429 with ``Retry-After``, answered before the call does any work.

The buckets live in the API process (``shared_limits`` gives the apps of one process the
same ones, so a temp URL costs the same budget on the native and the CFN listener):
each process enforces its own budget, and N API processes allow N times the rate. A
credential is keyed only once it is authenticated, so nobody can spend another's budget
by naming it. The limiter is itself bounded: at most ``max_keys`` buckets are kept,
least recently used first out (a dropped bucket starts full again, which only favours
its owner, and an active flooder's bucket is always the most recently used one).

Everything here is synchronous and runs on the event loop's thread, so a check and its
spend are one step no other request can interleave with.
"""

from __future__ import annotations

import logging
import math
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from oslo_config import cfg

from kiln.conf import api_opts

LOG = logging.getLogger(__name__)

#: the kinds of agent calls, each with its own options ``agent_<kind>_rate``/``_burst``
KINDS = ("signal", "metadata", "metric")
#: how each kind is named in a refusal
WHAT = {"signal": "signals", "metadata": "metadata reads", "metric": "PutMetricData calls"}


@dataclass(frozen=True)
class Refusal:
    """Why a call was refused: when a token will be there again, and the bucket's terms."""

    retry_after: int
    rate: float
    burst: int

    def message(self, kind: str) -> str:
        return (f"Too many {WHAT.get(kind, kind)} with this credential: at most "
                f"{self.rate:g} per second (bursts of {self.burst}) on this API process; "
                f"retry after {self.retry_after} s")


#: seconds between two warnings about the same credential's refusals
LOG_INTERVAL = 60.0


class _Bucket:
    __slots__ = ("logged", "stamp", "tokens")

    def __init__(self, tokens: float, stamp: float) -> None:
        self.tokens = tokens
        self.stamp = stamp
        self.logged = -LOG_INTERVAL


class TokenBucketLimiter:
    """Token buckets keyed by credential: each holds up to ``burst`` tokens and gains
    ``rate`` tokens per second; a call takes one token or is refused. ``rate`` 0 means
    unlimited (no bucket is kept at all)."""

    def __init__(self, rate: float, burst: int, *, max_keys: int = 10000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if rate < 0 or burst < 1 or max_keys < 1:
            raise ValueError("rate must be >= 0, burst and max_keys >= 1")
        self.rate = float(rate)
        self.burst = int(burst)
        self.max_keys = int(max_keys)
        self.clock = clock
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    @property
    def unlimited(self) -> bool:
        return self.rate == 0

    def __len__(self) -> int:
        return len(self._buckets)

    def peek(self, key: str) -> Refusal | None:
        """Whether ``key``'s bucket is empty now (the refusal a take would get), without
        spending or keeping anything: a key with no bucket has a full one."""
        if self.unlimited:
            return None
        bucket = self._buckets.get(key)
        if bucket is None:
            return None
        elapsed = max(0.0, self.clock() - bucket.stamp)
        tokens = min(float(self.burst), bucket.tokens + elapsed * self.rate)
        if tokens >= 1.0:
            return None
        wait = (1.0 - tokens) / self.rate
        return Refusal(retry_after=max(1, math.ceil(wait)), rate=self.rate, burst=self.burst)

    def take(self, key: str) -> Refusal | None:
        """Spend one of ``key``'s tokens: None when there was one, else the refusal (a
        refused call spends nothing, so retrying early does not push recovery back)."""
        if self.unlimited:
            return None
        now = self.clock()
        buckets = self._buckets
        bucket = buckets.get(key)
        if bucket is None:
            bucket = _Bucket(float(self.burst), now)
            buckets[key] = bucket
            if len(buckets) > self.max_keys:
                buckets.popitem(last=False)
        else:
            buckets.move_to_end(key)
            elapsed = max(0.0, now - bucket.stamp)
            bucket.tokens = min(float(self.burst), bucket.tokens + elapsed * self.rate)
            bucket.stamp = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return None
        if now - bucket.logged >= LOG_INTERVAL:
            # a flood writes one log line a minute, not one per request
            bucket.logged = now
            LOG.warning("rate limit reached for %s (%g/s, burst %d): refusing its calls "
                        "beyond that (logged once a minute)", key, self.rate, self.burst)
        wait = (1.0 - bucket.tokens) / self.rate
        return Refusal(retry_after=max(1, math.ceil(wait)), rate=self.rate, burst=self.burst)


def _option(conf: Any, name: str) -> Any:
    """``[kiln_api] name``, or its default when ``conf`` does not have the group (an app
    built on a ConfigOpts holding only some of Kiln's options, as tests do)."""
    try:
        return getattr(conf.kiln_api, name)
    except (AttributeError, cfg.NoSuchOptError):
        return next(opt.default for opt in api_opts if opt.dest == name)


class AgentLimits:
    """One limiter per kind of agent call, from ``[kiln_api]``'s options, and the budget
    of failed authentications per client address (``failed_auth``, kiln.api.auth_budget),
    which the listeners of one process share the same way."""

    def __init__(self, limiters: dict[str, TokenBucketLimiter],
                 failed_auth: TokenBucketLimiter | None = None) -> None:
        self.limiters = limiters
        # not ``or``: a limiter with no bucket yet has len() 0
        self.failed_auth = TokenBucketLimiter(0, 1) if failed_auth is None else failed_auth

    @classmethod
    def from_conf(cls, conf: Any, *, clock: Callable[[], float] = time.monotonic,
                  ) -> AgentLimits:
        max_keys = int(_option(conf, "agent_rate_limit_keys"))
        failed = TokenBucketLimiter(float(_option(conf, "failed_auth_rate")),
                                    int(_option(conf, "failed_auth_burst")),
                                    max_keys=int(_option(conf, "failed_auth_keys")),
                                    clock=clock)
        return cls({kind: TokenBucketLimiter(float(_option(conf, f"agent_{kind}_rate")),
                                             int(_option(conf, f"agent_{kind}_burst")),
                                             max_keys=max_keys, clock=clock)
                    for kind in KINDS}, failed)

    def take(self, kind: str, key: str) -> Refusal | None:
        return self.limiters[kind].take(f"{kind}:{key}")


#: id(conf) -> (a weak reference to conf, its limits); ConfigOpts is not hashable
_SHARED: dict[int, tuple[weakref.ref[Any], AgentLimits]] = {}


def shared_limits(conf: Any) -> AgentLimits:
    """The limits every app built on ``conf`` in this process shares (the native, CFN
    and CloudWatch listeners of one ``kiln serve``)."""
    found = _SHARED.get(id(conf))
    if found is not None and found[0]() is conf:
        return found[1]
    limits = AgentLimits.from_conf(conf)
    key = id(conf)
    _SHARED[key] = (weakref.ref(conf, lambda _: _SHARED.pop(key, None)), limits)
    return limits
