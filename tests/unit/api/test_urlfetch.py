"""The URL guard: every hop's resolved addresses are checked before any connection.

The transport is httpx's in-memory MockTransport and names resolve through a table, so
these tests never send traffic anywhere: a refusal is proven by the transport having
seen no request at all (or none past the refused hop)."""

from __future__ import annotations

import json
from collections.abc import Mapping

import httpx
import pytest

from kiln import urlfetch

TEMPLATE = b"heat_template_version: 2018-08-31\n"


class Recorder:
    """A MockTransport that answers from a table of ``url -> response`` and records
    every request it is asked to send."""

    def __init__(self, answers: Mapping[str, httpx.Response] | None = None) -> None:
        self.answers = dict(answers or {})
        self.seen: list[httpx.Request] = []
        self.transport = httpx.MockTransport(self._handle)

    def _handle(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        return self.answers.get(str(request.url), httpx.Response(200, content=TEMPLATE))


def table(names: Mapping[str, list[str]]) -> urlfetch.Resolver:
    async def resolve(host: str, port: int) -> list[str]:
        if host not in names:
            raise OSError(f"unknown host {host}")
        return names[host]
    return resolve


async def _fetch(url: str, recorder: Recorder, *, allowed: list[str] | None = None,
                 names: Mapping[str, list[str]] | None = None) -> bytes:
    return await urlfetch.fetch(url, allowed_schemes=["http", "https"],
                                allowed_hosts=allowed or [], timeout=5, limit=10_000,
                                transport=recorder.transport, resolve=table(names or {}))


@pytest.mark.parametrize("url", [
    "http://169.254.169.254/latest/meta-data/",
    "http://[fe80::1]/x",
    "http://[::ffff:169.254.169.254]/x",
])
async def test_link_local_is_refused_even_when_allowed(url: str) -> None:
    recorder = Recorder()
    with pytest.raises(urlfetch.Refused, match=r"link-local address .* never fetched"):
        await _fetch(url, recorder, allowed=["169.254.0.0/16", "fe80::/10", "0.0.0.0/0"])
    assert recorder.seen == []


@pytest.mark.parametrize(("url", "kind"), [
    ("http://127.0.0.1:8004/v1/other/stacks", "loopback"),
    ("http://[::1]/t.yaml", "loopback"),
    ("http://10.0.0.5/t.yaml", "private"),
    ("http://172.16.3.4/t.yaml", "private"),
    ("http://192.168.1.1/t.yaml", "private"),
    ("http://100.64.0.1/t.yaml", "private"),
    ("http://[fd00::1]/t.yaml", "private"),
    ("http://0.0.0.0/t.yaml", "reserved"),
])
async def test_loopback_and_private_addresses_are_refused_by_default(url: str,
                                                                     kind: str) -> None:
    recorder = Recorder()
    with pytest.raises(urlfetch.Refused, match=f"resolves to a {kind} address"):
        await _fetch(url, recorder)
    assert recorder.seen == []


async def test_a_name_is_judged_by_every_address_it_resolves_to() -> None:
    recorder = Recorder()
    names = {"sneaky.example": ["93.184.216.34", "10.1.2.3"]}
    with pytest.raises(urlfetch.Refused, match=r"a private address \(10.1.2.3\)"):
        await _fetch("http://sneaky.example/t.yaml", recorder, names=names)
    assert recorder.seen == []


async def test_the_connection_goes_to_the_address_that_was_checked() -> None:
    recorder = Recorder()
    names = {"templates.example": ["93.184.216.34"]}
    assert await _fetch("http://templates.example:8080/t.yaml", recorder,
                        names=names) == TEMPLATE
    [request] = recorder.seen
    assert str(request.url) == "http://93.184.216.34:8080/t.yaml"
    assert request.headers["host"] == "templates.example:8080"


@pytest.mark.parametrize("allowed", [["127.0.0.1"], ["127.0.0.0/8"], ["localhost"]])
async def test_the_allow_list_admits_a_host_or_network(allowed: list[str]) -> None:
    recorder = Recorder()
    names = {"localhost": ["127.0.0.1"]}
    url = "http://localhost/t.yaml" if allowed == ["localhost"] else "http://127.0.0.1/t.yaml"
    assert await _fetch(url, recorder, allowed=allowed, names=names) == TEMPLATE
    assert [str(r.url) for r in recorder.seen] == ["http://127.0.0.1/t.yaml"]


async def test_a_redirect_to_a_forbidden_address_is_refused_before_following_it() -> None:
    first = "http://93.184.216.34/t.yaml"
    recorder = Recorder({first: httpx.Response(
        302, headers={"location": "http://169.254.169.254/latest/meta-data/"})})
    with pytest.raises(urlfetch.Refused, match="link-local"):
        await _fetch(first, recorder)
    assert [str(r.url) for r in recorder.seen] == [first]


async def test_a_redirect_through_a_name_is_checked_on_its_addresses() -> None:
    first = "http://93.184.216.34/t.yaml"
    recorder = Recorder({first: httpx.Response(
        301, headers={"location": "http://inside.example/admin"})})
    with pytest.raises(urlfetch.Refused, match=r"loopback address \(127.0.0.2\)"):
        await _fetch(first, recorder, names={"inside.example": ["127.0.0.2"]})
    assert len(recorder.seen) == 1


async def test_allowed_redirects_are_followed_up_to_a_bound() -> None:
    base = "http://93.184.216.34"
    answers = {f"{base}/{i}": httpx.Response(302, headers={"location": f"/{i + 1}"})
               for i in range(urlfetch.MAX_REDIRECTS + 1)}
    recorder = Recorder(answers)
    with pytest.raises(urlfetch.FetchError, match="more than 5 redirects"):
        await _fetch(f"{base}/0", recorder)
    assert len(recorder.seen) == urlfetch.MAX_REDIRECTS + 1
    recorder = Recorder({f"{base}/0": answers[f"{base}/0"]})
    assert await _fetch(f"{base}/0", recorder) == TEMPLATE


async def test_a_body_over_the_limit_is_refused() -> None:
    recorder = Recorder({"http://93.184.216.34/big": httpx.Response(200,
                                                                    content=b"x" * 20_000)})
    with pytest.raises(urlfetch.TooLarge):
        await _fetch("http://93.184.216.34/big", recorder)


# -- an alarm action's POST: the same guard --------------------------------------------

async def _post(url: str, recorder: Recorder, *, allowed: list[str] | None = None,
                names: Mapping[str, list[str]] | None = None) -> int:
    return await urlfetch.post_json(url, {"current": "alarm"}, allowed_hosts=allowed or [],
                                    timeout=5, transport=recorder.transport,
                                    resolve=table(names or {}))


@pytest.mark.parametrize(("url", "allowed", "refusal"), [
    ("http://169.254.169.254/latest/meta-data/", ["0.0.0.0/0"], "link-local"),
    ("http://127.0.0.1:8004/v1/other/stacks", [], "a loopback address"),
    ("http://hooks.internal/alarm", [], "a private address"),
    ("ftp://hooks.example.com/alarm", [], "unsupported action"),
])
async def test_an_alarm_action_url_is_checked_before_any_post(
        url: str, allowed: list[str], refusal: str) -> None:
    recorder = Recorder()
    with pytest.raises(urlfetch.Refused, match=refusal):
        await _post(url, recorder, allowed=allowed, names={"hooks.internal": ["10.1.2.3"]})
    assert recorder.seen == []


async def test_an_allowed_alarm_action_is_posted_to_the_checked_address() -> None:
    recorder = Recorder({"http://10.1.2.3/alarm": httpx.Response(202)})
    status = await _post("http://hooks.internal/alarm", recorder, allowed=["10.0.0.0/8"],
                         names={"hooks.internal": ["10.1.2.3"]})
    assert status == 202
    [request] = recorder.seen
    assert request.method == "POST"
    assert request.headers["host"] == "hooks.internal"
    assert json.loads(request.read()) == {"current": "alarm"}


async def test_an_alarm_action_is_not_redirected() -> None:
    recorder = Recorder({"http://93.184.216.34/a": httpx.Response(
        302, headers={"location": "http://169.254.169.254/"})})
    status = await _post("http://hooks.example.com/a", recorder,
                         names={"hooks.example.com": ["93.184.216.34"]})
    assert status == 302
    assert [str(r.url) for r in recorder.seen] == ["http://93.184.216.34/a"]
