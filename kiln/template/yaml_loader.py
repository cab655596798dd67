"""Heat's YAML loader, and a faster way to run it for the common case.

Heat loads templates with PyYAML's safe loader (C parser when available) and keeps
timestamps as strings; :class:`HeatLoader` is that loader. PyYAML spends most of a
large template's load time in Python, not in libyaml: it composes a graph of node
objects (two marks each), resolves the implicit type of every plain scalar with a
regular expression, then constructs the data through several calls, a generator and a
hashability check per node. :func:`load` gives the same data faster:

* the data is built straight from the parser's events, as they come, so no node graph
  is kept (at 10,000 resources the graph alone outgrows the CPU caches);
* :class:`FastLoader` memoises implicit resolution per scalar text for one document (a
  template repeats ``type``, ``properties``, ``get_param``... thousands of times);
* only the tags a template uses are built here (``map``, ``seq``, ``str``, ``int``,
  ``float``, ``bool``, ``null`` and ``timestamp`` kept as a string), with the safe
  constructor's own scalar functions, so every value is what PyYAML gives. Anything
  else (merge keys ``<<``, ``!!set``, ``!!binary``, unknown tags, unhashable keys,
  undefined or repeated anchors, a second document) makes it give up, and the document
  is loaded again by :class:`HeatLoader`, which then produces PyYAML's data or its
  error (with line and column).

Aliases keep PyYAML's sharing: an anchored value is built once and every alias is the
same object, so alias expansion costs no more here than in PyYAML (the caller still
bounds it).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import yaml
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
    StreamStartEvent,
)
from yaml.nodes import ScalarNode, SequenceNode

_BASE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_TAG = "tag:yaml.org,2002:"
STR, MAP, SEQ = _TAG + "str", _TAG + "map", _TAG + "seq"
TIMESTAMP = _TAG + "timestamp"
#: scalar tags whose value the safe constructor computes from the text alone
_CONVERTED = frozenset({_TAG + "int", _TAG + "float", _TAG + "bool", _TAG + "null"})


def _construct_str(loader: Any, node: Any) -> Any:
    return loader.construct_scalar(node)


class HeatLoader(_BASE_LOADER):  # type: ignore[misc]
    """Heat's loader: the safe loader, with timestamps (``2016-10-14``) as strings."""


class PyHeatLoader(yaml.SafeLoader):
    """The pure-Python safe loader, used only to word a syntax error as Heat does (its
    messages quote the offending line)."""


for _cls in (HeatLoader, PyHeatLoader):
    _cls.add_constructor(TIMESTAMP, _construct_str)
    _cls.add_constructor(STR, _construct_str)


