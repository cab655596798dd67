"""Where `kiln stack` sends its requests, from the openstack CLI's settings."""

from __future__ import annotations

import pytest

from kiln.client.connection import ConnectionError_, ConnectionOptions, connect


def endpoint_of(**options: str) -> str:
    api = connect(ConnectionOptions(**options))  # type: ignore[arg-type]
    try:
        return api.endpoint
    finally:
        api.close()


def test_an_endpoint_naming_its_project_is_used_as_given() -> None:
    assert endpoint_of(os_endpoint="http://127.0.0.1:8004/v1/demo/") == \
        "http://127.0.0.1:8004/v1/demo"


@pytest.mark.parametrize("root", ["http://127.0.0.1:8004", "http://127.0.0.1:8004/",
                                  "http://127.0.0.1:8004/v1"])
def test_a_root_endpoint_takes_the_project_id(root: str) -> None:
    assert endpoint_of(os_endpoint=root, os_project_id="p1") == "http://127.0.0.1:8004/v1/p1"


@pytest.mark.parametrize("template", ["%(tenant_id)s", "%(project_id)s", "$(tenant_id)s"])
def test_a_catalog_style_template_is_filled(template: str) -> None:
    assert endpoint_of(os_endpoint=f"http://h:8004/v1/{template}", os_project_id="p2") == \
        "http://h:8004/v1/p2"


def test_a_root_endpoint_without_project_is_refused() -> None:
    with pytest.raises(ConnectionError_, match="names no project"):
        endpoint_of(os_endpoint="http://127.0.0.1:8004")


def test_no_endpoint_and_no_auth_url_is_refused() -> None:
    with pytest.raises(ConnectionError_, match="--os-endpoint"):
        endpoint_of()


def test_password_auth_needs_a_user_and_password() -> None:
    with pytest.raises(ConnectionError_, match="--os-username"):
        endpoint_of(os_auth_url="http://127.0.0.1:1/v3")


def test_an_unknown_auth_type_is_refused() -> None:
    with pytest.raises(ConnectionError_, match="unsupported --os-auth-type 'saml'"):
        endpoint_of(os_auth_url="http://127.0.0.1:1/v3", os_auth_type="saml")
