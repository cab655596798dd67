"""kiln.api.cross_site's origin comparison and kiln.api.body's JSON types, alone (the
behaviour through a real server: tests/functional/api/test_cross_site_and_sizes.py)."""

from __future__ import annotations

import pytest
from oslo_config import cfg

from kiln.api.body import is_json_type
from kiln.api.cross_site import allowed_origins, same_origin


@pytest.mark.parametrize(("origin", "host"), [
    ("http://127.0.0.1:8004", "127.0.0.1:8004"),
    ("https://kiln.example", "kiln.example"),          # a TLS proxy passing the Host on
    ("https://kiln.example", "kiln.example:443"),
    ("http://KILN.example", "kiln.example:80"),
    ("http://[::1]:8004", "[::1]:8004"),
])
def test_the_servers_own_origin(origin: str, host: str) -> None:
    assert same_origin(origin, host)


@pytest.mark.parametrize(("origin", "host"), [
    ("http://attacker.example", "kiln.example"),
    ("http://kiln.example:8005", "kiln.example:8004"),
    ("http://kiln.example", "kiln.example:8004"),
    ("null", "kiln.example"),
    ("file://", "kiln.example"),
    ("http://kiln.example.attacker.example", "kiln.example"),
    ("http://kiln.example/path", "kiln.example"),
    ("http://[::1", "[::1]:8004"),
    ("http://kiln.example:99999", "kiln.example:99999"),
    ("http://kiln.example", ""),
    ("ftp://kiln.example", "kiln.example"),
])
def test_other_origins(origin: str, host: str) -> None:
    assert not same_origin(origin, host)


@pytest.mark.parametrize(("ctype", "json"), [
    ("application/json", True), ("application/vnd.openstack.orchestration+json", True),
    ("application/merge-patch+json", True), ("text/plain", False), ("text/json", False),
    ("application/x-www-form-urlencoded", False), ("multipart/form-data", False),
    ("+json", False), ("application/jsonx", False),
])
def test_json_types(ctype: str, json: bool) -> None:
    assert is_json_type(ctype) is json


def test_allowed_origins_come_from_heats_cors_option() -> None:
    conf = cfg.ConfigOpts()
    assert allowed_origins(conf) == frozenset()       # no [cors] group: none allowed
    conf.register_opts([cfg.ListOpt("allowed_origin", default=[])], group="cors")
    conf([], project="kiln", default_config_files=[])
    conf.set_override("allowed_origin", ["https://Horizon.example/", " "], group="cors")
    assert allowed_origins(conf) == frozenset({"https://horizon.example"})
