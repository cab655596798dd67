"""Bounds on what one function may produce, checked *before* the result is built.

A template of a few hundred bytes can ask for gigabytes: ``str_replace`` putting a long
value in place of every character of a long template, ``repeat`` over three 1,000-item
lists (10^9 combinations), ``list_join`` of a list holding the same long string many
times, a value serialised to JSON whose maps and lists share one another (memoised
results are shared, so the nesting can grow exponentially while memory does not).
Building such a result first and measuring it afterwards would already have frozen
the server. So every function that can produce more than it reads computes the size of
its result from its inputs, cheaply, and refuses with a 400 at its place when the size
is over the limit (``[kiln_engine] max_function_output_size``, passed in by the caller
as ``ctx.max_output``).

Sizes are *weights*: characters of a string, plus one per item of a list or map, keys
and values counted, through every level of nesting (:func:`weight`); the walk stops as
soon as the weight passes the cap, so measuring costs at most the cap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kiln.template.function import Function, ResolveContext

#: The default of ``max_function_output_size``: 4 Mi characters or items, eight times the
#: largest template Kiln accepts.
DEFAULT_MAX_OUTPUT = 4 * 1024 * 1024


def weight(value: Any, cap: int) -> int:
    """The weight of ``value`` (see the module docstring), or ``cap + 1`` once over cap."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        t = type(item)
        if t is str:
            total += len(item)
        elif t is dict:
            total += len(item)
            stack.extend(item.keys())
            stack.extend(item.values())
        elif t is list or t is tuple:
            total += len(item)
            stack.extend(item)
        else:
            total += 1
        if total > cap:
            return cap + 1
    return total


def check_size(node: Function, ctx: ResolveContext, size: int) -> None:
    """Raise at ``node``'s place if a result of ``size`` would be over the limit."""
    limit = ctx.max_output
    if size > limit:
        raise node.error(f'The result of "{node.fn_name}" would be larger than {limit} '
                         "characters or items (max_function_output_size)")


def check_weight(node: Function, ctx: ResolveContext, value: Any) -> None:
    """:func:`check_size` for a value about to be copied or serialised whole."""
    check_size(node, ctx, weight(value, ctx.max_output))
