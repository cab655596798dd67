"""The cloud-free custom constraints Heat ships, registered under Heat's names.

``ip_addr``, ``ip_or_cidr``, ``net_cidr``, ``mac_addr``, ``dns_name``, ``dns_domain``,
``rel_dns_name``, ``iso_8601``, ``expiration``, ``timezone``, ``json_string`` and
``cron_expression`` need no
cloud, so they live in the template layer and work for parameters and properties alike.
Constraints that ask a cloud (``nova.flavor``, ``neutron.network``...) are registered by
the plugins that own the clients. Failure texts follow Heat's:
``Error validating value 'x': <reason>`` (or without the reason where Heat has none).
"""

from __future__ import annotations

import ipaddress
import json
import re
import zoneinfo
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from kiln.template.constraints import register_custom_constraint

FQDN_MAX_LEN = 255
_LABEL = re.compile(r"[a-z0-9-]{1,63}$")
_MAC = re.compile(r"^([0-9A-Fa-f]{2}([-:]?)[0-9A-Fa-f]{2}(\2[0-9A-Fa-f]{2}){4}|"
                  r"[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4})$")

#: a check returns None when the value is fine, else the reason ("" for none)
Check = Callable[[Any], "str | None"]


class PureConstraint:
    """A custom constraint decided by a pure function of the value."""

    def __init__(self, check: Check) -> None:
        self._check = check

    def validate(self, value: Any, context: Any) -> bool:
        return self._check(value) is None

    def error(self, value: Any) -> str:
        reason = self._check(value)
        if reason:
            return f"Error validating value '{value}': {reason}"
        return f"Error validating value '{value}'"


def _ip(value: Any) -> str | None:
    if not isinstance(value, str):
        return "Invalid IP address"
    return None if _ip_message(value) is None else "Invalid IP address"


def _ip_message(data: str) -> str | None:
    try:
        ip = ipaddress.ip_address(data)
    except ValueError:
        return f"'{data}' is not a valid IP address"
    if ip.version == 4 and str(ip) != data:
        return f"'{data}' is not an accepted IP address, '{ip}' is recommended"
    return None


def _subnet_message(data: str) -> str | None:
    try:
        net = ipaddress.ip_interface(data)
    except ValueError:
        return f"'{data}' is not a valid IP subnet"
    if "/" not in data or (net.version == 4 and str(net) != data):
        return f"'{data}' is not a valid IP subnet"
    return None


def _cidr(value: Any) -> str | None:
    """Heat parses the value with netaddr first (its error: ``Invalid net cidr <why> ``),
    then asks neutron's subnet check (``'...' is not a valid IP subnet``)."""
    if not isinstance(value, str):
        return f"Invalid net cidr {value!r} "
    unparsed = _network_parse_error(value)
    if unparsed is not None:
        return f"Invalid net cidr {unparsed} "
    return _subnet_message(value)


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _network_parse_error(data: str) -> str | None:
    """Why netaddr's ``IPNetwork(data, implicit_prefix=True)`` refuses ``data``, as far
    as the Heat 27 peer showed it: a partial IPv4 address is padded with zeros (``10/8``
    parses, ``a/24`` fails as ``a.0.0.0/24``), the prefix is an integer in range or a
    netmask, and a second ``/`` is refused with netaddr's own words."""
    addr, slash, prefix = data.partition("/")
    if not _is_ip(addr):
        parts = addr.split(".")
        if ":" in addr or len(parts) >= 4:
            return f"invalid IPNetwork {data}"
        addr = ".".join(parts + ["0"] * (4 - len(parts)))
        if not _is_ip(addr):
            return f"invalid IPNetwork {addr}{slash}{prefix}" if slash \
                else f"invalid IPNetwork {data}"
    if not slash:
        return None
    try:
        length = int(prefix)
    except ValueError:
        if "/" in prefix:
            return ("IPAddress() does not support netmasks or subnet prefixes! "
                    "See documentation for details.")
        try:
            ipaddress.ip_interface(f"{addr}/{prefix}")
        except ValueError:
            return f"invalid IPNetwork {addr}/{prefix}"
        return None
    if not 0 <= length <= (128 if ":" in addr else 32):
        return f"invalid IPNetwork {addr}/{prefix}"
    return None


def _ip_or_cidr(value: Any) -> str | None:
    if not isinstance(value, str):
        return f"{value} is not a valid IP or CIDR"
    return _subnet_message(value) if "/" in value else _ip_message(value)


