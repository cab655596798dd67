"""String functions: list_join, str_replace (and _strict/_vstrict), str_split, digest,
get_file. Where Heat lets a Python error text escape (``'int' object has no attribute
'split'``), Kiln says what is wrong in the function's own words instead."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from kiln.template.function import Function, ResolveContext, ValidateContext
from kiln.template.limits import check_size, check_weight


def to_json(value: Any) -> str:
    """Heat's serialisation of maps/lists substituted into strings (sorted keys)."""
    return json.dumps(value, sort_keys=True)


class GetFile(Function):
    """``get_file: key`` — the content the client sent under that key in ``files``."""

    __slots__ = ()
    api_description = "A function for including a file inline."

    def result(self, ctx: ResolveContext) -> Any:
        key = ctx.resolve(self.args)
        if not isinstance(key, str):
            raise self.error(f'Argument to "{self.fn_name}" must be a string')
        content = ctx.files.get(key)
        if content is None:
            raise self.error('No content found in the "files" section for '
                             f"{self.fn_name} path: {key}")
        return content


class Join(Function):
    """list_join up to 2015-04-30: ``[delim, [strings]]``; items must be strings."""

    __slots__ = ()
    api_description = "A function for joining strings."
    multiple = False

    def example(self) -> str:
        suffix = " ...]" if self.multiple else "]"
        return f'"{self.fn_name}" : [ " ", [ "str1", "str2"]{suffix}'

    def validate(self, ctx: ValidateContext) -> None:
        msg = f'Incorrect arguments to "{self.fn_name}" should be: {self.example()}'
        if not isinstance(self.args, list):
            raise self.arg_error(msg)
        if (len(self.args) < 2) if self.multiple else (len(self.args) != 2):
            raise self.arg_error(msg)

    def _delim(self, ctx: ResolveContext) -> str:
        delim = ctx.resolve(self.args[0])
        if not isinstance(delim, str):
            raise self.error(f'"{self.fn_name}" delimiter must be a string')
        return delim

    def result(self, ctx: ResolveContext) -> Any:
        strings = ctx.resolve(self.args[1])
        if strings is None:
            strings = []
        if not isinstance(strings, list):
            raise self.error(f'"{self.fn_name}" must operate on a list')
        return self._join(ctx, strings)

    def _join(self, ctx: ResolveContext, strings: list[Any]) -> str:
        """None joins as ""; from 2015-10-15 (``multiple``) maps and lists join as JSON."""
        delim = self._delim(ctx)
        # the same long string may be listed many times: measure before joining
        check_size(self, ctx, len(delim) * max(len(strings) - 1, 0)
                   + sum(len(s) if isinstance(s, str) else 1 for s in strings))
        out = []
        for s in strings:
            if s is None:
                out.append("")
            elif isinstance(s, str):
                out.append(s)
            elif self.multiple and isinstance(s, dict | list):
                check_weight(self, ctx, s)
                out.append(to_json(s))
            elif self.multiple:
                raise self.error(
                    f"Items to join must be string, map or list not {repr(s)[:200]}")
            else:
                raise self.error(f"Items to join must be strings not {repr(s)[:200]}")
        return delim.join(out)


class JoinMultiple(Join):
    """list_join from 2015-10-15: several lists; maps/lists inside are JSON-encoded."""

    __slots__ = ()
    api_description = "A function for joining one or more lists of strings."
    multiple = True

    def result(self, ctx: ResolveContext) -> Any:
        lists = ctx.resolve(self.args[1:])
        strings: list[Any] = []
        for jl in lists:
            if jl:
                if not isinstance(jl, list):
                    raise self.error(f'"{self.fn_name}" must operate on a list')
                strings.extend(jl)
        return self._join(ctx, strings)


class Replace(Function):
    """str_replace up to 2015-04-30: params must be scalars.

    Longer placeholders win over shorter ones they contain; equal lengths go in
    lexicographic order (Heat's documented rule)."""

    __slots__ = ()
    api_description = "A function for performing string substitutions."
    strict = False
    allow_empty = True

    def validate(self, ctx: ValidateContext) -> None:
        if not isinstance(self.args, dict):
            raise self.arg_error(f'Arguments to "{self.fn_name}" must be a map')
        if "params" not in self.args or "template" not in self.args:
            example = (f"{self.fn_name}:\n              template: This is var1 template "
                       "var2\n              params:\n                var1: a\n"
                       "                var2: string")
            raise self.arg_error(repr(f'"{self.fn_name}" syntax should be {example}'))
        if not isinstance(self.args["params"], dict | Function):
            raise self.arg_error(f'"{self.fn_name}" parameters must be a mapping')

    def replacement(self, value: Any, param: str) -> str:
        if value is None:
            return ""
        if not isinstance(value, str | int | float | bool):
            raise self.error(f'"{self.fn_name}" params must be strings or numbers, '
                             f"param {param} is not valid")
        return _text(value)

    def operands(self, ctx: ResolveContext) -> tuple[Any, Any]:
        """The resolved ``(template, params)``; Fn::Replace takes them from a list."""
        return ctx.resolve(self.args["template"]), ctx.resolve(self.args["params"])

    def result(self, ctx: ResolveContext) -> Any:
        template, mapping = self.operands(ctx)
        if not isinstance(template, str):
            raise self.error(f'"{self.fn_name}" template must be a string')
        if not isinstance(mapping, dict):
            raise self.error(f'"{self.fn_name}" params must be a map')
        for key in mapping:
            if not isinstance(key, str):
                raise self.error(f'"{self.fn_name}" param placeholders must be strings')
        keys = sorted(sorted(mapping), key=len, reverse=True)
        values = {}
        for k in keys:
            if isinstance(mapping[k], dict | list):
                check_weight(self, ctx, mapping[k])
            values[k] = self.replacement(mapping[k], k)
        # an upper bound of the result (every occurrence replaced), known before building
        check_size(self, ctx, len(template) + sum(
            template.count(k) * len(values[k]) for k in keys if k))
        unreplaced = set(keys)
        result = self._replace(template, keys, values, unreplaced)
        if self.strict and unreplaced:
            raise self.error("The following params were not found in the template: "
                             + ",".join(sorted(sorted(unreplaced), key=len, reverse=True)))
        return result

    def _replace(self, text: str, keys: list[str], values: dict[str, str],
                 unreplaced: set[str]) -> str:
        # Split on the longest key first, then look for shorter keys only in the text
        # between occurrences, so an inserted value is never itself substituted.
        parts: list[str | tuple[str]] = [text]
        for key in keys:
            if not key:
                continue
            out: list[str | tuple[str]] = []
            for part in parts:
                if isinstance(part, str) and key in part:
                    unreplaced.discard(key)
                    for i, piece in enumerate(part.split(key)):
                        if i:
                            out.append((values[key],))
                        out.append(piece)
                else:
                    out.append(part)
            parts = out
        return "".join(p if isinstance(p, str) else p[0] for p in parts)


