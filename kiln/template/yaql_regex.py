"""yaql's regex functions on RE2, where RE2 gives Python's answer.

RE2 matches in time linear in the text whatever the pattern, so ``(a+)+$`` cannot
backtrack for hours inside one C call. yaql compiles its patterns with Python's ``re``
(Heat's semantics); for each call on a text, :func:`equivalent` returns an RE2 program
that finds the same matches as that pattern on that text, or raises
:class:`~kiln.template.yaql_bounded.Unbounded` so the call is evaluated in the sandbox
process, with Python's engine under a deadline. It does so when:

- RE2 cannot compile the pattern (back-references, look-arounds, atomic groups,
  possessive repeats, ``\\Z``, ``(?x)``, a repeat count over 1000);
- the pattern uses syntax the two engines read differently (``{,n}``, ``[:alpha:]``);
- the text is not ASCII and the pattern uses ``\\w \\d \\s \\b`` or ignores case (RE2's
  classes are ASCII, Python's Unicode);
- ``\\s`` meets ``\\v`` or ``\\x1c``-``\\x1f`` (whitespace to Python only);
- ``$`` meets a text ending in a newline (Python's ``$`` also matches before it).

Matches are leftmost-first in both engines, so the first match (``matches``, ``=~``,
``search``) is the same; functions that iterate (``searchAll``, ``split``, ``replace``)
also give up on an empty match, where the engines step on differently.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from kiln.template.yaql_bounded import Unbounded

_FLAGS = {re.IGNORECASE: "i", re.MULTILINE: "m", re.DOTALL: "s"}
_KNOWN_FLAGS = re.IGNORECASE | re.MULTILINE | re.DOTALL | re.UNICODE
_CLASSES = re.compile(r"\\[wWdDsSbB]")
_SPACE_CLASS = re.compile(r"\\[sS]")
_PYTHON_ONLY_SPACE = re.compile("[\x0b\x1c-\x1f]")


@lru_cache(maxsize=256)
def _compile(pattern: str, flags: int) -> Any:
    """An RE2 program for a Python pattern and its flags, or None when RE2 cannot run
    it the same way."""
    if flags & ~_KNOWN_FLAGS or "{," in pattern or "[:" in pattern:
        return None
    import re2

    options = re2.Options()
    options.log_errors = False
    inline = "".join(letter for flag, letter in _FLAGS.items() if flags & flag)
    try:
        return re2.compile(f"(?{inline}){pattern}" if inline else pattern, options)
    except re2.error:
        return None


def equivalent(regexp: re.Pattern[str], text: str) -> Any:
    """The RE2 program matching as ``regexp`` does on ``text``; Unbounded if none."""
    pattern, flags = regexp.pattern, regexp.flags
    program = _compile(pattern, flags)
    if program is None:
        raise Unbounded("regex")
    if not text.isascii() and (flags & re.IGNORECASE or _CLASSES.search(pattern)):
        raise Unbounded("regex")
    if _SPACE_CLASS.search(pattern) and _PYTHON_ONLY_SPACE.search(text):
        raise Unbounded("regex")
    if "$" in pattern and text.endswith("\n"):
        raise Unbounded("regex")
    return program


class _NoEmptyMatches:
    """An RE2 program whose iterations stop the call at an empty match."""

    __slots__ = ("program",)

    def __init__(self, program: Any) -> None:
        self.program = program

    def search(self, text: str) -> Any:
        return self.program.search(text)

    def finditer(self, text: str) -> Any:
        for match in self.program.finditer(text):
            if match.start() == match.end():
                raise Unbounded("regex")
            yield match

    def split(self, text: str, max_split: int = 0) -> list[str]:
        return list(self._split(text, max_split, lambda m: list(m.groups())))

    def sub(self, repl: Any, text: str, count: int = 0) -> str:
        if not callable(repl) and "\\" in repl:
            raise Unbounded("regex")  # Python's template syntax: \1, \g<name>, \n
        return "".join(self._split(text, count,
                                   lambda m: [repl(m) if callable(repl) else repl]))

    def _split(self, text: str, limit: int, between: Any) -> Any:
        if limit < 0:
            raise Unbounded("regex")  # Python's reading of a negative count
        end = 0
        for n, match in enumerate(self.finditer(text)):
            if limit and n >= limit:
                break
            yield text[end:match.start()]
            yield from between(match)
            end = match.end()
        yield text[end:]


def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.UNICODE)


def guards(std_regex: Any) -> dict[Any, Any]:
    """Guarded versions of yaql's regex functions, by the original function."""

    def searching(original: Any, regexp_at: int, text_at: int) -> Any:
        """A function taking a compiled regexp and a text at the given positions."""
        def guarded(*args: Any) -> Any:
            args = list(args)  # type: ignore[assignment]
            text = args[text_at]
            args[regexp_at] = _NoEmptyMatches(equivalent(args[regexp_at], text))  # type: ignore[index]
            return original(*args)
        return guarded

    def by_string(test: bool) -> Any:
        def guarded(string: str, pattern: str) -> bool:
            found = equivalent(_compiled(pattern), string).search(string) is not None
            return found if test else not found
        return guarded

    def matches_(string: str, regexp: str) -> bool:
        return equivalent(_compiled(regexp), string).search(string) is not None

    return {
        std_regex.matches: searching(std_regex.matches, 0, 1),
        std_regex.matches_: matches_,
        std_regex.matches_operator_regex: searching(std_regex.matches_operator_regex, 1, 0),
        std_regex.matches_operator_string: by_string(True),
        std_regex.not_matches_operator_regex:
            searching(std_regex.not_matches_operator_regex, 1, 0),
        std_regex.not_matches_operator_string: by_string(False),
        std_regex.search: searching(std_regex.search, 1, 2),
        std_regex.search_all: searching(std_regex.search_all, 1, 2),
        std_regex.split: searching(std_regex.split, 0, 1),
        std_regex.split_string: searching(std_regex.split_string, 1, 0),
        std_regex.replace: searching(std_regex.replace, 0, 1),
        std_regex.replace_string: searching(std_regex.replace_string, 1, 0),
        std_regex.replace_by: searching(std_regex.replace_by, 1, 2),
        std_regex.replace_by_string: searching(std_regex.replace_by_string, 2, 1),
    }
