"""A signed request as the server received it, and the claim the client makes in it.

Signatures are checked over the request *as received* (method, Host header, raw path,
query, headers, body), never over a re-encoded copy: a proxy or client quirk that
changes a byte must make the check fail rather than pass on a different request.
"""

from __future__ import annotations

import datetime as dt
import email.utils
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kiln.api.aws import errors

SIGV4_ALGORITHM = "AWS4-HMAC-SHA256"
#: Longest validity a SigV4 pre-signed URL may ask for (AWS's limit: 7 days).
MAX_SIGV4_EXPIRES = 604800


@dataclass(frozen=True)
class SignedRequest:
    """What the server received. ``params`` are the query's and (for a form POST) the
    body's parameters, decoded, in order: the AWS query APIs read them as one set."""

    method: str
    host: str
    raw_path: str
    query: Sequence[tuple[str, str]]
    headers: Mapping[str, str]
    body: bytes = b""
    form: Sequence[tuple[str, str]] = ()

    @property
    def params(self) -> dict[str, str]:
        """Every parameter, the first value of a repeated one winning (as webob's)."""
        out: dict[str, str] = {}
        for key, value in (*self.query, *self.form):
            out.setdefault(key, value)
        return out


@dataclass(frozen=True)
class Claim:
    """Who the client says signed the request, how, and when.

    ``version`` is 2 or 4; ``location`` is ``"query"`` or ``"header"``. For SigV4,
    ``scope`` is the credential scope ``date/region/service/aws4_request`` and
    ``signed_headers`` the names the client signed; for SigV2, ``method`` is the HMAC
    (``HmacSHA256`` or ``HmacSHA1``)."""

    version: int
    location: str
    access_key: str
    signature: str
    timestamp: dt.datetime | None = None
    expires: dt.datetime | None = None
    method: str = ""
    scope: str = ""
    signed_headers: tuple[str, ...] = ()
    amz_date: str = ""
    extra: Mapping[str, str] = field(default_factory=dict)


def parse_claim(request: SignedRequest) -> Claim:
    """The claim in ``request``; an absent or malformed one is AWS's error for it.

    Order as Heat's ec2token middleware: no signature at all is ``IncompleteSignature``,
    a signature without an access key ``MissingAuthenticationToken``."""
    params = request.params
    authorization = request.headers.get("authorization", "")
    if authorization:
        return _header_v4(authorization, request)
    if "X-Amz-Signature" in params or "X-Amz-Algorithm" in params:
        return _query_v4(params)
    if "Signature" in params:
        return _query_v2(params)
    raise errors.IncompleteSignature()


def _header_v4(authorization: str, request: SignedRequest) -> Claim:
    algorithm, _, rest = authorization.strip().partition(" ")
    if algorithm != SIGV4_ALGORITHM:
        raise errors.IncompleteSignature(f"unsupported authorization scheme {algorithm!r}")
    fields: dict[str, str] = {}
    for part in rest.split(","):
        key, sep, value = part.strip().partition("=")
        if sep:
            fields[key] = value
    signature = fields.get("Signature", "")
    if not signature:
        raise errors.IncompleteSignature()
    credential = fields.get("Credential", "")
    access, scope = _split_credential(credential)
    signed = fields.get("SignedHeaders", "")
    if not signed:
        raise errors.IncompleteSignature("SignedHeaders is missing")
    amz_date = request.headers.get("x-amz-date", "")
    when = _parse_amz_date(amz_date) if amz_date else _parse_http_date(
        request.headers.get("date", ""))
    if not amz_date:
        amz_date = when.strftime("%Y%m%dT%H%M%SZ")
    _check_scope_date(scope, amz_date)
    return Claim(version=4, location="header", access_key=access, signature=signature,
                 timestamp=when, scope=scope, signed_headers=_signed_headers(signed),
                 amz_date=amz_date)


