"""The published OpenAPI description covers every route the app serves, method by method."""

from __future__ import annotations

from importlib import resources
from typing import Any

import yaml
from starlette.routing import Route

from kiln.api.app import create_app
from kiln.conf import CONF


def _spec() -> dict[str, Any]:
    text = resources.files("kiln.api").joinpath("openapi.yaml").read_text()
    spec: dict[str, Any] = yaml.safe_load(text)
    return spec


def _spec_path(route_path: str) -> str:
    """Starlette's ``{name:convertor}`` is OpenAPI's ``{name}``."""
    out = []
    for part in route_path.split("/"):
        if part.startswith("{") and ":" in part:
            part = part.split(":", 1)[0] + "}"
        out.append(part)
    return "/".join(out)


def test_every_served_route_and_method_is_described() -> None:
    spec = _spec()
    app = create_app(None, CONF)
    missing = []
    for route in app.routes:
        assert isinstance(route, Route)
        if route.path in ("/versions", "/openapi.yaml") or "other_version" in route.path \
                or route.path.startswith("/dashboard/"):  # the dashboard's files, not API
            continue
        path = _spec_path(route.path).replace("{subpath}", "{subpath}")
        described = spec["paths"].get(path, {})
        for method in route.methods or ():
            if method not in ("HEAD", "OPTIONS") and method.lower() not in described:
                missing.append(f"{method} {path}")
    assert missing == []


def test_every_described_operation_is_served() -> None:
    spec = _spec()
    app = create_app(None, CONF)
    served = {(_spec_path(r.path), m.lower()) for r in app.routes if isinstance(r, Route)
              for m in (r.methods or ())}
    extra = [f"{m} {p}" for p, ops in spec["paths"].items() for m in ops
             if (p, m) not in served]
    assert extra == []


def test_operations_have_unique_ids_and_fault_schema() -> None:
    spec = _spec()
    ids = [op["operationId"] for ops in spec["paths"].values() for op in ops.values()]
    assert len(ids) == len(set(ids))
    fault = spec["components"]["schemas"]["Fault"]
    assert fault["required"] == ["code", "title", "explanation", "error"]
