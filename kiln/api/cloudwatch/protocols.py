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
as epoch seconds (floats); :func:`to_epoch` reads every client's form of them.
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


class BadRequest(ValueError):
    """The body cannot be decoded in the protocol it claims."""


@dataclass(frozen=True)
class Decoded:
    protocol: str          # "query" | "json" | "cbor"
    action: str
    params: dict[str, Any]


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
    except cbor2.CBORDecodeError as exc:  # cbor2 wraps every decoding failure in it
        raise BadRequest(f"the CBOR body cannot be read: {exc}") from None
    if not isinstance(value, dict):
        raise BadRequest("the CBOR body is not a map")
    return value


def _json_body(body: bytes) -> dict[str, Any]:
    if not body:
        return {}
    try:
        value = json.loads(body)
    except ValueError as exc:
        raise BadRequest(f"the JSON body cannot be read: {exc}") from None
    if not isinstance(value, dict):
        raise BadRequest("the JSON body is not an object")
    return value


_SKIP = frozenset({"Action", "Version", "AWSAccessKeyId", "Signature", "SignatureMethod",
                   "SignatureVersion", "Timestamp", "Expires", "SecurityToken"})


def unflatten(params: Mapping[str, str]) -> dict[str, Any]:
    """``A.member.2.B=x`` → ``{"A": [.., {"B": "x"}]}``: members are kept in index
    order (a gap in the numbering leaves no hole)."""
    tree: dict[Any, Any] = {}
    for key, value in params.items():
        if key in _SKIP or key.startswith("X-Amz-"):
            continue
        raw = key.split(".")
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


def _lists(node: Any) -> Any:
    if isinstance(node, dict):
        if node and all(isinstance(k, int) for k in node):
            return [_lists(node[k]) for k in sorted(node)]
        return {k: _lists(v) for k, v in node.items()}
    return node


def to_epoch(value: Any, where: str) -> float:
    """Epoch seconds from an ISO 8601 string, a number, or a datetime."""
    if isinstance(value, dt.datetime):
        stamp = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return stamp.timestamp()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        try:
            return float(text)
        except ValueError:
            pass
        try:
            stamp = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            from kiln.alarms.rules import InvalidParameter

            raise InvalidParameter(f"The parameter {where} must be an ISO 8601 time.",
                                   "InvalidParameterValue") from None
        return (stamp if stamp.tzinfo else stamp.replace(tzinfo=dt.UTC)).timestamp()
    from kiln.alarms.rules import InvalidParameter

    raise InvalidParameter(f"The parameter {where} must be a time.", "InvalidParameterValue")


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
          error_type: str = "Sender") -> Response:
    """AWS's error in the request's protocol. JSON and CBOR carry the query error code
    in ``x-amzn-query-error`` as CloudWatch does (its clients read the code there)."""
    headers = {"x-amzn-requestid": request_id,
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
