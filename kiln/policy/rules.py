"""Heat 27's policy rules as oslo.policy defaults.

The rule names, check strings, scope types and operations are data taken from Heat
27.0.1 (heat27_policies.json), so an operator's policy.yaml written for Heat means the
same here. Each rule that replaced an older default (before Heat's Wallaby release, when
the reader/member/admin roles arrived) keeps that older rule as its deprecated form:
with ``[oslo_policy] enforce_new_defaults = false`` either form allows the call, as in
Heat.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from oslo_policy import policy

_DEPRECATED_REASON = ("Replaced by the reader/member/admin role defaults; "
                      "enforce_new_defaults = false still honours it.")
_DEPRECATED_SINCE = "W"


@cache
def heat_rules() -> tuple[dict[str, Any], ...]:
    text = resources.files("kiln.policy").joinpath("heat27_policies.json").read_text()
    return tuple(json.loads(text)["rules"])


def describe(rule: dict[str, Any]) -> str:
    """A one-line description: the API calls the rule guards, or what it is for."""
    if rule.get("operations"):
        return f"Who may call the API operations below ({rule['name']})."
    return f"Shared rule {rule['name']}, referenced by other rules."


def defaults(*, enforce_scope: bool = True) -> list[policy.RuleDefault]:
    """The defaults to register; without ``enforce_scope`` no rule checks token scope."""
    out: list[policy.RuleDefault] = []
    for rule in heat_rules():
        deprecated = None
        if "deprecated" in rule:
            old = rule["deprecated"]
            deprecated = policy.DeprecatedRule(
                name=old["name"], check_str=old["check_str"],
                deprecated_reason=_DEPRECATED_REASON, deprecated_since=_DEPRECATED_SINCE)
        scope = rule.get("scope_types") if enforce_scope else None
        if rule.get("operations"):
            out.append(policy.DocumentedRuleDefault(
                name=rule["name"], check_str=rule["check_str"], description=describe(rule),
                operations=rule["operations"], scope_types=scope,
                deprecated_rule=deprecated))
        else:
            out.append(policy.RuleDefault(
                name=rule["name"], check_str=rule["check_str"], description=describe(rule),
                scope_types=scope, deprecated_rule=deprecated))
    return out
