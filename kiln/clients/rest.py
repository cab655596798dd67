"""Raw REST calls through an openstacksdk connection's service proxies.

The cloud plugins send the same JSON bodies Heat's Python clients send and keep the
service's own JSON answers (which become the ``show`` attribute, as in Heat), so they
talk to each service through its openstacksdk proxy (keystoneauth session, catalog
lookup, version discovery, microversion header) rather than through openstacksdk's
resource objects, whose attribute names differ from the wire format.
"""

from __future__ import annotations

from typing import Any

#: service type -> attribute of openstack.connection.Connection
PROXIES = {
    "compute": "compute",
    "network": "network",
    "image": "image",
    "block-storage": "block_storage",
    "volumev3": "block_storage",
    "identity": "identity",
    "object-store": "object_store",
    "orchestration": "orchestration",
    "placement": "placement",
}


def proxy(conn: Any, service_type: str) -> Any:
    """The connection's openstacksdk proxy for *service_type* (a keystoneauth adapter)."""
    return getattr(conn, PROXIES[service_type])


def request(
    conn: Any,
    service_type: str,
    method: str,
    path: str,
    *,
    body: Any = None,
    microversion: str | None = None,
    headers: dict[str, str] | None = None,
) -> Any:
    """``method path`` on *service_type*; the decoded JSON answer (None if empty).
    An error status raises openstacksdk's HttpException subclass for it."""
    proxy = getattr(conn, PROXIES[service_type])
    kwargs: dict[str, Any] = {}
    if body is not None:
        kwargs["json"] = body
    if microversion is not None:
        kwargs["microversion"] = microversion
    if headers:
        kwargs["headers"] = headers
    response = proxy.request(path, method, raise_exc=False, **kwargs)
    _raise_for(response, service_type)
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        return response.text


def exchange(
    conn: Any,
    service_type: str,
    method: str,
    path: str,
    *,
    headers: dict[str, str] | None = None,
    data: bytes | None = None,
    decode: bool = True,
) -> tuple[dict[str, str], Any]:
    """``method path`` on *service_type* for the services that answer in headers (Swift's
    HEAD of a container): the response headers (lower-case names) and the decoded body
    (the bytes as sent when not *decode*: a Swift object is not always JSON). *data* is
    sent as the raw request body (a Swift object's content)."""
    proxy = getattr(conn, PROXIES[service_type])
    kwargs: dict[str, Any] = {} if data is None else {"data": data}
    response = proxy.request(path, method, raise_exc=False, headers=headers or {}, **kwargs)
    _raise_for(response, service_type)
    found = {k.lower(): v for k, v in response.headers.items()}
    if not decode:
        return found, response.content
    if not response.content:
        return found, None
    try:
        return found, response.json()
    except ValueError:
        return found, response.text


def _raise_for(response: Any, service_type: str) -> None:
    """openstacksdk's HttpException for an error status, marked with the service that
    answered (``service_type``): Heat's status reasons word an error the way that
    service's Python client does (kiln/clients/errors.py)."""
    from openstack import exceptions

    try:
        exceptions.raise_from_response(response)
    except exceptions.HttpException as exc:
        exc.service_type = service_type  # type: ignore[attr-defined]
        raise


def endpoint(conn: Any, service_type: str) -> str:
    """The catalog URL Kiln reaches *service_type* at (project substituted)."""
    return str(getattr(conn, PROXIES[service_type]).get_endpoint())
