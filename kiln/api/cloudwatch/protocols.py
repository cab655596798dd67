"""The three wire formats AWS clients speak to CloudWatch, reduced to one shape.

- **query** (boto 2, heat-cfntools' cfn-push-stats, older botocore): form parameters
  ``Action=PutMetricData&MetricData.member.1.MetricName=...``, answers in XML
  (``<PutMetricDataResponse xmlns=...>``), errors in AWS's ``<ErrorResponse>``.
- **json** (``X-Amz-Target: GraniteServiceVersion20100801.<Action>``, awsJson1.0).
- **rpc-v2-cbor** (``/service/GraniteServiceVersion20100801/operation/<Action>``, what
  botocore 1.40+ chooses for CloudWatch): CBOR bodies.

Each is decoded to ``(action, params)`` where params have the JSON shape (lists as
lists, numbers possibly still strings from the query), and each answer is a plain dict
the handlers return, encoded back in the request's format. Timestamps travel inside
as epoch seconds (floats); the engine's CloudWatch service
(:mod:`kiln.engine.service.cloudwatch`) reads every client's form of them.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape

from starlette.responses import Response

TARGET_PREFIX = "GraniteServiceVersion20100801"
XMLNS = "http://monitoring.amazonaws.com/doc/2010-08-01/"
CBOR_TYPE = "application/cbor"
JSON_TYPE = "application/x-amz-json-1.0"
_CBOR_PATH = re.compile(rf"/service/{TARGET_PREFIX}/operation/(?P<action>[A-Za-z]+)$")
#: answer keys whose values are times (encoded per protocol)
TIME_KEYS = frozenset({"Timestamp", "StateUpdatedTimestamp",
                       "AlarmConfigurationUpdatedTimestamp", "StateTransitionedTimestamp"})


#: Bounds on what one request may make the decoder build (issue 22: a key of 10,000 dots
#: recursed past Python's stack, a 5,000-digit member index overflowed int(), JSON 100,000
#: deep did both). CloudWatch's deepest input is 6 levels (MetricData.member.N.Dimensions
#: .member.M.Name); its longest list, 1,000 members.
MAX_DEPTH = 16
MAX_KEY_CHARS = 256
MAX_INDEX_DIGITS = 9


class BadRequest(ValueError):
    """The body cannot be decoded in the protocol it claims, or exceeds the bounds."""


@dataclass(frozen=True)
class Decoded:
    protocol: str          # "query" | "json" | "cbor"
    action: str
    params: dict[str, Any]


def action_of(path: str, headers: Mapping[str, str], params: Mapping[str, str]) -> str:
    """The action a request names, read as :func:`decode` reads it but without
    decoding its body (a rate limit is checked before that work)."""
    found = _CBOR_PATH.search(path)
    if found is not None:
        return str(found["action"])
    target = headers.get("x-amz-target", "")
    if target.startswith(TARGET_PREFIX + "."):
        return target.split(".", 1)[1]
    return params.get("Action", "")


def decode(path: str, headers: Mapping[str, str], body: bytes,
           params: Mapping[str, str]) -> Decoded:
    target = headers.get("x-amz-target", "")
    found = _CBOR_PATH.search(path)
    if found is not None or headers.get("smithy-protocol") == "rpc-v2-cbor":
        if found is None:
            raise BadRequest("rpc-v2-cbor request without an operation in its path")
        return Decoded("cbor", found["action"], _cbor_body(body))
    if target.startswith(TARGET_PREFIX + "."):
        return Decoded("json", target.split(".", 1)[1], _json_body(body))
    return Decoded("query", params.get("Action", ""), unflatten(params))


def _cbor_body(body: bytes) -> dict[str, Any]:
    if not body:
        return {}
    import cbor2

    try:
        value = cbor2.loads(body)
    except (cbor2.CBORDecodeError, RecursionError, ValueError, OverflowError,
            TypeError) as exc:
        raise BadRequest(f"the CBOR body cannot be read: {str(exc)[:200]}") from None
    if not isinstance(value, dict):
        raise BadRequest("the CBOR body is not a map")
    _check_tree(value, "CBOR")
    return value


def _json_body(body: bytes) -> dict[str, Any]:
    if not body:
        return {}
    try:
        value = json.loads(body)
    except RecursionError:
        raise BadRequest(f"the JSON body is nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:
        raise BadRequest(f"the JSON body cannot be read: {str(exc)[:200]}") from None
    if not isinstance(value, dict):
        raise BadRequest("the JSON body is not an object")
    _check_tree(value, "JSON")
    return value


def _check_tree(value: Any, what: str) -> None:
    """Refuse a decoded body nested deeper than :data:`MAX_DEPTH`, or with a map key that
    is not a string (CBOR allows any): the handlers read every part of it by name."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise BadRequest(f"the {what} body is nested deeper than {MAX_DEPTH} levels")
        if isinstance(node, dict):
            for key, child in node.items():
                if not isinstance(key, str) or len(key) > MAX_KEY_CHARS:
                    raise BadRequest(f"the {what} body has a key that is not a name")
                if isinstance(child, (dict, list)):
                    stack.append((child, depth + 1))
        elif isinstance(node, list):
            stack.extend((child, depth + 1) for child in node
                         if isinstance(child, (dict, list)))


_SKIP = frozenset({"Action", "Version", "AWSAccessKeyId", "Signature", "SignatureMethod",
                   "SignatureVersion", "Timestamp", "Expires", "SecurityToken"})


