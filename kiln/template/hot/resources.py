"""Functions that read resource state: get_resource, get_attr (three generations) and
resource_facade.

References are checked against the stack's *enabled* resources: a resource whose
condition is false does not exist, so referring to it is the same error as referring to
a name that was never declared (Heat behaves so).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kiln.template.errors import attribute_error, heat_path, reference_error
from kiln.template.function import Function, ResolveContext, ValidateContext

_CFN_SECTIONS = {"properties": "Properties", "metadata": "Metadata",
                 "update_policy": "UpdatePolicy", "Properties": "Properties",
                 "Metadata": "Metadata", "UpdatePolicy": "UpdatePolicy"}


def reference_key(path: tuple[Any, ...]) -> str:
    """Where Heat says a bad reference sits: ``server.Properties.networks[0].port``."""
    if len(path) >= 3 and path[0] in ("resources", "Resources"):
        section = _CFN_SECTIONS.get(str(path[2]), str(path[2]))
        return heat_path((str(path[1]), section, *path[3:]))
    return "unknown"


class GetResource(Function):
    """``get_resource: name`` — the resource's reference id (its physical id)."""

    __slots__ = ()
    api_description = "A function for resolving resource references."
    touches_resources = True

    def _name(self, ctx: ResolveContext | None) -> Any:
        if isinstance(self.args, Function):
            return ctx.resolve(self.args) if ctx is not None else None
        return self.args

    def literal_reference(self) -> tuple[str, str | None] | None:
        """(name, None) when the name is written literally, else None."""
        return (self.args, None) if isinstance(self.args, str) else None

    def validate(self, ctx: ValidateContext) -> None:
        # Heat refuses a list or map here with a 400 that names nothing (its lookup
        # cannot hash it); a number passes, as in Heat (it names no resource later)
        if isinstance(self.args, list | dict):
            raise self.arg_error(f'Argument to "{self.fn_name}" must be a string')

    def dependencies(self, ctx: ResolveContext | None = None) -> Iterator[str]:
        name = self._name(ctx)
        if isinstance(name, str):
            yield name

    def check_references(self, ctx: ResolveContext) -> None:
        name = self._name(ctx)
        if not _exists(ctx, name) and self.path[:1] in (("resources",), ("Resources",)):
            raise reference_error(str(name), reference_key(self.path), known=_known(ctx))

    def result(self, ctx: ResolveContext) -> Any:
        name = ctx.resolve(self.args)
        if not _exists(ctx, name):
            raise reference_error(str(name), "unknown")
        return ctx.resolver.reference(name)


def _known(ctx: ResolveContext) -> list[str]:
    """The resource names a misspelt reference may have meant: a bound template (the
    context references are checked with) knows them; other contexts offer none."""
    template = getattr(ctx, "template", None)
    return [str(name) for name in getattr(template, "resources", None) or ()]


def _exists(ctx: ResolveContext, name: Any) -> bool:
    try:
        return isinstance(name, str) and ctx.resource_enabled(name)
    except KeyError:
        return False


