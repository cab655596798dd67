"""Functions over maps and lists: map_merge, map_replace, repeat, filter,
list_concat(_unique), make_url."""

from __future__ import annotations

import itertools
import math
from typing import Any
from urllib import parse as urlparse

from kiln.template.function import Function, ResolveContext, ValidateContext
from kiln.template.hot.strings import to_json
from kiln.template.limits import check_size, weight


class MapMerge(Function):
    """``map_merge: [map, ...]`` (2016-04-08): later maps win; null counts as {}."""

    __slots__ = ()
    api_description = "A function for merging maps."

    def result(self, ctx: ResolveContext) -> Any:
        args = ctx.resolve(self.args)
        if not isinstance(args, list | str):
            raise self.error(f'Incorrect arguments to "{self.fn_name}" should be: '
                             f'"{self.fn_name}" : [ {{ "key1": "val1" }}, '
                             '{ "key2": "val2" } ]')
        merged: dict[Any, Any] = {}
        check_size(self, ctx, sum(len(m) for m in args if isinstance(m, dict)))
        for m in args:
            if m is None:
                continue
            if not isinstance(m, dict):
                raise self.error("Incorrect arguments: Items to merge must be maps. "
                                 f"{repr(m)[:200]} is type {type(m)} instead of a dict")
            merged.update(m)
        return merged


class MapReplace(Function):
    """``map_replace: [map, {keys: {...}, values: {...}}]`` (2016-10-14)."""

    __slots__ = ()
    api_description = "A function for performing substitutions on maps."

    def _example(self) -> str:
        return (f'"{self.fn_name}" : [ {{ "key1": "val1" }}, '
                '{"keys": {"key1": "key2"}, "values": {"val1": "val2"}}]')

    def _map(self, m: Any) -> dict[Any, Any]:
        if m is None:
            return {}
        if isinstance(m, dict):
            return m
        raise self.error(f'Incorrect arguments: to "{self.fn_name}", arguments must be a '
                         f"list of maps. Example:  {self._example()}")

    def result(self, ctx: ResolveContext) -> Any:
        args = ctx.resolve(self.args)
        if not isinstance(args, list) or len(args) != 2:
            raise self.error(f'Incorrect arguments to "{self.fn_name}" should be: '
                             f"{self._example()}")
        in_map, repl = self._map(args[0]), self._map(args[1])
        if any(k not in ("keys", "values") for k in repl):
            raise self.error(f'Incorrect arguments to "{self.fn_name}" should be: '
                             f"{self._example()}")
        keys = self._map(repl.get("keys", {}))
        values = self._map(repl.get("values", {}))
        out: dict[Any, Any] = {}
        for k, v in in_map.items():
            new_key = keys.get(k)
            if new_key is None:
                new_key = k
            elif isinstance(new_key, dict | list):  # Heat leaks "unhashable type" here
                raise self.error(f'Incorrect arguments to "{self.fn_name}": replacement key '
                                 f"{to_json(new_key)} must be a string or number")
            elif new_key in in_map and new_key != k:
                raise self.error(f"key replacement {new_key} collides with a key in the "
                                 "input map")
            elif new_key in out:
                raise self.error(f"key replacement {new_key} collides with a key in the "
                                 "output map")
            try:
                out[new_key] = values.get(v, v)
            except TypeError:  # unhashable value: never replaced
                out[new_key] = v
        return out