def _query_v4(params: Mapping[str, str]) -> Claim:
    if params.get("X-Amz-Algorithm", SIGV4_ALGORITHM) != SIGV4_ALGORITHM:
        raise errors.IncompleteSignature(
            f"unsupported X-Amz-Algorithm {params['X-Amz-Algorithm']!r}")
    signature = params.get("X-Amz-Signature", "")
    if not signature:
        raise errors.IncompleteSignature()
    access, scope = _split_credential(params.get("X-Amz-Credential", ""))
    amz_date = params.get("X-Amz-Date", "")
    if not amz_date:
        raise errors.IncompleteSignature("X-Amz-Date is missing")
    when = _parse_amz_date(amz_date)
    _check_scope_date(scope, amz_date)
    expires = None
    if "X-Amz-Expires" in params:
        try:
            seconds = int(params["X-Amz-Expires"])
        except ValueError:
            raise errors.IncompleteSignature("X-Amz-Expires is not a number") from None
        if not 0 <= seconds <= MAX_SIGV4_EXPIRES:
            raise errors.IncompleteSignature(
                f"X-Amz-Expires must be between 0 and {MAX_SIGV4_EXPIRES}")
        try:
            expires = when + dt.timedelta(seconds=seconds)
        except OverflowError:
            raise errors.IncompleteSignature(f"invalid X-Amz-Date {amz_date!r}") from None
    signed = params.get("X-Amz-SignedHeaders", "host")
    return Claim(version=4, location="query", access_key=access, signature=signature,
                 timestamp=when, expires=expires, scope=scope,
                 signed_headers=_signed_headers(signed), amz_date=amz_date)


def _signed_headers(text: str) -> tuple[str, ...]:
    """SigV4's signed header names; ``host`` must be one of them, as AWS requires: a
    signature that leaves it out could be replayed to any host the key is valid on."""
    names = tuple(text.split(";"))
    if "host" not in names:
        raise errors.IncompleteSignature("the signed headers must include host")
    return names


def _query_v2(params: Mapping[str, str]) -> Claim:
    signature = params["Signature"]
    if not signature:
        raise errors.IncompleteSignature()
    access = params.get("AWSAccessKeyId", "")
    if not access:
        raise errors.MissingAuthenticationToken()
    version = params.get("SignatureVersion", "")
    if version != "2":
        raise errors.IncompleteSignature(f"SignatureVersion {version!r} is not supported; "
                                         "use 2 or 4")
    method = params.get("SignatureMethod", "")
    if method not in ("HmacSHA256", "HmacSHA1"):
        raise errors.IncompleteSignature(f"SignatureMethod {method!r} is not supported")
    timestamp = _parse_iso(params["Timestamp"], "Timestamp") if "Timestamp" in params else None
    expires = _parse_iso(params["Expires"], "Expires") if "Expires" in params else None
    return Claim(version=2, location="query", access_key=access, signature=signature,
                 timestamp=timestamp, expires=expires, method=method)


def _split_credential(credential: str) -> tuple[str, str]:
    access, sep, scope = credential.partition("/")
    if not access:
        raise errors.MissingAuthenticationToken()
    if not sep or len(scope.split("/")) != 4 or not scope.endswith("/aws4_request"):
        raise errors.IncompleteSignature(
            "the credential scope must be <key>/<date>/<region>/<service>/aws4_request")
    return access, scope


def _check_scope_date(scope: str, amz_date: str) -> None:
    if scope.split("/")[0] != amz_date[:8]:
        raise errors.IncompleteSignature("the credential scope's date is not the request's")


def _parse_amz_date(text: str) -> dt.datetime:
    # by hand: strptime (its locale lock, its regex) was a tenth of a signature check
    try:
        if len(text) != 16 or text[8] != "T" or text[15] != "Z" or not (
                text[:8] + text[9:15]).isdigit():
            raise ValueError(text)
        return dt.datetime(int(text[:4]), int(text[4:6]), int(text[6:8]), int(text[9:11]),
                           int(text[11:13]), int(text[13:15]), tzinfo=dt.UTC)
    except ValueError:
        raise errors.IncompleteSignature(f"invalid X-Amz-Date {text!r}") from None


def _parse_http_date(text: str) -> dt.datetime:
    if not text:
        raise errors.IncompleteSignature("the request has no X-Amz-Date or Date header")
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, OverflowError, IndexError):
        raise errors.IncompleteSignature(f"invalid Date header {text[:64]!r}") from None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def _parse_iso(text: str, name: str) -> dt.datetime:
    """An ISO 8601 time (``2024-01-02T03:04:05Z``, fractions and offsets allowed)."""
    try:
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise errors.IncompleteSignature(f"invalid {name} {text[:64]!r}") from None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)
