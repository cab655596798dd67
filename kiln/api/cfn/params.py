"""AWS query parameters as the CloudFormation clients send them.

Lists arrive flattened: ``Parameters.member.1.ParameterKey=k``,
``Parameters.member.1.ParameterValue=v``, ``Tags.member.2.Key=...``,
``NotificationARNs.member.1=arn``. Members are ordered by their number, of at most
:data:`MAX_INDEX_DIGITS` digits (a longer one is ``InvalidParameterValue``, not the
ValueError of ``int()`` past 4,300 digits).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from kiln.api.aws import errors

MAX_INDEX_DIGITS = 9


def _index(key: str, digits: str) -> int:
    if len(digits) > MAX_INDEX_DIGITS:
        shown = key if len(key) <= 64 else key[:64] + "..."
        raise errors.InvalidParameterValue(
            f"the member index in {shown!r} is not a number of at most "
            f"{MAX_INDEX_DIGITS} digits")
    return int(digits)


def member_list(params: Mapping[str, str], prefix: str) -> list[dict[str, str]]:
    """``Prefix.member.N.Field=value`` as one dict per N, in N's order."""
    pattern = re.compile(rf"{re.escape(prefix)}\.member\.(\d+)\.(.+)")
    members: dict[int, dict[str, str]] = {}
    for key, value in params.items():
        found = pattern.fullmatch(key)
        if found:
            members.setdefault(_index(key, found.group(1)), {})[found.group(2)] = value
    return [members[n] for n in sorted(members)]


def member_values(params: Mapping[str, str], prefix: str) -> list[str]:
    """``Prefix.member.N=value`` as a list, in N's order."""
    pattern = re.compile(rf"{re.escape(prefix)}\.member\.(\d+)")
    found = {_index(k, m.group(1)): v for k, v in params.items()
             if (m := pattern.fullmatch(k)) is not None}
    return [found[n] for n in sorted(found)]


def pairs(params: Mapping[str, str], prefix: str, key: str, value: str) -> dict[str, str]:
    """A member list of key/value pairs as a dict (members lacking either are skipped,
    as Heat skips them)."""
    return {m[key]: m[value] for m in member_list(params, prefix) if key in m and value in m}


def required(params: Mapping[str, str], name: str) -> str:
    try:
        return params[name]
    except KeyError:
        raise errors.MissingParameter(f"The request must contain the parameter {name}"
                                      ) from None


def boolean(params: Mapping[str, str], name: str) -> bool | None:
    if name not in params:
        return None
    text = params[name].strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise errors.InvalidParameterValue(f"{name} must be true or false, not {params[name]!r}")


def integer(params: Mapping[str, str], name: str, *, minimum: int = 0,
            maximum: int = 2147483647) -> int | None:
    if name not in params:
        return None
    try:
        number = int(params[name])
    except ValueError:
        raise errors.InvalidParameterValue(
            f"{name} must be an integer, not {params[name]!r}") from None
    if not minimum <= number <= maximum:
        raise errors.InvalidParameterValue(
            f"{name} must be between {minimum} and {maximum}")
    return number
