"""Stack outputs in Heat's shape, resolved once at the end of each action and stored.

Storing them means GET /stacks/{id} needs no plugin, template or resource to answer.
"""

from __future__ import annotations

import json
from typing import Any

from kiln.engine.model.live_stack import LiveStack

NO_DESCRIPTION = "No description given"


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return str(value)


def resolve_all(stack: LiveStack) -> list[dict[str, Any]]:
    """``[{"output_key", "description", "output_value" | "output_error"}]``."""
    if stack.bound is None:
        return []
    try:
        results = stack.bound.outputs()
    except Exception as exc:  # an output section that cannot resolve at all
        return [{"output_key": "", "description": NO_DESCRIPTION, "output_value": None,
                 "output_error": str(exc)}]
    out: list[dict[str, Any]] = []
    for key, res in results.items():
        item: dict[str, Any] = {"output_key": key,
                                "description": getattr(res, "description", None)
                                or NO_DESCRIPTION}
        error = getattr(res, "error", None)
        if error:
            item["output_value"] = None
            item["output_error"] = str(error)
        else:
            item["output_value"] = _jsonable(getattr(res, "value", None))
        out.append(item)
    return out