def _mac(value: Any) -> str | None:
    ok = isinstance(value, str) and _MAC.match(value) is not None
    return None if ok else "Invalid MAC address."


def _dns_reason(data: str) -> str | None:
    if not data:
        return None
    trimmed = data[:-1] if data.endswith(".") else data
    if len(trimmed) > FQDN_MAX_LEN:
        return f"'{trimmed}' exceeds the {FQDN_MAX_LEN} character FQDN limit"
    names = trimmed.split(".")
    for name in names:
        if not name:
            return "Encountered an empty component."
        if name.startswith("-") or name.endswith("-"):
            return f"Name '{name}' must not start or end with a hyphen."
        if not _LABEL.match(name):
            return (f"Name '{name}' must be 1-63 characters long, each of which can only "
                    "be alphanumeric or a hyphen.")
    if data.endswith(".") and len(names) > 1 and names[-1].isdigit():
        return f"TLD '{names[-1]}' must not be all numeric."
    return None


def _dns_name(value: Any) -> str | None:
    if not isinstance(value, str):
        return f"'{value}' not in valid format. Reason: not a string"
    reason = _dns_reason(value)
    return None if reason is None else f"'{value}' not in valid format. Reason: {reason}"


def _rel_dns_name(value: Any) -> str | None:
    if not value:
        return None
    if isinstance(value, str) and value.endswith("."):
        return f"'{value}' is a FQDN. It should be a relative domain name."
    if isinstance(value, str) and len(value) > FQDN_MAX_LEN - 3:
        return (f"'{value}' contains '{len(value)}' characters. Adding a domain name will "
                f"cause it to exceed the maximum length of a FQDN of '{FQDN_MAX_LEN}'.")
    return _dns_name(value)


def _dns_domain(value: Any) -> str | None:
    if not value:
        return None
    reason = _dns_name(value)
    if reason is not None:
        return reason
    return None if value.endswith(".") else f"'{value}' must end with '.'."


def _parse_iso(value: str) -> datetime:
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    return datetime.fromisoformat(text)


def _iso_8601(value: Any) -> str | None:
    try:
        _parse_iso(value)
    except (ValueError, TypeError, AttributeError):
        return ""
    return None


#: a date, perhaps with a time: what iso8601 tries to read before it gives up on the shape
_DATE_SHAPE = re.compile(r"\d{4}(-?\d{1,2}(-?\d{1,2}([ T]\d{2}\S*)?)?)?$")


def _expiration(value: Any) -> str | None:
    if not value:
        return None
    try:
        when = _parse_iso(value)
    except (ValueError, TypeError, AttributeError) as exc:
        # Heat's parser (iso8601) names a string that has no date's shape so; a value
        # shaped like a date but impossible (month 13) fails with the calendar's words
        shaped = isinstance(value, str) and _DATE_SHAPE.match(value.strip())
        reason = exc if shaped or not isinstance(value, str) \
            else f"Unable to parse date string {value.strip()!r}"
        return f"Expiration {value} is invalid: {reason}"
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    if when > datetime.now(UTC):
        return None
    return f"Expiration {value} is invalid: Expiration time is out of date."


def _timezone(value: Any) -> str | None:
    if not value:
        return None
    try:
        zoneinfo.ZoneInfo(value)
    except (ValueError, TypeError, zoneinfo.ZoneInfoNotFoundError) as exc:
        return f"Invalid timezone: {exc}"
    return None


def _cron_expression(value: Any) -> str | None:
    if not value:
        return None
    import croniter  # on first use: a cron constraint is rare, the module is not small

    try:
        croniter.croniter(value)
    except Exception as exc:  # croniter raises several types for bad input  # noqa: BLE001
        return f"Invalid CRON expression: {exc}"
    return None


def _json_string(value: Any) -> str | None:
    if not value:
        return None
    try:
        json.loads(value)
    except (ValueError, TypeError) as exc:
        return f"JSON string {value} is invalid: {exc}"
    return None


BUILTIN: dict[str, Check] = {
    "ip_addr": _ip,
    "ip_or_cidr": _ip_or_cidr,
    "net_cidr": _cidr,
    "mac_addr": _mac,
    "dns_name": _dns_name,
    "rel_dns_name": _rel_dns_name,
    "dns_domain": _dns_domain,
    "iso_8601": _iso_8601,
    "expiration": _expiration,
    "timezone": _timezone,
    "json_string": _json_string,
    "cron_expression": _cron_expression,
}


def register_builtin() -> None:
    for name, check in BUILTIN.items():
        register_custom_constraint(name, PureConstraint(check))


register_builtin()
