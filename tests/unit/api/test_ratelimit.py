"""The per-credential token buckets of kiln.api.ratelimit, on a clock the test moves."""

from __future__ import annotations

import tracemalloc

import pytest
from oslo_config import cfg

from kiln.api.ratelimit import AgentLimits, TokenBucketLimiter, shared_limits
from kiln.conf import api_opts


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_full_bucket_allows_a_burst_then_refuses_with_when_to_retry() -> None:
    clock = Clock()
    limiter = TokenBucketLimiter(2.0, 5, clock=clock)
    assert [limiter.take("a") for _ in range(5)] == [None] * 5
    refusal = limiter.take("a")
    assert refusal is not None
    assert refusal.retry_after == 1  # half a second, rounded up to a whole second
    assert (refusal.rate, refusal.burst) == (2.0, 5)
    assert "at most 2 per second (bursts of 5)" in refusal.message("signal")


def test_tokens_refill_at_the_rate_up_to_the_burst() -> None:
    clock = Clock()
    limiter = TokenBucketLimiter(0.5, 3, clock=clock)
    for _ in range(3):
        assert limiter.take("a") is None
    refusal = limiter.take("a")
    assert refusal is not None and refusal.retry_after == 2  # one token: 2 s at 0.5/s
    clock.now += 1.9
    assert limiter.take("a") is not None
    clock.now += 0.1
    assert limiter.take("a") is None
    # a long idle time refills the burst, never more
    clock.now += 3600
    assert [limiter.take("a") for _ in range(3)] == [None] * 3
    assert limiter.take("a") is not None


def test_refused_calls_spend_nothing() -> None:
    """Retrying early (a client ignoring Retry-After) does not push recovery back."""
    clock = Clock()
    limiter = TokenBucketLimiter(1.0, 1, clock=clock)
    assert limiter.take("a") is None
    for _ in range(100):
        clock.now += 0.009
        assert limiter.take("a") is not None
    clock.now += 1.0 - 0.9 + 0.001
    assert limiter.take("a") is None


def test_credentials_have_separate_buckets() -> None:
    clock = Clock()
    limiter = TokenBucketLimiter(1.0, 2, clock=clock)
    assert limiter.take("flood") is None
    assert limiter.take("flood") is None
    assert limiter.take("flood") is not None
    assert limiter.take("other") is None
    assert limiter.take("other") is None


def test_rate_zero_is_unlimited_and_keeps_nothing() -> None:
    limiter = TokenBucketLimiter(0, 1)
    assert all(limiter.take(f"k{i % 7}") is None for i in range(10000))
    assert len(limiter) == 0


def test_a_clock_going_back_refills_nothing() -> None:
    clock = Clock()
    limiter = TokenBucketLimiter(1.0, 1, clock=clock)
    assert limiter.take("a") is None
    clock.now -= 50
    assert limiter.take("a") is not None


def test_the_number_of_buckets_is_bounded_least_recently_used_out() -> None:
    clock = Clock()
    limiter = TokenBucketLimiter(1.0, 2, max_keys=100, clock=clock)
    assert limiter.take("flood") is None
    assert limiter.take("flood") is None
    for i in range(10000):
        limiter.take(f"key-{i}")
        if i % 50 == 0:
            # the flooder stays the most recently used: never dropped, never refilled
            assert limiter.take("flood") is not None
        assert len(limiter) <= 100
    # the oldest of the others were dropped: a dropped bucket starts full again
    assert limiter.take("key-0") is None


def test_memory_stays_bounded_under_a_stream_of_new_keys() -> None:
    """What the limiter holds after 5,000 credentials is what it holds after 55,000: the
    1,000 newest buckets (about 250 bytes each)."""
    tracemalloc.start()
    try:
        limiter = TokenBucketLimiter(1.0, 5, max_keys=1000)
        for i in range(5000):
            limiter.take(f"credential-{i:08d}")
        first = tracemalloc.get_traced_memory()[0]
        for i in range(5000, 55000):
            limiter.take(f"credential-{i:08d}")
        then = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(limiter) == 1000
    assert then - first < 20_000, then - first


def test_invalid_terms_are_refused() -> None:
    with pytest.raises(ValueError):
        TokenBucketLimiter(-1, 1)
    with pytest.raises(ValueError):
        TokenBucketLimiter(1, 0)
    with pytest.raises(ValueError):
        TokenBucketLimiter(1, 1, max_keys=0)


def _conf(**overrides: object) -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    conf.register_opts(api_opts, group="kiln_api")
    conf([], project="kiln-test")
    for name, value in overrides.items():
        conf.set_override(name, value, group="kiln_api")
    return conf


def test_limits_from_the_options_one_family_per_kind() -> None:
    clock = Clock()
    limits = AgentLimits.from_conf(_conf(agent_signal_rate=1.0, agent_signal_burst=1,
                                         agent_metadata_rate=0), clock=clock)
    assert limits.take("signal", "ec2:A") is None
    assert limits.take("signal", "ec2:A") is not None
    # the same credential's other kinds of calls have their own budgets
    assert limits.take("metric", "ec2:A") is None
    assert all(limits.take("metadata", "ec2:A") is None for _ in range(1000))


def test_defaults_leave_the_real_agents_far_below_the_limits() -> None:
    """os-collect-config polls every 30 s, cfn-push-stats pushes every minute, a
    deployment signals once: each credential stays at a tiny fraction of its budget."""
    opts = _conf().kiln_api
    for kind in ("signal", "metadata", "metric"):
        assert getattr(opts, f"agent_{kind}_rate") >= 1.0
        assert getattr(opts, f"agent_{kind}_burst") >= 50


def test_apps_of_one_process_share_the_budgets() -> None:
    conf = _conf()
    assert shared_limits(conf) is shared_limits(conf)
    assert shared_limits(conf) is not shared_limits(_conf())


def test_a_flood_is_logged_once_a_minute_not_per_refusal(
        caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    limiter = TokenBucketLimiter(10.0, 1, clock=clock)
    with caplog.at_level("WARNING", logger="kiln.api.ratelimit"):
        for _ in range(3000):  # 30 s of a flood at 100 calls/s, some served as tokens come
            limiter.take("flood")
            clock.now += 0.01
        assert len(caplog.records) == 1
        clock.now += 60
        limiter.take("flood")
        limiter.take("flood")
    assert len(caplog.records) == 2
    assert "flood" in caplog.records[0].getMessage()


def test_a_conf_without_the_group_gets_the_defaults() -> None:
    conf = cfg.ConfigOpts()
    conf([], project="kiln-test")
    limits = AgentLimits.from_conf(conf)
    signals = limits.limiters["signal"]
    defaults = {opt.dest: opt.default for opt in api_opts}
    assert (signals.rate, signals.burst, signals.max_keys) == (
        defaults["agent_signal_rate"], defaults["agent_signal_burst"],
        defaults["agent_rate_limit_keys"])
