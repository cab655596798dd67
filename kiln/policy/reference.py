"""``kiln policy-reference``: the default rules as a commented policy.yaml, in the shape
``oslopolicy-sample-generator`` gives (a comment per rule, the operations it guards, its
scope, and the rule itself commented out so the file changes nothing until edited)."""

from __future__ import annotations

import json

from oslo_policy import policy

from kiln.policy import rules


def _quoted(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is one)."""
    return json.dumps(text)


def render() -> str:
    out: list[str] = []
    for default in rules.defaults():
        out.append(f"# {default.description}")
        if isinstance(default, policy.DocumentedRuleDefault):
            for operation in default.operations:
                out.append(f"# {operation['method']}  {operation['path']}")
        if default.scope_types:
            out.append(f"# Intended scope(s): {', '.join(default.scope_types)}")
        out.append(f"#{_quoted(default.name)}: {_quoted(default.check_str)}")
        deprecated = default.deprecated_rule
        if deprecated is not None:
            out.append(f"# DEPRECATED: {_quoted(deprecated.name)}: "
                       f"{_quoted(deprecated.check_str)} ({deprecated.deprecated_reason})")
        out.append("")
    return "\n".join(out)
