"""Hidden parameter values masked where a stack's readers would otherwise see them.

Stack show masks a hidden parameter by name (``Parameters.display``). Its value also
travels into resource properties, which events carry (``resource_properties``, the
native API's event show and CloudFormation's ``DescribeStackEvents``): there it is found
by value and replaced with the same ``******``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

#: what a hidden value shows as (Heat's, as ``Parameters.display`` shows it)
MASK = "******"
#: a hidden value at least this long is also masked inside longer text (a password
#: spliced into a script); a shorter one only where it is the whole value
MIN_EMBEDDED = 4


def hidden_values(environment: Mapping[str, Any], schemas: Mapping[str, Any]) -> list[Any]:
    """The values in force of the hidden parameters (user value, else parameter
    default, else the template's default), as stored in ``environment``."""
    params = environment.get("parameters") or {}
    defaults = environment.get("parameter_defaults") or {}
    found = []
    for name, schema in schemas.items():
        if not getattr(schema, "hidden", False):
            continue
        value = params.get(name, defaults.get(name, getattr(schema, "default", None)))
        if value is not None and value != "":
            found.append(value)
    return found


def mask(value: Any, hidden: Iterable[Any]) -> Any:
    """``value`` with every hidden value in it replaced by :data:`MASK`."""
    secrets = [h for h in hidden if h is not None and h != ""]
    if not secrets:
        return value
    texts = sorted({h if isinstance(h, str) else str(h) for h in secrets}, key=len,
                   reverse=True)
    return _mask(value, secrets, texts)


def _mask(value: Any, secrets: list[Any], texts: list[str]) -> Any:
    if isinstance(value, Mapping):
        return {k: _mask(v, secrets, texts) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_mask(v, secrets, texts) for v in value]
    if any(value == s for s in secrets) or (not isinstance(value, bool)
                                            and str(value) in texts):
        return MASK
    if isinstance(value, str):
        for text in texts:
            if len(text) >= MIN_EMBEDDED and text in value:
                value = value.replace(text, MASK)
    return value
