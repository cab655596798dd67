"""Kiln's temp URLs are Swift temp URLs: the signature is Swift's HMAC-SHA256 over
``METHOD\\nEXPIRES\\nPATH``, checked here against an independent computation, and the
rules for methods and expiry are Swift's."""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import parse_qs, urlsplit

import pytest

from kiln import tempurl

KEY = "k" * 64
STACK = "0b5c3b43-9d9f-4a52-9c59-6a9d2f7f5a10"


def _url(method: str, expires: int = 2_000_000_000, name: str = "deploy ment") -> str:
    return tempurl.make_url("http://127.0.0.1:8004/", KEY, method=method, project_id="demo",
                            stack_id=STACK, resource_name=name, expires=expires)


def _parts(url: str) -> tuple[str, str, int]:
    split = urlsplit(url)
    query = parse_qs(split.query)
    return split.path, query["temp_url_sig"][0], int(query["temp_url_expires"][0])


def test_the_signature_is_swifts() -> None:
    path, sig, expires = _parts(_url("PUT"))
    assert path == f"/v1/AUTH_demo/{STACK}/deploy%20ment"
    want = hmac.new(KEY.encode(), f"PUT\n{expires}\n{path}".encode(),
                    hashlib.sha256).hexdigest()
    assert sig == want


def test_the_path_names_the_stack_and_resource() -> None:
    path, _, _ = _parts(_url("GET"))
    target = tempurl.parse_path(path)
    assert target == tempurl.Target("demo", STACK, "deploy ment")
    assert tempurl.parse_path("/v1/AUTH_demo/stacks/x") is None     # no stack id
    assert tempurl.parse_path(f"/v1/demo/{STACK}/x") is None       # no AUTH_ account


@pytest.mark.parametrize(("signed", "method", "ok"), [
    ("GET", "GET", True), ("GET", "HEAD", True), ("PUT", "HEAD", True),
    ("PUT", "PUT", True), ("GET", "PUT", False), ("PUT", "GET", False),
    ("GET", "POST", False), ("PUT", "DELETE", False),
])
def test_methods_follow_swift(signed: str, method: str, ok: bool) -> None:
    path, sig, expires = _parts(_url(signed))

    def check() -> None:
        tempurl.check(KEY, method=method, raw_path=path, sig=sig, expires=expires, now=0)

    if ok:
        check()
    else:
        with pytest.raises(tempurl.TempUrlError, match="does not match"):
            check()


def test_expired_forged_and_moved_urls_are_refused() -> None:
    path, sig, expires = _parts(_url("PUT", expires=1000))
    with pytest.raises(tempurl.TempUrlError, match="expired"):
        tempurl.check(KEY, method="PUT", raw_path=path, sig=sig, expires=expires, now=1000)
    tempurl.check(KEY, method="PUT", raw_path=path, sig=sig, expires=expires, now=999)
    with pytest.raises(tempurl.TempUrlError, match="does not match"):       # a later expiry
        tempurl.check(KEY, method="PUT", raw_path=path, sig=sig, expires=2000, now=999)
    with pytest.raises(tempurl.TempUrlError, match="does not match"):       # another object
        tempurl.check(KEY, method="PUT", raw_path=path + "x", sig=sig, expires=expires, now=0)
    with pytest.raises(tempurl.TempUrlError, match="does not match"):       # another key
        tempurl.check("other", method="PUT", raw_path=path, sig=sig, expires=expires, now=0)
    with pytest.raises(tempurl.TempUrlError, match="missing"):
        tempurl.check(KEY, method="PUT", raw_path=path, sig=None, expires=expires, now=0)


@pytest.mark.parametrize("value", [None, "", "-1", "soon", "1e9"])
def test_expires_must_be_epoch_seconds(value: str | None) -> None:
    with pytest.raises(tempurl.TempUrlError, match="temp_url_expires"):
        tempurl.parse_expires(value)


def test_keys_are_fresh_and_long() -> None:
    keys = {tempurl.new_key() for _ in range(3)}
    assert len(keys) == 3 and all(len(k) == 64 for k in keys)


def test_only_get_and_put_are_signed() -> None:
    with pytest.raises(ValueError):
        _url("DELETE")


@pytest.mark.parametrize("sig", ["é" * 64, "\udcff", "0" * 63 + "ß"])
def test_a_signature_of_any_characters_is_only_a_mismatch(sig: str) -> None:
    """(Was a TypeError, a 500: compare_digest refuses non-ASCII text; found by
    tests/functional/api/test_fuzz_listeners.py.)"""
    with pytest.raises(tempurl.TempUrlError, match="does not match"):
        tempurl.check("k" * 32, method="PUT", raw_path="/v1/AUTH_p/s/r", sig=sig,
                      expires=2_000_000_000, now=1_000_000_000)
