"""Stack outputs: each resolves on its own, so one failure never hides the others."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kiln.errors import KilnError

NO_DESCRIPTION = "No description given"


@dataclass(frozen=True)
class OutputResult:
    """One output as Heat's API shows it: a value, or an error (``output_error``)."""

    name: str
    value: Any = None
    error: str | None = None
    description: str = NO_DESCRIPTION
    error_type: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Heat's output body (``output_key``, ``output_value``, ``description`` and,
        when resolving failed, ``output_error``)."""
        body: dict[str, Any] = {"output_key": self.name, "description": self.description,
                                "output_value": self.value}
        if self.error is not None:
            body["output_error"] = self.error
        return body


def error_text(exc: KilnError) -> str:
    """What Heat puts in ``output_error``: the reason without the template path."""
    detail = getattr(exc, "detail", None)
    return detail if isinstance(detail, str) else str(exc)