class Repeat(Function):
    """repeat (2015-04-30): ``{template, for_each: {var: list}}``, every combination."""

    __slots__ = ()
    api_description = "A function for iterating over a list of items."
    allow_maps = False
    has_permutations = False

    def validate(self, ctx: ValidateContext) -> None:
        if not isinstance(self.args, dict):
            raise self.arg_error(f'Arguments to "{self.fn_name}" must be a map')
        if "for_each" not in self.args or "template" not in self.args:
            example = ("repeat:\n              template: This is %var%\n"
                       "              for_each:\n                %var%: ['a', 'b', 'c']")
            raise self.arg_error(repr(f'"repeat" syntax should be {example}'))
        if self.has_permutations and not isinstance(self.args.get("permutations", True),
                                                    bool):
            raise self.arg_error(
                f'"permutations" should be boolean type for {self.fn_name} function.')

    def validate_existing(self, ctx: ValidateContext) -> None:
        for_each = self.args["for_each"]
        if not isinstance(for_each, Function | dict):
            raise self.arg_error(
                f'The "for_each" argument to "{self.fn_name}" must contain a map')

    def _nested(self) -> bool:
        return bool(self.args.get("permutations", True)) if self.has_permutations else True

    def _check_value(self, value: Any, nested: bool) -> None:
        maps_ok = self.allow_maps and nested
        if isinstance(value, list) or (maps_ok and isinstance(value, dict)):
            return
        kind = "lists or maps" if maps_ok else "lists"
        raise self.error(f'The values of the "for_each" argument to "{self.fn_name}" '
                         f"must be {kind}")

    def result(self, ctx: ResolveContext) -> Any:
        for_each = ctx.resolve(self.args["for_each"])
        if not isinstance(for_each, dict) or not for_each:
            raise self.error(
                f'The "for_each" argument to "{self.fn_name}" must contain a map')
        nested = self._nested()
        keys = list(for_each)
        values: list[Any] = []
        lengths = []
        for key in keys:
            value = for_each[key]
            if value is None:
                values.append([])
                continue
            self._check_value(value, nested)
            values.append(value)
            lengths.append(len(value))
        if not nested and len(set(lengths)) > 1:
            raise self.error(f"For {self.fn_name}, the length of for_each values should be "
                             "equal if no nested loop.")
        template = ctx.resolve(self.args["template"])
        # every combination copies the template: refuse 10^9 of them before the first
        count = (math.prod(len(v) for v in values) if nested
                 else min((len(v) for v in values), default=0))
        check_size(self, ctx, count * max(weight(template, ctx.max_output), 1))
        combos = itertools.product(*values) if nested else zip(*values, strict=False)
        return [self._substitute(keys, combo, template) for combo in combos]

    def _substitute(self, keys: list[Any], values: tuple[Any, ...], template: Any) -> Any:
        if isinstance(template, str):
            for key, value in zip(keys, values, strict=True):
                if not isinstance(key, str) or not isinstance(value, str):
                    raise self.error(
                        f'The keys and values of the "for_each" argument to '
                        f'"{self.fn_name}" must be strings to be substituted into '
                        f"{template!r}; got {value!r}")
                template = template.replace(key, value)
            return template
        if isinstance(template, list):
            return [self._substitute(keys, values, t) for t in template]
        if isinstance(template, dict):
            return {self._substitute(keys, values, k): self._substitute(keys, values, v)
                    for k, v in template.items()}
        return template


class RepeatWithMap(Repeat):
    """repeat (2016-10-14): for_each values may also be maps (their keys are used)."""

    __slots__ = ()
    api_description = "A function for iterating over a list of items or a dict of keys."
    allow_maps = True


class RepeatWithNestedLoop(RepeatWithMap):
    """repeat (2017-09-01): ``permutations: false`` pairs the lists up instead."""

    __slots__ = ()
    has_permutations = True


class Filter(Function):
    """``filter: [values, list]`` (2017-02-24): the list without those values."""

    __slots__ = ()
    api_description = "A function for filtering out values from lists."

    def validate(self, ctx: ValidateContext) -> None:
        if not isinstance(self.args, list):
            raise self.arg_error(f'Argument to "{self.fn_name}" must be a list')
        if len(self.args) != 2:
            raise self.arg_error(f'"{self.fn_name}" expected 2 arguments of the form '
                                 f"[values, sequence] but got {len(self.args)} arguments "
                                 "instead")

    def result(self, ctx: ResolveContext) -> Any:
        sequence = ctx.resolve(self.args[1])
        if not sequence:
            return sequence
        if not isinstance(sequence, list):
            raise self.error(f'"{self.fn_name}" only works with lists')
        values = ctx.resolve(self.args[0])
        if not values:
            return sequence
        if not isinstance(values, list):
            raise self.error(f'"{self.fn_name}" filters a list of values')
        dropped = _Members(values)
        return [i for i in sequence if i not in dropped]


class _Members:
    """List membership (``==``, as a list's ``in``) in constant time for hashable items:
    filtering or de-duplicating a long list by scanning another one is quadratic, and a
    template can make both lists millions long."""

    def __init__(self, items: list[Any]) -> None:
        self.hashable: set[Any] = set()
        self.other: list[Any] = []
        for item in items:
            self.add(item)

    def add(self, item: Any) -> None:
        try:
            self.hashable.add(item)
        except TypeError:
            self.other.append(item)

    def __contains__(self, item: Any) -> bool:
        try:
            if item in self.hashable:
                return True
        except TypeError:
            pass
        return item in self.other


