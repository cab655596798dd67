"""Query-string and body-field conversions with Heat's acceptance rules and messages."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from starlette.datastructures import QueryParams

from kiln.api.faults import bad_request

ParamKind = Literal["single", "multi", "mixed"]


def extract_bool(name: str, value: Any) -> bool:
    text = str(value).lower()
    if text not in ("true", "false"):
        raise bad_request(f'Unrecognized value "{value}" for "{name}", acceptable values '
                          'are: true, false.')
    return text == "true"


def _is_int_like(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    try:
        return str(int(str(value))) == str(value)
    except (TypeError, ValueError):
        return False


#: The largest integer any query or body field may carry: every database column Kiln
#: stores one in (or compares one with) is at least a signed 32-bit integer, and a larger
#: value would reach the database driver as an overflow (a 500) instead of a 400.
MAX_INT = 2**31 - 1


def extract_int(name: str, value: Any, *, allow_zero: bool = True,
                allow_negative: bool = False) -> int | None:
    if value is None:
        return None
    if isinstance(value, str) and len(value) > 20:
        raise bad_request(f"Value '{value[:40]}...' is invalid for '{name}' which only "
                          f"accepts integers up to {MAX_INT}.")
    if not _is_int_like(value):
        raise bad_request(f"Only integer is acceptable by '{name}'.")
    result = int(value)
    if abs(result) > MAX_INT:
        raise bad_request(f"Value '{value}' is invalid for '{name}' which only accepts "
                          f"integers up to {MAX_INT}.")
    if result == 0 and not allow_zero:
        raise bad_request(f"Only non-zero integer is acceptable by '{name}'.")
    if result < 0 and not allow_negative:
        raise bad_request(f"Value '{value}' is invalid for '{name}' which only accepts "
                          "non-negative integer.")
    return result


def extract_tags(value: Any) -> list[str]:
    if not isinstance(value, str):
        raise bad_request("Tags must be a comma-separated string.", "AttributeError")
    tags = value.split(",")
    for tag in tags:
        if len(tag) > 80:
            raise bad_request(f'Invalid tag, "{tag}" is longer than 80 characters')
        if "\x00" in tag:   # stored in a text column, which cannot hold NUL on PostgreSQL
            raise bad_request(f'Invalid tag, "{tag}" contains a NUL character')
    return tags


def extract_template_type(value: str) -> str:
    kind = value.lower()
    if kind not in ("cfn", "hot"):
        raise bad_request(f'Template type is not supported: Invalid template type "{value}", '
                          "valid types are: cfn, hot.")
    return kind


def extract_sort_dir(value: str | None) -> str | None:
    if value is None:
        return None
    if value not in ("asc", "desc"):
        raise bad_request(f"Unknown sort direction '{value}', must be 'desc' or 'asc'",
                          "ValueError")
    return value


def allowed(params: QueryParams, kinds: Mapping[str, ParamKind]) -> dict[str, Any]:
    """Pick the listed keys; a repeated ``mixed`` key becomes a list, a lone one a string.

    Empty values count as absent, as in Heat.
    """
    out: dict[str, Any] = {}
    for key, kind in kinds.items():
        value: Any
        if kind == "single":
            value = params.get(key)
        else:
            values = params.getlist(key)
            value = values[0] if kind == "mixed" and len(values) == 1 else values
        if value:
            out[key] = value
    return out
