"""CloudFormation intrinsic functions (``Ref``, ``Fn::*``), as Heat implements them.

``api_description`` on each class is the text Heat's template_functions API shows for
it (observed on Heat 27), for the listing to return the same.

Where Heat's CFN function is its HOT sibling under another name (``Fn::Join`` is the
2013-05-23 ``list_join``, ``Fn::GetAtt`` the 2013-05-23 ``get_attr`` without a path,
``Fn::ResourceFacade`` is ``resource_facade`` with CamelCase kinds), the class here is a
subclass of the HOT one that changes only the argument shape, so both stay in step.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from kiln.template.errors import reference_error
from kiln.template.function import Function, ResolveContext, ValidateContext
from kiln.template.hot import resources as hot_resources
from kiln.template.hot import strings as hot_strings

#: pseudo parameters per family; a Ref to one of these is a parameter reference
PSEUDO = {"cfn": ("AWS::StackId", "AWS::StackName", "AWS::Region"),
          "hot": ("OS::stack_id", "OS::stack_name", "OS::project_id")}


def _parameter(node: Function, ctx: ResolveContext, name: Any) -> Any:
    try:
        if not isinstance(name, str):
            raise KeyError(name)
        return ctx.parameter(name)
    except KeyError:
        raise reference_error(str(name), "unknown", node.path) from None


class ParamRef(Function):
    """``Ref`` inside conditions: parameters only."""

    __slots__ = ()
    api_description: ClassVar[str] = "A function for resolving parameter references."

    def result(self, ctx: ResolveContext) -> Any:
        return _parameter(self, ctx, ctx.resolve(self.args))


class Ref(Function):
    """``Ref: name`` — a parameter's value or a resource's reference id.

    Heat decides once, when the template is parsed for a stack: a literal name that is a
    resource of the stack refers to it, anything else is a parameter. Kiln decides at
    load time from the declared parameters (and pseudo parameters), which is the same
    split because Heat rejects a name used for both; a name that is neither ends up as
    Heat's ``The specified reference "x" (in unknown) is incorrect.``
    """

    __slots__ = ("is_param",)
    api_description: ClassVar[str] = "A function for resolving parameters or resource references."
    touches_resources = True

    def __init__(self, fn_name: str, args: Any, path: tuple[Any, ...] = (),
                 children: Sequence[Function] | None = None) -> None:
        super().__init__(fn_name, args, path, children)
        self.is_param = not isinstance(args, str)
        if self.is_param:
            found = _children(args) if children is None else iter(children)
            self.touches = any(n.touches for n in found)

    def prepare(self, ctx: ValidateContext) -> None:
        if isinstance(self.args, str):
            family = ctx.version.family
            if self.args in ctx.parameter_names or self.args in PSEUDO.get(family, ()):
                self.is_param = True
                self.touches = False

    def dependencies(self, ctx: ResolveContext | None = None) -> Iterator[str]:
        if not self.is_param and isinstance(self.args, str) and (
                ctx is None or hot_resources._exists(ctx, self.args)):
            yield self.args

    def result(self, ctx: ResolveContext) -> Any:
        if self.is_param:
            return _parameter(self, ctx, ctx.resolve(self.args))
        if hot_resources._exists(ctx, self.args):
            return ctx.resolver.reference(self.args)
        return _parameter(self, ctx, self.args)


def _children(args: Any) -> Iterator[Function]:
    from kiln.template.function import direct_children

    return direct_children(args)


class GetAtt(hot_resources.GetAttThenSelect):
    """``Fn::GetAtt: [resource, attribute]`` — exactly two items, no path."""

    __slots__ = ()
    api_description: ClassVar[str] = "A function for resolving resource attributes."

    def validate(self, ctx: ValidateContext) -> None:
        if not isinstance(self.args, list) or len(self.args) != 2:
            raise self.arg_error(f'Arguments to "{self.fn_name}" must be of the form '
                                 "[resource_name, attribute]")


class Select(Function):
    """``Fn::Select: [index, list-or-map]``; a miss gives ``""``."""

    __slots__ = ()
    api_description: ClassVar[str] = "A function for selecting an item from a list or map."

    def validate(self, ctx: ValidateContext) -> None:
        if not isinstance(self.args, list) or len(self.args) != 2:
            raise self.arg_error(f'Arguments to "{self.fn_name}" must be of the form '
                                 "[index, collection]")

    def result(self, ctx: ResolveContext) -> Any:
        index = ctx.resolve(self.args[0])
        strings = ctx.resolve(self.args[1])
        if strings == "":
            return ""
        if isinstance(strings, str):
            try:
                strings = json.loads(strings)
            except ValueError as exc:
                raise self.error(f'"{self.fn_name}": {exc}') from None
        if isinstance(strings, Mapping):
            if not isinstance(index, str):
                raise self.error(f'Index to "{self.fn_name}" must be a string')
            return strings.get(index, "")
        with contextlib.suppress(ValueError, TypeError):
            index = int(index)
        if isinstance(strings, list):
            if not isinstance(index, int):
                raise self.error(f'Index to "{self.fn_name}" must be an integer')
            try:
                return strings[index]
            except IndexError:
                return ""
        if strings is None:
            return ""
        raise self.error(f"Arguments to {self.fn_name} not fully resolved")


class Join(hot_strings.Join):
    """``Fn::Join: [delimiter, [strings]]`` (the 2013-05-23 list_join)."""

    __slots__ = ()
    api_description: ClassVar[str] = "A function for joining strings."


class Split(Function):
    """``Fn::Split: [delimiter, string]``."""

    __slots__ = ()
    api_description: ClassVar[str] = "A function for splitting strings."

    def _shape_error(self) -> Exception:
        example = f'"{self.fn_name}" : [ ",", "str1,str2"]]'
        return self.arg_error(f'Incorrect arguments to "{self.fn_name}" should be: '
                              f"{example}")

    def validate(self, ctx: ValidateContext) -> None:
        if not isinstance(self.args, list) or len(self.args) != 2:
            raise self._shape_error()

    def result(self, ctx: ResolveContext) -> Any:
        delim = self.args[0]
        strings = ctx.resolve(self.args[1])
        if not isinstance(delim, str):
            raise self.error(f"Delimiter for {self.fn_name} must be string")
        if not isinstance(strings, str):
            raise self.error(f"String to split must be string; got {type(strings)}")
        return strings.split(delim)


class Replace(hot_strings.Replace):
    """``Fn::Replace: [{placeholder: value}, string]`` (2013-05-23 str_replace rules)."""

    __slots__ = ()
    api_description: ClassVar[str] = "A function for performing string substitutions."

    def validate(self, ctx: ValidateContext) -> None:
        if not isinstance(self.args, list) or len(self.args) != 2:
            example = (f'{{"{self.fn_name}": [ {{"$var1": "foo", "%var2%": "bar"}}, '
                       '"$var1 is %var2%"]}')
            raise self.arg_error(f'Incorrect arguments to "{self.fn_name}" should be: '
                                 f"{example}")
        if not isinstance(self.args[0], dict | Function):
            raise self.arg_error(f'"{self.fn_name}" parameters must be a mapping')

    def operands(self, ctx: ResolveContext) -> tuple[Any, Any]:
        mapping = ctx.resolve(self.args[0])
        return ctx.resolve(self.args[1]), mapping


class Base64(Function):
    """``Fn::Base64: string`` — returns the string unchanged (Heat takes plain user
    data), but it must be a string."""

    __slots__ = ()
    api_description: ClassVar[str] = "A placeholder function for converting to base64."

    def result(self, ctx: ResolveContext) -> Any:
        value = ctx.resolve(self.args)
        if not isinstance(value, str):
            raise self.error(f'"{self.fn_name}" argument must be a string')
        return value


_MEMBER = re.compile(r"\.member\.([0-9]+)\.(.*)")
_MLTM_EXAMPLE = """
            {'Fn::MemberListToMap': ['Name', 'Value',
                                     ['.member.0.Name=key',
                                      '.member.0.Value=door']]}
            """


class MemberListToMap(Function):
    """``Fn::MemberListToMap: [key_name, value_name, [".member.N.<name>=<v>", ...]]``."""

    __slots__ = ()
    api_description: ClassVar[str] = (
        "A function to convert lists with "
        "enumerated keys and values to mapping.")

    def validate(self, ctx: ValidateContext) -> None:
        if not isinstance(self.args, list) or len(self.args) != 3:
            raise self.arg_error(f'Wrong Arguments try: "{_MLTM_EXAMPLE}"')
        if not isinstance(self.args[0], str):
            raise self.arg_error(f"{self.fn_name} Key Name must be a string")
        if not isinstance(self.args[1], str):
            raise self.arg_error(f"{self.fn_name} Value Name must be a string")

    def result(self, ctx: ResolveContext) -> Any:
        keyname, valuename = self.args[0], self.args[1]
        members = ctx.resolve(self.args[2])
        if not isinstance(members, list | tuple | dict | str):
            raise self.error("Member list must be a list")
        partials: dict[str, str] = {}
        for item in members:
            if not isinstance(item, str):
                raise self.error("Member list items must be strings")
            key, sep, value = item.partition("=")
            if not sep:
                # Heat fails here with a Python error text; say what is expected.
                raise self.error(f'Member list items must be "<key>=<value>", not "{item}"')
            partials[key] = value
        found = []
        for name, value in partials.items():
            match = _MEMBER.match(name)
            if match:
                found.append((int(match.group(1)), match.group(2), value))
        found.sort(key=lambda t: t[0])
        out: dict[str, Any] = {}
        for _index, group in itertools.groupby(found, key=lambda t: t[0]):
            member = {k: v for _i, k, v in group}
            if keyname in member and valuename in member:
                out[member[keyname]] = member[valuename]
        return out


class ResourceFacade(hot_resources.ResourceFacade):
    """``Fn::ResourceFacade: Metadata|DeletionPolicy|UpdatePolicy``."""

    __slots__ = ()
    api_description: ClassVar[str] = (
        "A function for retrieving data "
        "in a parent provider template.")
    KINDS = ("Metadata", "DeletionPolicy", "UpdatePolicy")
    _TO_HOT = {"Metadata": "metadata", "DeletionPolicy": "deletion_policy",
               "UpdatePolicy": "update_policy"}

    def result(self, ctx: ResolveContext) -> Any:
        kind = ctx.resolve(self.args)
        return ctx.resolver.facade(self._TO_HOT.get(kind, kind))


class GetAZs(Function):
    """``Fn::GetAZs: region`` — the availability zones (the argument is ignored)."""

    __slots__ = ()
    api_description: ClassVar[str] = "A function for retrieving the availability zones."
    touches_resources = True

    def result(self, ctx: ResolveContext) -> Any:
        return ctx.resolver.availability_zones()


class FindInMap(Function):
    """``Fn::FindInMap: [map, key, value]`` from the ``Mappings`` section."""

    __slots__ = ()
    api_description: ClassVar[str] = "A function for resolving keys in the template mappings."

    def validate(self, ctx: ValidateContext) -> None:
        if not isinstance(self.args, list) or len(self.args) != 3:
            count = len(self.args) if isinstance(self.args, list | str | dict) else 1
            verb = "too many values to unpack (expected 3)" if count > 3 else \
                f"not enough values to unpack (expected 3, got {count})"
            raise self.arg_error(f"'{verb}'")

    def result(self, ctx: ResolveContext) -> Any:
        names = [ctx.resolve(a) for a in self.args]
        try:
            return ctx.mappings[names[0]][names[1]][names[2]]
        except (KeyError, TypeError, IndexError):
            missing = next((n for n, depth in zip(names, range(3), strict=True)
                            if not _has(ctx.mappings, names[:depth + 1])), names[-1])
            raise self.error(f"'{missing}'") from None


def _has(mappings: Mapping[str, Any], keys: list[Any]) -> bool:
    value: Any = mappings
    for key in keys:
        try:
            value = value[key]
        except (KeyError, TypeError, IndexError):
            return False
    return True
