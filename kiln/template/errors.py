"""Errors the template layer raises: Kiln's family plus a path into the template.

Tree (each also a subclass of the :mod:`kiln.errors` class of the same name, so the API
maps them without knowing the template layer)::

    TemplateError                       (mixin: everything raised while loading/resolving)
    ├── StackValidationFailed           400  a bad value, argument or reference shape
    ├── InvalidTemplateVersion          400  missing/unknown version, removed function
    ├── InvalidTemplateSection          400  unknown top-level section
    ├── InvalidTemplateReference        400  get_resource/Ref/depends_on to nothing
    ├── InvalidTemplateAttribute        400  get_attr of an attribute that does not exist
    ├── UserParameterMissing            400  get_param of an undeclared parameter
    ├── RequestLimitExceeded            400  template larger than max_template_size
    └── TemplateParseError              400  not YAML/JSON, not a mapping (HTTPBadRequest)

``message`` is Heat's wording exactly as Heat's ``error.message`` shows it; ``path`` is the
place (``("resources", "server", "properties", "name")``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kiln import errors as _e


class TemplateError(_e.KilnError):
    """Base of the template layer's errors."""


def heat_path(path: Sequence[_e.PathElement]) -> str:
    """Heat's rendering of a path: dots between keys, ``[n]`` for list indexes."""
    out = ""
    for item in path:
        if isinstance(item, int) or item.isdigit():
            out += f"[{item}]"
        elif out:
            out += f".{item}"
        else:
            out = item
    return out


class StackValidationFailed(TemplateError, _e.StackValidationFailed):
    """Heat's ``StackValidationFailed``: ``message`` is ``"<error>: <path>: <detail>"``.

    ``detail`` keeps the bare reason so a caller that re-words the prefix (the resource
    layer's ``Property error: ...``) can rebuild the message from ``error``, ``path`` and
    ``detail`` the way Heat does.
    """

    def __init__(self, message: str = "", *, path: Sequence[_e.PathElement] = (),
                 error: str = "", show_path: bool = True, hint: str | None = None) -> None:
        super().__init__(message, path=path, hint=hint)
        self.detail = message
        self.error = error
        rendered = heat_path(self.path) if show_path else ""
        self.message = ((f"{error}: " if error else "") + (f"{rendered}: " if rendered else "")
                        + message)
        self.args = (self.message,)


class InvalidTemplateVersion(TemplateError, _e.InvalidTemplateVersion):
    pass


class InvalidTemplateSection(TemplateError, _e.InvalidTemplateSection):
    pass


class InvalidTemplateReference(TemplateError, _e.InvalidTemplateReference):
    pass


class InvalidTemplateAttribute(TemplateError, _e.InvalidTemplateAttribute):
    pass


class UserParameterMissing(TemplateError, _e.UserParameterMissing):
    pass


class RequestLimitExceeded(TemplateError, _e.RequestLimitExceeded):
    pass


class TemplateParseError(TemplateError, _e.HTTPBadRequest):
    """The body is not a YAML/JSON mapping; Heat answers these with HTTPBadRequest."""

    heat_type = "HTTPBadRequest"


def version_error(explanation: str) -> InvalidTemplateVersion:
    return InvalidTemplateVersion(f"The template version is invalid: {explanation}")


def section_error(section: str, known: Iterable[str] = ()) -> InvalidTemplateSection:
    return InvalidTemplateSection(f"The template section is invalid: {section}",
                                  path=(section,), hint=_e.did_you_mean(section, known))


def reference_error(resource: str, key: str, path: tuple[_e.PathElement, ...] = (),
                    known: Iterable[str] = ()) -> InvalidTemplateReference:
    """Heat's message; the hint names the closest of the ``known`` resources."""
    return InvalidTemplateReference(
        f'The specified reference "{resource}" (in {key}) is incorrect.', path=path,
        hint=_e.did_you_mean(resource, known))


def attribute_error(resource: str, key: str,
                    path: tuple[_e.PathElement, ...] = ()) -> InvalidTemplateAttribute:
    return InvalidTemplateAttribute(
        f"The Referenced Attribute ({resource} {key}) is incorrect.", path=path)
