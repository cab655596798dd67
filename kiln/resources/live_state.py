"""What a plugin reads back for drift detection (Heat's ``get_live_state`` /
``parse_live_resource_data``): the physical object as the cloud shows it now, mapped back
to the template's property names.

A plugin answers :meth:`kiln.resources.base.Resource.live_state` with a :class:`LiveState`
(``expected``: the template's values of the properties it can read back, put in the form
the cloud gives them, such as a network's name resolved to its ID; ``actual``: the cloud's
values of the same properties), :data:`GONE` when the object no longer exists, or
:data:`NOT_CHECKED` when the type cannot be read back (a random string, a wait condition:
nothing outside Kiln can change them). Reading never changes anything.

The engine compares ``expected`` with ``actual`` property by property
(:mod:`kiln.engine.model.drift`); a plugin only shapes the two sides alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Final


class Unread(Enum):
    """What :meth:`Resource.live_state` answers when there is nothing to compare."""

    #: the type cannot be read back (AWS's NOT_CHECKED)
    NOT_CHECKED = "NOT_CHECKED"
    #: the physical object no longer exists (AWS's DELETED)
    GONE = "GONE"


NOT_CHECKED: Final = Unread.NOT_CHECKED
GONE: Final = Unread.GONE


@dataclass
class LiveState:
    """The two sides a drift check compares, under the template's property names."""

    expected: dict[str, Any] = field(default_factory=dict)
    actual: dict[str, Any] = field(default_factory=dict)


def template_set(properties: Mapping[str, Any]) -> dict[str, Any]:
    """The properties the template gave a value for (AWS checks only those: a default
    the template left alone is never drift)."""
    keys = getattr(properties, "user_keys", None)
    if keys is None:
        return {k: v for k, v in properties.items() if v is not None}
    return {k: properties[k] for k in keys if properties.get(k) is not None}


def pick(obj: Mapping[str, Any], names: Iterable[tuple[str, str]],
         expected: Mapping[str, Any]) -> LiveState:
    """A :class:`LiveState` of the *expected* properties that *names* maps
    (``(property, field of obj)``) to a field of the cloud's object *obj*."""
    state = LiveState()
    for prop, api_field in names:
        if prop in expected:
            state.expected[prop] = expected[prop]
            state.actual[prop] = obj.get(api_field)
    return state
