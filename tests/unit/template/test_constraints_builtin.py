"""Heat's cloud-free custom constraints; the failure texts are Heat 27's answers for the
same parameter values (stack preview)."""

from __future__ import annotations

import pytest

from kiln import errors
from kiln.template.definitions import StackIdentity
from kiln.template.parameters import bind_parameters, parse_parameters_section


def check(constraint: str, value: str) -> str | None:
    schemas = parse_parameters_section({"a": {"type": "string", "constraints": [
        {"custom_constraint": constraint}]}}, "hot")
    try:
        bind_parameters(schemas, {"a": value}, None, StackIdentity("s", "i", "p"))
    except errors.StackValidationFailed as exc:
        return exc.message
    return None


@pytest.mark.parametrize(("constraint", "value", "reason"), [
    ("ip_addr", "1.2.3", "Invalid IP address"),
    ("ip_addr", "1.2.3.4", None),
    ("ip_addr", "::1", None),
    ("net_cidr", "10.0.0.0", "'10.0.0.0' is not a valid IP subnet"),
    ("net_cidr", "10.0.0.0/24", None),
    # netaddr's refusals come first, in its words (Heat 27 peer, issue 9)
    ("net_cidr", "10.0.0.0/33", "Invalid net cidr invalid IPNetwork 10.0.0.0/33 "),
    ("net_cidr", "x", "Invalid net cidr invalid IPNetwork x "),
    ("net_cidr", "a/24", "Invalid net cidr invalid IPNetwork a.0.0.0/24 "),
    ("net_cidr", "::1/129", "Invalid net cidr invalid IPNetwork ::1/129 "),
    ("net_cidr", "10.0.0.0/8/1", "Invalid net cidr IPAddress() does not support netmasks or "
                                 "subnet prefixes! See documentation for details. "),
    ("net_cidr", "1.2.3/24", "'1.2.3/24' is not a valid IP subnet"),
    ("net_cidr", "10.0.0.0/255.255.255.0", "'10.0.0.0/255.255.255.0' is not a valid IP "
                                           "subnet"),
    ("net_cidr", "10.0.0.1/24", None),
    ("ip_or_cidr", "1.2.3.4/33", "'1.2.3.4/33' is not a valid IP subnet"),
    ("ip_or_cidr", "1.2.3.4", None),
    ("mac_addr", "zz", "Invalid MAC address."),
    ("mac_addr", "fa:16:3e:00:00:01", None),
    ("dns_domain", "example.com", "'example.com' must end with '.'."),
    ("dns_domain", "example.com.", None),
    ("dns_name", "-bad", "'-bad' not in valid format. Reason: Name '-bad' must not start "
                         "or end with a hyphen."),
    ("rel_dns_name", "a.b.", "'a.b.' is a FQDN. It should be a relative domain name."),
    ("timezone", "Mars/Base", "Invalid timezone: 'No time zone found with key Mars/Base'"),
    ("timezone", "Europe/Paris", None),
    ("iso_8601", "yesterday", ""),
    ("iso_8601", "2024-01-02T03:04:05Z", None),
    ("json_string", "{x", "JSON string {x is invalid: Expecting property name enclosed in "
                          "double quotes: line 1 column 2 (char 1)"),
    ("expiration", "2001-01-01T00:00:00Z", "Expiration 2001-01-01T00:00:00Z is invalid: "
                                           "Expiration time is out of date."),
    ("expiration", "2999-01-01T00:00:00Z", None),
    ("expiration", "x", "Expiration x is invalid: Unable to parse date string 'x'"),
    ("expiration", "2020-13-01T00:00:00Z", "Expiration 2020-13-01T00:00:00Z is invalid: "
                                           "month must be in 1..12"),
    # texts observed on the live Heat 27 (croniter 7)
    ("cron_expression", "bad cron", "Invalid CRON expression: Exactly 5, 6 or 7 columns has "
                                    "to be specified for iterator expression."),
    ("cron_expression", "61 * * * *", "Invalid CRON expression: [61 * * * *] is not "
                                      "acceptable, out of range"),
    ("cron_expression", "*/5 * * * *", None),
])
def test_builtin(constraint: str, value: str, reason: str | None) -> None:
    got = check(constraint, value)
    if reason is None:
        assert got is None
    elif reason == "":
        assert got == f"Parameter 'a' is invalid: Error validating value '{value}'"
    else:
        assert got == f"Parameter 'a' is invalid: Error validating value '{value}': {reason}"
