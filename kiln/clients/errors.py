"""What an OpenStack API error means to Kiln: retry it, treat it as gone, or fail.

openstacksdk raises ``HttpException`` subclasses carrying the HTTP status, and
keystoneauth/requests raise connection errors. This module sorts them:

- :func:`is_transient`: worth another try after a pause (a 409 conflict while the
  object is busy, 429/413 rate limits, any 5xx, a refused or reset connection, a
  timeout), as Heat's client plugins retry ``client_retry_limit`` times;
- :func:`is_not_found`: the object does not exist (a delete then counts as done);
- :func:`heat_error_name`: the name Heat's status reasons put in front of the message
  (its Python clients' exception names: ``BadRequest``, ``Conflict``, ``NotFound``,
  ``Forbidden``, ``OverLimit``, ...; for Neutron the error's own type when
  python-neutronclient has a class for it, ``IpAddressAlreadyAllocatedClient``);
- :func:`message_of`: the service's message as that client words it: Nova's, Cinder's
  and Keystone's clients add ``(HTTP 413) (Request-ID: req-...)``, Neutron's adds a line
  ``Neutron server returns request_ids: ['req-...']``.
"""

from __future__ import annotations

from typing import Any

_HEAT_NAMES = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    413: "OverLimit",
    415: "UnsupportedMediaType",
    429: "OverLimit",
    500: "InternalServerError",
    501: "HTTPNotImplemented",
    502: "BadGateway",
    503: "ServiceUnavailable",
    504: "GatewayTimeout",
}

#: python-neutronclient's names by status (anything else is NeutronClientException)
_NEUTRON_NAMES = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    409: "Conflict",
    500: "InternalServerError",
    503: "ServiceUnavailable",
}
#: Neutron error types python-neutronclient raises as ``<type>Client``
_NEUTRON_TYPED = frozenset(
    {
        "ExternalIpAddressExhausted",
        "HostNotCompatibleWithFixedIps",
        "InvalidIpForNetwork",
        "InvalidIpForSubnet",
        "IpAddressAlreadyAllocated",
        "IpAddressGenerationFailure",
        "IpAddressInUse",
        "MacAddressInUse",
        "NetworkInUse",
        "NetworkNotFound",
        "OverQuota",
        "PortInUse",
        "PortNotFound",
        "StateInvalid",
    }
)
#: services whose clients end a message with ``(HTTP <code>) (Request-ID: <id>)``
_HTTP_SUFFIXED = frozenset({"compute", "block-storage", "volumev3", "identity"})

_TRANSIENT_STATUS = frozenset({409, 413, 429, 500, 502, 503, 504})


def status_of(exc: BaseException) -> int | None:
    code = getattr(exc, "status_code", None)
    if code is None:
        response = getattr(exc, "response", None)
        code = getattr(response, "status_code", None)
    return int(code) if isinstance(code, int) else None


def _is_connection_error(exc: BaseException) -> bool:
    try:
        from keystoneauth1 import exceptions as ksa
    except ImportError:  # pragma: no cover - keystoneauth1 comes with openstacksdk
        return isinstance(exc, ConnectionError | TimeoutError)
    return isinstance(
        exc,
        ksa.ConnectFailure
        | ksa.ConnectionError
        | ksa.RetriableConnectionFailure
        | ksa.ServiceUnavailable
        | ConnectionError
        | TimeoutError,
    )


def cloud_errors() -> tuple[type[Exception], ...]:
    """What a call to the cloud raises when the cloud, not Kiln, is at fault: any
    keystoneauth or openstacksdk error (unreachable, refused credentials, an API error, a
    cloud configuration the SDK rejects) and the OS's own connection errors."""
    from keystoneauth1 import exceptions as ksa
    from openstack import exceptions as sdk

    return (ksa.ClientException, sdk.SDKException, OSError)


def is_transient(exc: BaseException) -> bool:
    code = status_of(exc)
    if code is not None:
        return code in _TRANSIENT_STATUS
    return _is_connection_error(exc)


def is_not_found(exc: BaseException) -> bool:
    from openstack import exceptions as sdk

    return isinstance(exc, sdk.NotFoundException) or status_of(exc) == 404


def is_over_limit(exc: BaseException) -> bool:
    return status_of(exc) in (403, 413) and "quota" in message_of(exc).lower()


def _neutron_type(exc: BaseException) -> str | None:
    response = getattr(exc, "response", None)
    try:
        body = response.json() if response is not None else None
    except ValueError:
        return None
    error = body.get("NeutronError") if isinstance(body, dict) else None
    kind = error.get("type") if isinstance(error, dict) else None
    return kind if isinstance(kind, str) else None


def heat_error_name(exc: BaseException) -> str:
    code = status_of(exc)
    if getattr(exc, "service_type", None) == "network":
        kind = _neutron_type(exc)
        if kind in _NEUTRON_TYPED:
            return f"{kind}Client"
        return _NEUTRON_NAMES.get(code or 0, "NeutronClientException")
    if code is not None:
        return _HEAT_NAMES.get(code, "ClientException")
    if _is_connection_error(exc):
        return "ConnectFailure"
    return type(exc).__name__


def message_of(exc: BaseException) -> str:
    """The service's own explanation (openstacksdk's ``details``) when it gave one, with
    the HTTP status and request ID where the service's Python client adds them."""
    text = _bare_message(exc)
    service = getattr(exc, "service_type", None)
    request_id = getattr(exc, "request_id", None)
    if service == "network" and request_id:
        return f"{text}\nNeutron server returns request_ids: {[request_id]!r}"
    code = status_of(exc)
    if service in _HTTP_SUFFIXED and code is not None:
        text = f"{text} (HTTP {code})"
        if request_id:
            text = f"{text} (Request-ID: {request_id})"
    return text


def _bare_message(exc: BaseException) -> str:
    details: Any = getattr(exc, "details", None)
    if isinstance(details, str) and details.strip():
        return details.strip()
    message = getattr(exc, "message", None)
    text = str(message) if message else str(exc)
    return text.strip() or type(exc).__name__
