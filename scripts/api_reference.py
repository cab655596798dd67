"""Write docs/api-reference.md, the API reference page, from kiln/api/openapi.yaml.

The OpenAPI description is what ``kiln serve`` publishes at ``/openapi.yaml`` and what the
schemathesis run checks the server against; the page is its Markdown rendering, so the
documentation cannot drift from either. ``--check`` only compares (a unit test runs it):

    python scripts/api_reference.py           # rewrite docs/api-reference.md
    python scripts/api_reference.py --check   # exit 1 when the page is stale
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "kiln" / "api" / "openapi.yaml"
PAGE = ROOT / "docs" / "api-reference.md"
METHODS = ("get", "put", "post", "patch", "delete", "head")


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[1]


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _type(schema: dict[str, Any] | None) -> str:
    """A schema in a few words; a named schema links to its section below."""
    if not schema:
        return "any"
    if "$ref" in schema:
        name = _ref_name(schema["$ref"])
        return f"[{name}](#schema-{name.lower()})"
    for key in ("oneOf", "anyOf", "allOf"):
        if key in schema:
            joiner = " and " if key == "allOf" else " or "
            return joiner.join(_type(s) for s in schema[key])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {_type(schema.get('items'))}"
    if "enum" in schema:
        return f"{kind}: " + ", ".join(f"`{v}`" for v in schema["enum"])
    if kind == "object" and "properties" in schema:
        return "object {" + ", ".join(f"`{k}`" for k in schema["properties"]) + "}"
    return str(kind)


def _resolve(spec: dict[str, Any], item: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in item:
        section, name = item["$ref"].split("/")[-2:]
        item = spec["components"][section][name]
    return item


def _body(content: dict[str, Any] | None) -> str:
    if not content:
        return ""
    return "; ".join(f"`{media}`: {_type(c.get('schema'))}" for media, c in content.items())


def _operation(spec: dict[str, Any], path: str, method: str, op: dict[str, Any],
               shared: list[dict[str, Any]]) -> list[str]:
    out = [f"### `{method.upper()} {path}`", ""]
    if op.get("summary"):
        out += [op["summary"], ""]
    if op.get("description"):
        out += [" ".join(op["description"].split()), ""]
    params = [_resolve(spec, p) for p in [*shared, *op.get("parameters", [])]]
    if params:
        out += ["| Parameter | In | Required | Type | Meaning |", "|---|---|---|---|---|"]
        out += [f"| `{p['name']}` | {p['in']} | {'yes' if p.get('required') else 'no'} | "
                f"{_cell(_type(p.get('schema')))} | {_cell(p.get('description', ''))} |"
                for p in params]
        out.append("")
    if "requestBody" in op:
        body = _resolve(spec, op["requestBody"])
        required = " (required)" if body.get("required") else ""
        out += [f"Request body{required}: {_body(body.get('content'))}", ""]
    out += ["| Status | Meaning | Body |", "|---|---|---|"]
    for status, response in op.get("responses", {}).items():
        response = _resolve(spec, response)
        out.append(f"| {status} | {_cell(response.get('description', ''))} | "
                   f"{_cell(_body(response.get('content')))} |")
    return [*out, ""]


def _schema(name: str, schema: dict[str, Any]) -> list[str]:
    out = [f"### Schema: {name}", ""]
    if schema.get("description"):
        out += [" ".join(schema["description"].split()), ""]
    props = schema.get("properties")
    if not props:
        return [*out, f"Type: {_type({k: v for k, v in schema.items() if k != 'description'})}",
                ""]
    required = set(schema.get("required", []))
    out += ["| Field | Type | Required | Meaning |", "|---|---|---|---|"]
    out += [f"| `{field}` | {_cell(_type(sub))} | {'yes' if field in required else 'no'} | "
            f"{_cell(sub.get('description', ''))} |" for field, sub in props.items()]
    return [*out, ""]


def render(spec: dict[str, Any]) -> str:
    info = spec["info"]
    out = ["# API reference", "",
           "<!-- generated from kiln/api/openapi.yaml by scripts/api_reference.py: "
           "edit those, not this page -->", "",
           f"{info['title']}, version {info['version']}, generated from "
           "`kiln/api/openapi.yaml` (served by `kiln serve` at `/openapi.yaml`). What the "
           "routes do, and where Kiln differs from Heat: [API coverage](api.md).", "",
           " ".join(info.get("description", "").split()), ""]
    by_tag: dict[str, list[tuple[str, str, dict[str, Any], list[dict[str, Any]]]]] = {}
    for path, item in spec["paths"].items():
        shared = item.get("parameters", [])
        for method in METHODS:
            if method in item:
                op = item[method]
                tag = (op.get("tags") or ["other"])[0]
                by_tag.setdefault(tag, []).append((path, method, op, shared))
    for tag, ops in by_tag.items():
        out += [f"## {tag.capitalize()}", ""]
        for path, method, op, shared in ops:
            out += _operation(spec, path, method, op, shared)
    out += ["## Schemas", ""]
    for name, schema in spec["components"].get("schemas", {}).items():
        out += _schema(name, schema)
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare only; exit 1 when docs/api-reference.md is stale")
    args = parser.parse_args(argv)
    text = render(yaml.safe_load(SPEC.read_text()))
    if args.check:
        if not PAGE.exists() or PAGE.read_text() != text:
            print("docs/api-reference.md is stale: run python scripts/api_reference.py",
                  file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
