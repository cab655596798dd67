"""The pieces of the failed-authentication budget and the Host check that a running
server cannot show cheaply: how addresses are keyed, and peeking at a bucket."""

from __future__ import annotations

from kiln.api.auth_budget import client_key
from kiln.api.host_guard import HostGuard
from kiln.api.ratelimit import TokenBucketLimiter


def test_an_ipv6_client_is_keyed_by_its_64_and_a_mapped_v4_as_v4() -> None:
    one = client_key({"client": ("2001:db8:1:2::5", 1)})
    other = client_key({"client": ("2001:db8:1:2:ffff::9", 2)})
    assert one == other == "2001:db8:1:2::/64"
    assert client_key({"client": ("::ffff:10.0.0.7", 3)}) == "10.0.0.7"
    assert client_key({"client": ("10.0.0.7", 3)}) == "10.0.0.7"
    assert client_key({}) == "unknown"


def test_peek_spends_nothing_and_sees_the_refill() -> None:
    now = [0.0]
    limiter = TokenBucketLimiter(0.5, 2, clock=lambda: now[0])
    assert limiter.peek("a") is None and len(limiter) == 0
    assert limiter.take("a") is None and limiter.take("a") is None
    refusal = limiter.peek("a")
    assert refusal is not None and refusal.retry_after == 2
    assert limiter.peek("a") is not None   # peeking spent nothing, refused nothing more
    now[0] = 2.0
    assert limiter.peek("a") is None


def test_host_names_and_wildcards() -> None:
    guard = HostGuard(lambda *a: None, names=["Kiln.Example.", "*.corp.example"])
    for host in ("kiln.example:8004", "KILN.EXAMPLE.", "x.corp.example", "10.1.2.3:80",
                 "[::1]:8004", "localhost", "a.localhost"):
        assert guard.allows(host), host
    for host in ("corp.example", "evilcorp.example", "kiln.example.evil", "", "[bad"):
        assert not guard.allows(host), host
    assert HostGuard(lambda *a: None, names=["*"]).allows("anything.example")