class GetAttThenSelect(Function):
    """get_attr of HOT 2013-05-23: the attribute, then the path selected from it here."""

    __slots__ = ()
    api_description = "A function for resolving resource attributes."
    touches_resources = True
    allow_all_attributes = False

    def parts(self) -> tuple[Any, Any, list[Any]] | None:
        """(resource, attribute-or-None, path), or None if the shape is wrong."""
        args = self.args
        if not isinstance(args, list) or len(args) < 2:
            return None
        return args[0], args[1], list(args[2:])

    def validate(self, ctx: ValidateContext) -> None:
        if not isinstance(self.args, list | str):
            raise self.arg_error(f'Argument to "{self.fn_name}" must be a list')
        if isinstance(self.args, str) or len(self.args) < 2:
            if isinstance(self.args, str):
                raise self.arg_error(f'Argument to "{self.fn_name}" must be a list')
            raise self.arg_error(
                f'Arguments to "{self.fn_name}" must be of the form '
                "[resource_name, attribute, (path), ...]")

    def _name(self, ctx: ResolveContext | None) -> Any:
        parts = self.parts()
        if parts is None:
            return None
        if isinstance(parts[0], Function):
            return ctx.resolve(parts[0]) if ctx is not None else None
        return parts[0]

    def dependencies(self, ctx: ResolveContext | None = None) -> Iterator[str]:
        name = self._name(ctx)
        if isinstance(name, str):
            yield name

    def check_references(self, ctx: ResolveContext) -> None:
        name = self._name(ctx)
        if _exists(ctx, name):
            self._check_attribute(ctx, name)
            return
        if self.path[:1] in (("resources",), ("Resources",)):
            raise reference_error(str(name), reference_key(self.path), known=_known(ctx))
        # elsewhere (outputs) Heat reports it from validate(), wrapped with the path
        err = reference_error(str(name), "unknown", known=_known(ctx))
        raise self.arg_error(err.message) from err

    def literal_reference(self) -> tuple[str, str | None] | None:
        """(name, attribute-or-None) when both are written literally, else None."""
        parts = self.parts()
        if parts is None or not isinstance(parts[0], str):
            return None
        if parts[1] is None or isinstance(parts[1], str):
            return parts[0], parts[1]
        return None

    def _check_attribute(self, ctx: ResolveContext, name: str) -> None:
        """Heat checks a literal attribute name against the resource's schema when it
        validates a stack; a resolver that knows schemas offers ``has_attribute``."""
        parts = self.parts()
        has_attribute = getattr(ctx.resolver, "has_attribute", None)
        if (parts is None or has_attribute is None or not isinstance(parts[1], str)
                or getattr(ctx, "skip_attribute_checks", False)):
            return
        if not has_attribute(name, parts[1]):
            raise self.arg_error(attribute_error(name, parts[1]).message)

    def result(self, ctx: ResolveContext) -> Any:
        parts = self.parts()
        assert parts is not None
        name = ctx.resolve(parts[0])
        if not _exists(ctx, name):
            raise reference_error(str(name), "unknown")
        attr = ctx.resolve(parts[1])
        if not isinstance(attr, str):  # Heat leaks "unhashable type" for maps/lists
            raise attribute_error(name, str(attr), self.path)
        path = ctx.resolve(parts[2])
        return self.fetch(ctx, name, attr, path)

    def fetch(self, ctx: ResolveContext, name: str, attr: Any, path: list[Any]) -> Any:
        value = ctx.resolver.attribute(name, attr, [])
        return select_path(value, path)


def select_path(value: Any, path: list[Any]) -> Any:
    """Heat's selection of a path from an attribute value: maps by key, lists and
    strings by integer index; anything that does not fit gives None."""
    for key in path:
        if not isinstance(value, dict | list | str) or not isinstance(key, str | int):
            return None
        try:
            value = value[key]  # type: ignore[index]  # a str index fails like Heat
        except (KeyError, IndexError, TypeError):
            return None
    return value


class GetAtt(GetAttThenSelect):
    """get_attr of 2014-10-16: the path goes to the resource, which selects from its
    attribute (lists by index, maps by key; None when the path does not fit)."""

    __slots__ = ()

    def fetch(self, ctx: ResolveContext, name: str, attr: Any, path: list[Any]) -> Any:
        return ctx.resolver.attribute(name, attr, path)


class GetAttAllAttributes(GetAtt):
    """get_attr from 2015-10-15: ``[resource]`` alone gives the whole attribute map."""

    __slots__ = ()

    def parts(self) -> tuple[Any, Any, list[Any]] | None:
        args = self.args
        if not args:
            return None
        if isinstance(args, str | list):
            if len(args) > 1:
                if isinstance(args, str):
                    return None
                return args[0], args[1], list(args[2:])
            return args[0], None, []
        return None

    def validate(self, ctx: ValidateContext) -> None:
        if not self.args:
            raise self.arg_error(
                f'Arguments to "{self.fn_name}" can be of the next forms: '
                "[resource_name] or [resource_name, attribute, (path), ...]")
        if self.parts() is None:
            raise self.arg_error(f'Argument to "{self.fn_name}" must be a list')

    def result(self, ctx: ResolveContext) -> Any:
        parts = self.parts()
        assert parts is not None
        if parts[1] is not None:
            return super().result(ctx)
        name = ctx.resolve(parts[0])
        if not _exists(ctx, name):
            raise reference_error(str(name), "unknown")
        return ctx.resolver.all_attributes(name)


#: the reference nodes whose references a template can compute once, stack-independently
#: (exact types: subclasses may resolve names differently)
STATIC_REFERENCES: frozenset[type[Function]] = frozenset(
    {GetResource, GetAttThenSelect, GetAtt, GetAttAllAttributes})


class ResourceFacade(Function):
    """``resource_facade: metadata|deletion_policy|update_policy`` of the parent
    resource of a provider (nested) template."""

    __slots__ = ()
    api_description = "A function for retrieving data in a parent provider template."
    touches_resources = True
    KINDS = ("metadata", "deletion_policy", "update_policy")

    def validate(self, ctx: ValidateContext) -> None:
        if self.args not in self.KINDS:
            raise self.arg_error(f'Incorrect arguments to "{self.fn_name}" should be one '
                                 f"of: {', '.join(self.KINDS)}")

    def result(self, ctx: ResolveContext) -> Any:
        return ctx.resolver.facade(ctx.resolve(self.args))
