"""The client layer without a cloud: settings from heat.conf-style options, retries of
transient errors, not-found on delete, the catalog check."""

from __future__ import annotations

from typing import Any

import pytest
from openstack import exceptions

from kiln.clients.manager import CloudClients
from kiln.clients.settings import CloudSettings
from kiln.conf import CONF
from kiln.conf_loader import load_config


def _conf(tmp_path: Any, text: str) -> Any:
    path = tmp_path / "kiln.conf"
    path.write_text(text)
    load_config([str(path)], CONF)
    return CONF


@pytest.fixture(autouse=True)
def _fresh_conf() -> Any:
    """Options these tests load must not reach other tests in the same process."""
    yield
    CONF.clear()


def test_per_client_sections_fall_back_to_clients(tmp_path: Any) -> None:
    conf = _conf(tmp_path, """
[DEFAULT]
region_name_for_services = RegionTwo
region_name_for_shared_services = Shared
[clients]
endpoint_type = internalURL
insecure = true
[clients_nova]
endpoint_type = adminURL
[kiln_clients]
auth_url = http://127.0.0.1:5000
username = u
password = p
project_name = proj
endpoint_override = network:http://127.0.0.1:9999
""")
    settings = CloudSettings.from_conf(conf)
    kwargs = settings.connection_kwargs()
    assert settings.configured
    assert settings.auth["auth_url"] == "http://127.0.0.1:5000/v3"
    assert kwargs["region_name"] == "RegionTwo"
    assert kwargs["compute_interface"] == "admin"          # its own section
    assert kwargs["network_interface"] == "internal"       # [clients]
    assert kwargs["network_endpoint_override"] == "http://127.0.0.1:9999"
    assert kwargs["image_region_name"] == "Shared"         # a shared service type
    assert "compute_region_name" not in kwargs
    assert kwargs["verify"] is False


def test_no_credentials_means_no_cloud(tmp_path: Any) -> None:
    settings = CloudSettings.from_conf(_conf(tmp_path, "[DEFAULT]\n"))
    assert not settings.configured


def _http(status: int) -> exceptions.HttpException:
    return exceptions.HttpException(message=f"status {status}", http_status=status)


class Flaky:
    """Fails with the given errors, one per call, then answers "ok"."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self, conn: Any) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


def _clients(retries: int = 2) -> CloudClients:
    settings = CloudSettings(auth={"auth_url": "http://127.0.0.1:1/v3"},
                             retry_limit=retries, retry_initial_delay=0.0)
    return CloudClients(settings, connect=lambda s: object())


async def test_transient_errors_are_retried_up_to_the_limit() -> None:
    flaky = Flaky(_http(503), _http(409))
    assert await _clients().call(flaky) == "ok"
    assert flaky.calls == 3

    flaky = Flaky(_http(503), _http(502), _http(500))
    with pytest.raises(exceptions.HttpException):
        await _clients().call(flaky)
    assert flaky.calls == 3


async def test_other_errors_are_not_retried() -> None:
    flaky = Flaky(_http(400))
    with pytest.raises(exceptions.HttpException):
        await _clients().call(flaky)
    assert flaky.calls == 1


async def test_not_found_on_delete_counts_as_deleted() -> None:
    gone = Flaky(exceptions.NotFoundException(message="gone", http_status=404))
    assert await _clients().delete(gone) is False
    assert await _clients().delete(Flaky()) is True


def test_the_readmes_cloud_configuration_loads(tmp_path: Any) -> None:
    import re

    from tests.support import docs

    (example,) = re.findall(r"```ini cloud\n(.*?)```", docs.page("resources.md"), re.S)
    settings = CloudSettings.from_conf(_conf(tmp_path, example))
    assert settings.configured
    assert settings.auth["username"] == "demo"
    assert settings.auth["auth_url"] == "http://keystone.example.com:5000/v3"


async def test_an_unreachable_keystone_gives_an_empty_catalog(caplog: Any) -> None:
    """A real connection to a port nobody listens on: the catalog read fails with
    keystoneauth's connection error, which means "no services now", not a crash."""
    settings = CloudSettings(auth={"auth_url": "http://127.0.0.1:1/v3", "username": "u",
                                   "password": "p", "project_name": "p",
                                   "user_domain_name": "Default",
                                   "project_domain_name": "Default"},
                             retry_limit=0, retry_initial_delay=0.0)
    assert settings.configured
    assert await CloudClients(settings).service_types() == frozenset()
    assert "cannot read the service catalog" in caplog.text
