"""Giving freed memory back to the operating system after a big piece of work.

CPython frees a big stack's objects as soon as its action ends (a LiveStack makes no
reference cycles), but glibc's malloc keeps the freed pages of its heap mapped for
reuse: after 100 nested stacks of 1,000 resources were deleted the server still held
its peak. ``malloc_trim`` returns the free pages (also those in the middle of the heap,
glibc >= 2.8) at the cost of one walk over the heap's free lists, a few milliseconds
for hundreds of MB; the next big action maps them again. Not glibc: nothing happens.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    return trim


def release_freed_memory() -> bool:
    """Return the C heap's free pages to the OS; True if the C library could."""
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False
