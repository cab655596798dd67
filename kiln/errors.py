"""Kiln's one exception family.

Every error a client can cause is a :class:`KilnError`. The API turns any of them into
Heat's fault body without knowing the concrete class: ``heat_type`` is the ``error.type``
field Heat's clients match on, ``http_status`` the status code Heat answers with. Anything
that is *not* a KilnError reaching the API is a bug in Kiln, and is reported as a 500
without a traceback.

Tree::

    KilnError                         500  HeatException
    ├── InvalidInput                  400  (abstract: bad request)
    │   ├── StackValidationFailed     400
    │   ├── InvalidTemplateVersion    400
    │   ├── InvalidTemplateSection    400
    │   ├── InvalidTemplateReference  400
    │   ├── InvalidTemplateAttribute  400
    │   ├── UnknownUserParameter      400
    │   ├── UserParameterMissing      400
    │   ├── ImmutableParameterModified 400
    │   ├── ResourceTypeNotFound      400  (a StackValidationFailed, as Heat reports it)
    │   ├── InvalidResourceType       400
    │   ├── ResourceTypeUnavailable   400  (its OpenStack service is not in the catalog)
    │   ├── InvalidBreakPointHook     400
    │   ├── InvalidMerge              400
    │   ├── ResourceActionNotSupported 400
    │   ├── NotSupported              400
    │   ├── RequestLimitExceeded      400
    │   ├── StackResourceLimitExceeded 400
    │   ├── MissingCredentialError    400  (a trust's roles the caller does not have)
    │   └── HTTPBadRequest            400  (wire-level problems: bad JSON, bad filter)
    ├── Forbidden                     403
    │   └── AuthorizationFailure      403  (a stack's trust no longer works)
    ├── EntityNotFound                404
    │   └── ResourceNotAvailable      404
    ├── NotAcceptable                 406
    ├── Conflict                      409  (abstract)
    │   ├── ActionInProgress          409
    │   ├── StackExists               409
    │   └── ConcurrentTransaction     409
    ├── RequestEntityTooLarge         413
    └── ServiceUnavailable            503  (Keystone unreachable; with Retry-After)

Template errors (``kiln.template.errors``) subclass these, adding the path to the place
in the template.

An error may carry a ``hint`` (``did you mean length?``, ``expected a number, got
'abc'``): Kiln's own words beside Heat's message, which stays Heat's exact text because
clients compare it. The API sends the hint in the fault body's ``error.hint``; ``kiln
stack`` prints it under the message. Code that rewords an error (prefixing its path,
wrapping a nested stack's) raises the new one while handling the old, so the hint is
found along ``__context__`` (:func:`hint_of`) without every wrapper passing it on.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import ClassVar

PathElement = str | int


def format_path(path: Sequence[PathElement]) -> str:
    """Render a path the way Heat does in its messages: ``resources.server.properties``.
    An index is bracketed, and so is any name made of digits alone, as Heat does (a
    group's member ``0``: ``resources[0].properties``)."""
    out: list[str] = []
    for element in path:
        if isinstance(element, int) or element.isdigit():
            out.append(f"[{element}]" if out else str(element))
        else:
            out.append(element)
    return ".".join(out).replace(".[", "[")


class KilnError(Exception):
    """Base of every error Kiln reports to a client."""

    http_status: ClassVar[int] = 500
    #: Heat's ``error.type``; defaults to the class name, which matches Heat's exception name.
    heat_type: ClassVar[str | None] = None
    #: Kiln's suggestion beside Heat's message (module docstring)
    hint: str | None = None

    def __init__(self, message: str = "", *, path: Sequence[PathElement] = (),
                 hint: str | None = None) -> None:
        self.message = message
        self.path: tuple[PathElement, ...] = tuple(path)
        if hint is not None:
            self.hint = hint
        super().__init__(self.message)

    @property
    def error_type(self) -> str:
        return self.heat_type or type(self).__name__

    def __str__(self) -> str:
        return self.message


def did_you_mean(given: object, known: Iterable[str], shape: str = "{}") -> str | None:
    """``did you mean X?`` for the known name closest to a misspelt one (written as
    ``shape`` shows it: ``'{}'`` quotes it), or None."""
    if not isinstance(given, str) or not given:
        return None
    names = [name for name in known if isinstance(name, str)]
    close = difflib.get_close_matches(given, names, n=1, cutoff=0.6)
    if not close:
        lowered = {name.lower(): name for name in names}
        close = difflib.get_close_matches(given.lower(), list(lowered), n=1, cutoff=0.6)
        close = [lowered[c] for c in close]
    if not close or close[0] == given:
        return None
    return f"did you mean {shape.format(close[0])}?"


def hint_of(exc: BaseException) -> str | None:
    """The hint of ``exc`` or of the error it rewords: one raised while handling another
    whose message it contains (a path prefixed, a nested stack's heading added)."""
    seen: BaseException | None = exc
    for _ in range(20):  # a bound: exception chains can be cyclic
        if seen is None:
            return None
        if isinstance(seen, KilnError) and seen.hint:
            return seen.hint
        inner = seen.__cause__ or seen.__context__
        said = str(getattr(inner, "detail", "") or _text(inner)) if inner is not None else ""
        if not said or said not in _text(seen):
            return None
        seen = inner
    return None


def reason_with_hint(exc: BaseException) -> str:
    """``exc``'s message, followed by its hint where it has one: for a status reason
    Kiln stores itself (a change set that could not be planned), which has no separate
    field for the hint that an API error carries in ``error.hint``."""
    text = str(exc) or type(exc).__name__
    hint = hint_of(exc)
    return f"{text} ({hint})" if hint and hint not in text else text


def _text(exc: BaseException) -> str:
    return exc.message if isinstance(exc, KilnError) else str(exc)


class InvalidInput(KilnError):
    http_status = 400


class StackValidationFailed(InvalidInput):
    pass


class InvalidTemplateVersion(InvalidInput):
    pass


class InvalidTemplateSection(InvalidInput):
    pass


class InvalidTemplateReference(InvalidInput):
    pass


class InvalidTemplateAttribute(InvalidInput):
    pass


class UnknownUserParameter(InvalidInput):
    pass


class UserParameterMissing(InvalidInput):
    pass


class ImmutableParameterModified(InvalidInput):
    pass


class ResourceTypeNotFound(StackValidationFailed):
    """Heat has no such type: an unknown resource type fails stack validation."""

    heat_type = "StackValidationFailed"


class InvalidResourceType(InvalidInput):
    pass


class ResourceTypeUnavailable(InvalidInput):
    """The type needs an OpenStack service the cloud's catalog does not offer (Heat's
    HEAT-E99001, which both the listing and a create check)."""

    def __init__(self, type_name: str, client_name: str, reason: str) -> None:
        super().__init__(f"HEAT-E99001 Service {client_name} is not available for resource "
                         f"type {type_name}, reason: {reason}")


class InvalidBreakPointHook(InvalidInput):
    pass


class InvalidMerge(InvalidInput):
    pass


class ResourceActionNotSupported(InvalidInput):
    pass


class NotSupported(InvalidInput):
    pass


class RequestLimitExceeded(InvalidInput):
    pass


class StackResourceLimitExceeded(InvalidInput):
    pass


class HTTPBadRequest(InvalidInput):
    pass


class Forbidden(KilnError):
    http_status = 403


class AuthorizationFailure(Forbidden):
    """Kiln cannot act for a stack's owner: the trust they delegated no longer works."""


class MissingCredentialError(InvalidInput):
    """The caller cannot delegate what a trust needs (Heat's name and 400)."""


class EntityNotFound(KilnError):
    http_status = 404


class HTTPNotFound(KilnError):
    """A path that names nothing Kiln serves (webob's 404 in Heat)."""

    http_status = 404


class ResourceNotAvailable(EntityNotFound):
    pass


class NotAcceptable(KilnError):
    http_status = 406
    heat_type = "HTTPNotAcceptable"


class Conflict(KilnError):
    http_status = 409


class ActionInProgress(Conflict):
    pass


class StackExists(Conflict):
    pass


class ConcurrentTransaction(Conflict):
    pass


class ChangeSetNotFound(EntityNotFound):
    """No change set of that name or id (CloudFormation's ``ChangeSetNotFound``)."""


class InvalidChangeSetStatus(Conflict):
    """The change set cannot be executed or deleted now: it failed, is obsolete, was
    executed, or its stack is busy (CloudFormation's ``InvalidChangeSetStatus``)."""


class RequestEntityTooLarge(KilnError):
    http_status = 413
    heat_type = "HTTPRequestEntityTooLarge"


class ServiceUnavailable(KilnError):
    """A service Kiln needs (Keystone) cannot be reached now; the client may retry."""

    http_status = 503
    heat_type = "HTTPServiceUnavailable"
    retry_after = 5


class InvalidAlarmParameter(ValueError):
    """A CloudWatch request parameter (or an alarm resource's property) the alarm rules
    refuse; ``code`` is AWS's error code. Shared, so the CloudWatch API answers it with
    AWS's 400 without importing the alarms (:mod:`kiln.alarms.rules` raises it)."""

    def __init__(self, message: str, code: str = "InvalidParameterValue") -> None:
        super().__init__(message)
        self.code = code


class AlarmNotFound(LookupError):
    """A named alarm does not exist (AWS's ResourceNotFound); raised by
    :mod:`kiln.alarms.service`, answered by the CloudWatch API."""