class FastLoader(HeatLoader):
    """HeatLoader with implicit resolution memoised per scalar text (one document).

    Without path resolvers (the safe loader has none) the tag of a node depends only on
    its kind, its text and whether the scalar was plain, so it can be remembered; the
    path-resolver bookkeeping (``descend``/``ascend_resolver``) is skipped.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._plain_tags: dict[str, str] = {}

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is ScalarNode:
            if not implicit[0]:
                return STR
            tags = self._plain_tags
            tag = tags.get(value)
            if tag is None:
                tag = tags[value] = super().resolve(kind, value, implicit)
            return tag
        return SEQ if kind is SequenceNode else MAP

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        pass

    def ascend_resolver(self) -> None:
        pass


class _Unusual(Exception):
    """Something the fast construction does not handle; load with HeatLoader instead."""


_NOTHING: Any = object()


class Shape(NamedTuple):
    """How big the data is once aliases are expanded (what the parser's shape check
    bounds): ``elements`` counted as items of every map and list, ``depth`` in levels of
    maps and lists."""

    elements: int
    depth: int


def _construct(loader: Any) -> tuple[Any, Shape]:
    """The document's data and its shape, built from the parser's events as they come
    (so no node graph is kept: at 10,000 resources that graph alone outgrows the CPU
    caches, and so does a second walk over the data to measure it).

    Follows PyYAML's composer and safe constructor for the tags a template uses; raises
    _Unusual for anything else, or for anything PyYAML would reject (an undefined or
    repeated anchor, an unhashable key, a second document) or that is recursive, so the
    caller can let HeatLoader produce the data or the error.
    """
    get = loader.get_event
    resolve = loader.resolve
    converters = type(loader).yaml_constructors
    scalars: dict[tuple[str, str], Any] = {}
    anchors: dict[str, Any] = {}
    #: shapes of anchored maps and lists, by id, once they are complete
    shapes: dict[int, tuple[int, int]] = {}
    if type(get()) is not StreamStartEvent:
        raise _Unusual
    event = get()
    if type(event) is StreamEndEvent:
        return None, Shape(0, 0)
    if type(event) is not DocumentStartEvent:
        raise _Unusual
    #: the containers being filled, outermost first, each with its state:
    #: (container, key, has_key, elements below it, levels below it, anchor)
    stack: list[tuple[Any, Any, bool, int, int, Any]] = []
    container: Any = None
    key: Any = None
    has_key = False
    below = levels = 0
    anchor: Any = None
    while True:
        event = get()
        kind = type(event)
        size = height = 0  # of the value below, if it is a map or a list
        if kind is ScalarEvent:
            value = event.value
            tag = event.tag
            if tag is None or tag == "!":
                tag = resolve(ScalarNode, value, event.implicit)
            if tag != STR and tag != TIMESTAMP:
                cached = scalars.get((tag, value), _NOTHING)
                if cached is _NOTHING:
                    if tag not in _CONVERTED:
                        raise _Unusual
                    cached = scalars[(tag, value)] = converters[tag](
                        loader, ScalarNode(tag, value))
                value = cached
            if event.anchor is not None:
                _anchor(anchors, event.anchor, value)
        elif kind is MappingStartEvent or kind is SequenceStartEvent:
            mapping = kind is MappingStartEvent
            tag = event.tag
            if tag is not None and tag != "!" and tag != (MAP if mapping else SEQ):
                raise _Unusual
            stack.append((container, key, has_key, below, levels, anchor))
            container, key, has_key = ({} if mapping else []), None, False
            below = levels = 0
            anchor = event.anchor
            if anchor is not None:
                _anchor(anchors, anchor, container)
            continue
        elif kind is MappingEndEvent or kind is SequenceEndEvent:
            value = container
            size, height = len(value) + below, levels + 1
            if anchor is not None:
                shapes[id(value)] = (size, height)
            container, key, has_key, below, levels, anchor = stack.pop()
        elif kind is AliasEvent:
            value = anchors.get(event.anchor, _NOTHING)
            if value is _NOTHING:
                raise _Unusual  # PyYAML: found undefined alias
            if type(value) is dict or type(value) is list:
                shape = shapes.get(id(value))
                if shape is None:
                    raise _Unusual  # recursive: the shape check needs the whole walk
                size, height = shape
        else:
            raise _Unusual
        if container is None:  # the document's root
            break
        if size:
            below += size
        if height > levels:
            levels = height
        if type(container) is list:
            container.append(value)
        elif has_key:
            container[key] = value
            has_key = False
        else:
            if type(value) is dict or type(value) is list:
                raise _Unusual  # PyYAML: found unhashable key
            key, has_key = value, True
    if type(get()) is not DocumentEndEvent or type(get()) is not StreamEndEvent:
        raise _Unusual  # PyYAML: expected a single document in the stream
    return value, Shape(size, height)


def _anchor(anchors: dict[str, Any], name: str, value: Any) -> None:
    if name in anchors:
        raise _Unusual  # PyYAML: found duplicate anchor
    anchors[name] = value


def load_with_shape(text: str) -> tuple[Any, Shape | None]:
    """``yaml.load(text, Loader=HeatLoader)``, faster, and the data's :class:`Shape`
    when it was measured on the way (None when the plain loader had to be used);
    raises what that raises."""
    loader = FastLoader(text)
    try:
        return _construct(loader)
    except _Unusual:
        pass
    finally:
        loader.dispose()
    return yaml.load(text, Loader=HeatLoader), None


def load(text: str) -> Any:
    """``yaml.load(text, Loader=HeatLoader)``, faster; raises what it raises."""
    return load_with_shape(text)[0]


def describe_error(exc: yaml.YAMLError, name: str) -> str:
    """A YAML error in Kiln's words, pointing at its place: ``t.yaml, line 5, column 27:
    expected ',' or '}', but got '<stream end>' (in the flow mapping started at line 5,
    column 17)``. PyYAML's own text says ``"<unicode string>"`` for the file and repeats
    the snippet; the caller knows the file's name (the CLI its path, the API a nested
    template's key in ``files``)."""
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    context = getattr(exc, "context", None)
    context_mark = getattr(exc, "context_mark", None)
    if mark is None:
        mark, context_mark = context_mark, None
    where = name if mark is None else f"{name}, line {mark.line + 1}, column {mark.column + 1}"
    text = f"{where}: {problem or context or exc}"
    if problem and context:
        started = ("" if context_mark is None else
                   f" at line {context_mark.line + 1}, column {context_mark.column + 1}")
        text += f" ({context}{started})"
    return text
