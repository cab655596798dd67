"""Heat's YAML loader, and a faster way to run it for the common case.

Heat loads templates with PyYAML's safe loader (C parser when available) and keeps
timestamps as strings; :class:`HeatLoader` is that loader. PyYAML spends most of a
large template's load time in Python, not in libyaml: one implicit-type resolution
(a regular-expression match) per plain scalar, and a general constructor that goes
through several method calls, a generator and a hashability check per node.
:func:`load` gives the same data faster:

* :class:`FastLoader` memoises implicit resolution per scalar text for one document
  (a template repeats ``type``, ``properties``, ``get_param``... thousands of times);
* :func:`_Builder.build` constructs the node graph directly for the tags a template
  uses (``map``, ``seq``, ``str``, ``int``, ``float``, ``bool``, ``null`` and
  ``timestamp`` kept as a string), calling the safe constructor's own scalar functions
  so every value is exactly what PyYAML would give. Anything else (merge keys ``<<``,
  ``!!set``, ``!!binary``, unknown tags, unhashable keys) makes it give up, and the
  document is loaded again by :class:`HeatLoader`, which then produces PyYAML's data
  or its error (with line and column).

Aliases keep PyYAML's sharing: a node reached twice is constructed once, so alias
expansion costs no more here than in PyYAML (the caller still bounds it).
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

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

    The composer asks ``resolve`` for every node. Without path resolvers (the safe
    loader has none) the answer depends only on the node kind, the text and whether
    the scalar was plain, so it can be remembered; ``descend``/``ascend_resolver``
    only maintain path-resolver state and are skipped.
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
    """A node the fast construction does not handle; load with HeatLoader instead."""


class _Builder:
    """Constructs plain data from a composed node graph (see the module docstring)."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.converters = type(loader).yaml_constructors
        #: collection nodes already built, by id: aliases share one object, as in PyYAML
        self.built: dict[int, Any] = {}
        self.scalars: dict[tuple[str, str], Any] = {}

    def build(self, node: Any) -> Any:
        kind = type(node)
        if kind is ScalarNode:
            tag = node.tag
            if tag in (STR, TIMESTAMP):
                return node.value
            return self._scalar(node, tag)
        built = self.built.get(id(node))
        if built is not None:
            return built
        if kind is MappingNode and node.tag == MAP:
            out: dict[Any, Any] = {}
            self.built[id(node)] = out
            build = self.build
            for key_node, value_node in node.value:
                # plain strings (most keys and values) are taken as they are
                if key_node.tag == STR and type(key_node) is ScalarNode:
                    key = key_node.value
                else:
                    if key_node.tag in (_TAG + "merge", _TAG + "value"):
                        raise _Unusual
                    key = build(key_node)
                    if isinstance(key, list | dict):
                        raise _Unusual  # PyYAML's "found unhashable key", with marks
                if value_node.tag == STR and type(value_node) is ScalarNode:
                    out[key] = value_node.value
                else:
                    out[key] = build(value_node)
            return out
        if kind is SequenceNode and node.tag == SEQ:
            items: list[Any] = []
            self.built[id(node)] = items
            build = self.build
            for item in node.value:
                items.append(item.value if item.tag == STR and type(item) is ScalarNode
                             else build(item))
            return items
        raise _Unusual

    def _scalar(self, node: Any, tag: str) -> Any:
        key = (tag, node.value)
        try:
            return self.scalars[key]
        except KeyError:
            pass
        if tag not in _CONVERTED:
            raise _Unusual
        value = self.scalars[key] = self.converters[tag](self.loader, node)
        return value


def load(text: str) -> Any:
    """``yaml.load(text, Loader=HeatLoader)``, faster; raises what it raises."""
    loader = FastLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        try:
            return _Builder(loader).build(node)
        except _Unusual:
            pass
    finally:
        loader.dispose()
    return yaml.load(text, Loader=HeatLoader)