def unflatten(params: Mapping[str, str]) -> dict[str, Any]:
    """``A.member.2.B=x`` → ``{"A": [.., {"B": "x"}]}``: members are kept in index
    order (a gap in the numbering leaves no hole). Keys longer than
    :data:`MAX_KEY_CHARS`, deeper than :data:`MAX_DEPTH` parts or with a member index of
    more than :data:`MAX_INDEX_DIGITS` digits are refused (:class:`BadRequest`)."""
    tree: dict[Any, Any] = {}
    for key, value in params.items():
        if key in _SKIP or key.startswith("X-Amz-"):
            continue
        raw = _key_parts(key)
        path: list[Any] = []
        for i, part in enumerate(raw):
            if part == "member" and i + 1 < len(raw) and raw[i + 1].isdigit():
                continue
            path.append(int(part) if part.isdigit() and i and raw[i - 1] == "member"
                        else part)
        node = tree
        for step in path[:-1]:
            child = node.get(step)
            if not isinstance(child, dict):
                child = node[step] = {}
            node = child
        node.setdefault(path[-1], value)
    result: dict[str, Any] = _lists(tree)
    return result


def _key_parts(key: str) -> list[str]:
    shown = key if len(key) <= 64 else key[:64] + "..."
    if len(key) > MAX_KEY_CHARS:
        raise BadRequest(f"the parameter name {shown!r} is longer than {MAX_KEY_CHARS} "
                         "characters")
    raw = key.split(".")
    if len(raw) > MAX_DEPTH:
        raise BadRequest(f"the parameter name {shown!r} has more than {MAX_DEPTH} parts")
    for i, part in enumerate(raw):
        if i and raw[i - 1] == "member" and part.isdigit() and (
                len(part) > MAX_INDEX_DIGITS or not part.isascii()):
            raise BadRequest(f"the member index in {shown!r} is not a number of at most "
                             f"{MAX_INDEX_DIGITS} digits")
    return raw


def _lists(node: Any) -> Any:
    if isinstance(node, dict):
        if node and all(isinstance(k, int) for k in node):
            return [_lists(node[k]) for k in sorted(node)]
        return {k: _lists(v) for k, v in node.items()}
    return node


# -- answers --------------------------------------------------------------------------------

def _iso(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _xml(value: Any, key: str = "") -> str:
    if isinstance(value, Mapping):
        return "".join(f"<{k}>{_xml(v, k)}</{k}>" for k, v in value.items() if v is not None)
    if isinstance(value, Sequence) and not isinstance(value, str):
        return "".join(f"<member>{_xml(v)}</member>" for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if key in TIME_KEYS and isinstance(value, (int, float)):
        return _iso(float(value))
    if isinstance(value, float):
        return repr(value)
    return escape(str(value))


def _typed(value: Any, key: str, *, cbor: bool) -> Any:
    if isinstance(value, Mapping):
        return {k: _typed(v, k, cbor=cbor) for k, v in value.items() if v is not None}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_typed(v, key, cbor=cbor) for v in value]
    if key in TIME_KEYS and isinstance(value, (int, float)) and not isinstance(value, bool):
        return dt.datetime.fromtimestamp(float(value), dt.UTC) if cbor else float(value)
    return value


def answer(decoded: Decoded, result: Mapping[str, Any] | None, request_id: str) -> Response:
    headers = {"x-amzn-requestid": request_id}
    if decoded.protocol == "cbor":
        import cbor2

        body = cbor2.dumps(_typed(result or {}, "", cbor=True), datetime_as_timestamp=True)
        return Response(body, 200, headers={**headers, "smithy-protocol": "rpc-v2-cbor"},
                        media_type=CBOR_TYPE)
    if decoded.protocol == "json":
        return Response(json.dumps(_typed(result or {}, "", cbor=False)), 200,
                        headers=headers, media_type=JSON_TYPE)
    action = decoded.action
    inner = f"<{action}Result>{_xml(result)}</{action}Result>" if result is not None else ""
    text = (f'<{action}Response xmlns="{XMLNS}">{inner}<ResponseMetadata><RequestId>'
            f"{request_id}</RequestId></ResponseMetadata></{action}Response>")
    return Response(text.encode(), 200, headers=headers, media_type="text/xml")


def error(protocol: str, status: int, code: str, message: str, request_id: str,
          error_type: str = "Sender", extra_headers: Mapping[str, str] | None = None,
          ) -> Response:
    """AWS's error in the request's protocol. JSON and CBOR carry the query error code
    in ``x-amzn-query-error`` as CloudWatch does (its clients read the code there)."""
    headers = {**(extra_headers or {}), "x-amzn-requestid": request_id,
               "x-amzn-query-error": f"{code};{error_type}"}
    if protocol == "cbor":
        import cbor2

        return Response(cbor2.dumps({"__type": f"com.amazonaws.cloudwatch#{code}",
                                     "message": message}), status,
                        headers={**headers, "smithy-protocol": "rpc-v2-cbor"},
                        media_type=CBOR_TYPE)
    if protocol == "json":
        return Response(json.dumps({"__type": f"com.amazonaws.cloudwatch#{code}",
                                    "message": message}), status, headers=headers,
                        media_type=JSON_TYPE)
    fields = "".join(f"<{k}>{escape(v)}</{k}>" for k, v in
                     (("Type", error_type), ("Code", code), ("Message", message)))
    body = (f"<ErrorResponse xmlns=\"{XMLNS}\"><Error>{fields}</Error>"
            f"<RequestId>{request_id}</RequestId></ErrorResponse>")
    return Response(body.encode(), status, headers=headers, media_type="text/xml")