def _text(value: Any) -> str:
    return str(value)


class ReplaceJson(Replace):
    """str_replace from 2015-10-15: maps and lists are substituted as JSON."""

    __slots__ = ()

    def replacement(self, value: Any, param: str) -> str:
        if value is None:
            if self.allow_empty:
                return ""
            raise self._empty(param)
        if isinstance(value, dict | list):
            if not self.allow_empty and not value:
                raise self._empty(param)
            return to_json(value)
        if not isinstance(value, str | int | float | bool):
            raise self.error(f'"{self.fn_name}" params must be strings, numbers, list or map.')
        text = _text(value)
        if not self.allow_empty and not text:
            raise self._empty(param)
        return text

    def _empty(self, param: str) -> Exception:
        return self.error(f"{self.fn_name} has an undefined or empty value for param "
                          f"{param}, must be a defined non-empty value")


class ReplaceJsonStrict(ReplaceJson):
    """str_replace_strict (2017-02-24): every param must occur in the template."""

    __slots__ = ()
    strict = True


class ReplaceJsonVeryStrict(ReplaceJsonStrict):
    """str_replace_vstrict (2017-09-01): also no empty or null param values."""

    __slots__ = ()
    allow_empty = False


class StrSplit(Function):
    """``str_split: [delim, string, (index)]`` (2015-10-15)."""

    __slots__ = ()
    api_description = "A function for splitting delimited strings into a list."

    def _example(self) -> str:
        return f'"{self.fn_name}" : [ ",", "apples,pears", <index>]'

    def validate(self, ctx: ValidateContext) -> None:
        if isinstance(self.args, str | dict):
            raise self.arg_error(
                f'Incorrect arguments to "{self.fn_name}" should be: {self._example()}')

    def result(self, ctx: ResolveContext) -> Any:
        args = ctx.resolve(self.args)
        if not isinstance(args, list) or len(args) < 2:
            raise self.error(
                f'Incorrect arguments to "{self.fn_name}" should be: {self._example()}')
        delim, text = args[0], args[1]
        if text is None:
            return None
        if not isinstance(text, str) or not isinstance(delim, str) or not delim:
            raise self.error(f'"{self.fn_name}" splits a string by a non-empty string '
                             f"delimiter; got {repr(text)[:200]} and {repr(delim)[:50]}")
        parts = text.split(delim)
        if len(args) < 3:
            return parts
        try:
            index = int(args[2])
        except (ValueError, TypeError):
            raise self.error(f'Incorrect index to "{self.fn_name}" should be: '
                             f"{self._example()}") from None
        try:
            return parts[index]
        except IndexError:
            raise self.error(f'Incorrect index to "{self.fn_name}" should be between 0 '
                             f"and {len(parts) - 1}") from None


class Digest(Function):
    """``digest: [algorithm, value]`` (2015-04-30): hex digest of the latin-1 bytes."""

    __slots__ = ()
    api_description = "A function for performing digest operations."

    def result(self, ctx: ResolveContext) -> Any:
        args = ctx.resolve(self.args)
        if not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
            raise self.error(f'Argument to function "{self.fn_name}" must be a list of '
                             "strings")
        if len(args) != 2:
            raise self.error(f'Function "{self.fn_name}" usage: ["<algorithm>", "<value>"]')
        algorithm, value = args
        if algorithm.lower() not in hashlib.algorithms_available:
            raise self.error(f"Algorithm must be one of {hashlib.algorithms_available}")
        try:
            data = value.encode("latin-1")
        except UnicodeEncodeError:
            raise self.error(f'"{self.fn_name}" can only hash characters of Latin-1 '
                             "(code points below 256)") from None
        try:
            digest = hashlib.new(algorithm)
        except ValueError:
            digest = hashlib.new(algorithm.lower())
        digest.update(data)
        try:
            return digest.hexdigest()
        except TypeError:  # variable-length digests (shake_*) need a length
            raise self.error(f"Algorithm {algorithm} needs a digest length; "
                             "use a fixed-length algorithm") from None