class ListConcat(Function):
    """``list_concat: [list, ...]`` (2017-09-01); null items count as []."""

    __slots__ = ()
    api_description = "A function for extending lists."
    unique = False

    def result(self, ctx: ResolveContext) -> Any:
        args = ctx.resolve(self.args)
        if not isinstance(args, list):
            raise self.error(f'Incorrect arguments to "{self.fn_name}" should be: '
                             f'"{self.fn_name}" : [ [ <value 1>, <value 2> ], '
                             "[ <value 3>, <value 4> ] ]")
        out: list[Any] = []
        for m in args:
            if m is None:
                continue
            if not isinstance(m, list):
                raise self.error("Incorrect arguments: Items to concat must be lists. "
                                 f"{to_json(args)} contains an item that is not a list: "
                                 f"{to_json(m)}")
            check_size(self, ctx, len(out) + len(m))
            out.extend(m)
        if not self.unique:
            return out
        unique: list[Any] = []
        seen = _Members([])
        for item in out:
            if item not in seen:
                seen.add(item)
                unique.append(item)
        return unique


class ListConcatUnique(ListConcat):
    """list_concat_unique (2017-09-01): first occurrence of each item kept."""

    __slots__ = ()
    api_description = "A function for extending lists with unique items."
    unique = True


class MakeURL(Function):
    """``make_url: {scheme, username, password, host, port, path, query, fragment}``."""

    __slots__ = ()
    api_description = "A function for performing substitutions on maps."
    KEYS = ("scheme", "username", "password", "host", "port", "path", "query", "fragment")

    def validate_existing(self, ctx: ValidateContext) -> None:
        if not isinstance(self.args, dict):
            raise self.arg_error(f'The arguments to "{self.fn_name}" must be a map')
        invalid = [k for k in self.args if k not in self.KEYS]
        if invalid:
            raise self.arg_error(f'Invalid arguments to "{self.fn_name}": '
                                 + ", ".join(sorted(map(str, invalid))))
        self._check(self.args, self.arg_error)

    def _check(self, args: dict[str, Any], err: Any) -> None:
        # Heat stops checking at "query" (fragment is never checked); kept as is.
        for key in self.KEYS:
            if key not in args:
                continue
            value = args[key]
            if key == "query":
                if not isinstance(value, Function | dict):
                    raise err(f'The "{key}" argument to "{self.fn_name}" must be a map')
                return
            if key == "port":
                if isinstance(value, Function):
                    continue
                port = value
                if not isinstance(port, int) or isinstance(port, bool):
                    try:
                        port = int(port)
                    except (ValueError, TypeError):
                        raise err(f'Invalid URL port "{value}" for {self.fn_name} called '
                                  f"with {args}") from None
                if not 0 < port <= 65535:
                    raise err(f"Invalid URL port {port}, must be in range 1-65535")
            elif not isinstance(value, Function | str):
                raise err(f'The "{key}" argument to "{self.fn_name}" must be a string')

    def result(self, ctx: ResolveContext) -> Any:
        args = ctx.resolve(self.args)
        if not isinstance(args, dict):
            raise self.error(f'The arguments to "{self.fn_name}" must be a map')
        self._check(args, self.error)
        scheme = args.get("scheme", "")
        if not isinstance(scheme, str):
            raise self.error(f'The "scheme" argument to "{self.fn_name}" must be a string')
        if ":" in scheme:
            raise self.error("URL \"scheme\" should not contain ':'")
        fragment = args.get("fragment", "")
        if not isinstance(fragment, str):
            raise self.error(f'The "fragment" argument to "{self.fn_name}" must be a string')
        netloc = ""
        username = urlparse.quote(args.get("username", ""), safe="")
        password = urlparse.quote(args.get("password", ""), safe="")
        if username or password:
            netloc += username + (":" + password if password else "") + "@"
        host = args.get("host", "")
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        host = urlparse.quote(host, safe=":")
        netloc += f"[{host}]" if ":" in host else host
        port = args.get("port", "")
        if port:
            netloc += f":{port}"
        path = urlparse.quote(args.get("path", ""))
        query = urlparse.urlencode(args.get("query", {})).replace("%2F", "/")
        return urlparse.urlunsplit((scheme, netloc, path, query,
                                    urlparse.quote(fragment)))
