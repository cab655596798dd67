"""Heat's CFN response shapes: ``<{Action}Response><{Action}Result>...`` in XML, or the
same tree as JSON when the request says ``ContentType=JSON`` (heat-cfntools asks so).

The XML follows Heat's serializer: a dict is one element per key, a list one ``member``
element per item, ``TemplateBody`` and ``Metadata`` are JSON text, no namespace (the
os-collect-config cfn collector finds elements by bare name). Where Heat writes text
boto3 cannot read, Kiln writes what AWS writes (and says so in docs/signals.md): an absent
time is left out rather than written ``None``, booleans are ``true``/``false``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from xml.sax.saxutils import escape

from starlette.responses import Response

#: Values written as JSON text inside the XML (Heat's ``JSON_ONLY_KEYS``).
JSON_TEXT_KEYS = frozenset({"TemplateBody", "Metadata"})


def envelope(action: str, result: Any) -> dict[str, Any]:
    return {f"{action}Response": {f"{action}Result": result}}


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _element(name: str, value: Any, out: list[str]) -> None:
    if value is None:
        return
    if name in JSON_TEXT_KEYS:
        text = value if isinstance(value, str) else json.dumps(value)
        out.append(f"<{name}>{escape(text)}</{name}>" if text else f"<{name}/>")
        return
    if isinstance(value, Mapping):
        inner: list[str] = []
        for key, item in value.items():
            _element(str(key), item, inner)
    elif isinstance(value, list | tuple):
        inner = []
        for item in value:
            _element("member", item, inner)
    else:
        text = _text(value)
        out.append(f"<{name}>{escape(text)}</{name}>" if text else f"<{name}/>")
        return
    out.append(f"<{name}>{''.join(inner)}</{name}>" if inner else f"<{name}/>")


def to_xml(tree: Mapping[str, Any]) -> bytes:
    """The one-rooted ``tree`` as XML."""
    out: list[str] = []
    for name, value in tree.items():
        _element(name, value, out)
    return "".join(out).encode()


def _json_ready(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _json_ready(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_json_ready(v) for v in value]
    return value


def response(tree: Mapping[str, Any], *, as_json: bool, status: int = 200) -> Response:
    if as_json:
        return Response(json.dumps(_json_ready(tree)).encode(), status,
                        media_type="application/json")
    return Response(to_xml(tree), status, media_type="application/xml")
