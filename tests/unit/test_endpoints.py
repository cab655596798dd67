"""kiln.endpoints: the URLs servers are given, from the options or the listeners'
configured addresses, and from nothing a request says."""

from __future__ import annotations

import logging
import socket
from types import SimpleNamespace
from typing import Any

import pytest

from kiln import endpoints, tempurl


def conf(**options: Any) -> Any:
    return SimpleNamespace(
        heat_metadata_server_url=options.get("metadata"),
        heat_waitcondition_server_url=options.get("waitcondition"),
        heat_api=SimpleNamespace(bind_host=options.get("api_host", "127.0.0.1"),
                                 bind_port=8004),
        heat_api_cfn=SimpleNamespace(bind_host=options.get("cfn_host", "127.0.0.1"),
                                     bind_port=8000))


def test_the_listeners_addresses_when_no_option_is_set() -> None:
    c = conf(api_host="10.0.0.7", cfn_host="10.0.0.8")
    assert endpoints.metadata_url(c) == "http://10.0.0.8:8000/v1/"
    assert endpoints.cfn_signal_root(c, "cfn_waitcondition") == \
        "http://10.0.0.8:8000/v1/waitcondition"
    assert endpoints.cfn_signal_root(c, "cfn_signal") == "http://10.0.0.8:8000/v1/signal"
    assert endpoints.heat_api_root(c) == "http://10.0.0.7:8004/v1"
    assert tempurl.base_url(c) == "http://10.0.0.7:8004"
    assert endpoints.heat_api_root(conf(api_host="fd00::7")) == "http://[fd00::7]:8004/v1"


def test_the_options_as_heat_reads_them() -> None:
    c = conf(metadata="https://kiln.example.com:8000")
    assert endpoints.metadata_url(c) == "https://kiln.example.com:8000/v1/"
    # unset, the wait-condition URL is the metadata URL's, as Heat falls back to its
    # CFN endpoint
    assert endpoints.cfn_signal_root(c, "cfn_waitcondition") == \
        "https://kiln.example.com:8000/v1/waitcondition"
    assert tempurl.base_url(c) == "https://kiln.example.com:8000"
    both = conf(metadata="https://meta.example.com/v1/",
                waitcondition="https://wait.example.com:8000/v1/waitcondition")
    assert endpoints.metadata_url(both) == "https://meta.example.com/v1/"
    # temp URLs' paths start with /v1 of their own
    assert tempurl.base_url(both) == "https://meta.example.com"
    assert endpoints.cfn_signal_root(both, "cfn_signal") == \
        "https://wait.example.com:8000/v1/signal"


def test_a_wildcard_listener_is_named_by_the_host_name_with_one_warning(
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(endpoints, "_warned", set())
    c = conf(api_host="0.0.0.0", cfn_host="::")
    name = socket.gethostname()
    with caplog.at_level(logging.WARNING, "kiln.endpoints"):
        for _ in range(3):
            assert endpoints.metadata_url(c) == f"http://{name}:8000/v1/"
            assert endpoints.heat_api_root(c) == f"http://{name}:8004/v1"
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 2, warnings
    assert all("heat_metadata_server_url" in w for w in warnings)


def test_nothing_remembers_a_request() -> None:
    """The Host-header memory of issue 22 is gone, not merely unused."""
    assert not hasattr(endpoints, "remember")
    assert not hasattr(endpoints, "remember_scope")
