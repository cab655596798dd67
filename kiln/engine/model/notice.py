"""The body of Heat's notifications about a stack (``kiln.notifications``).

Heat's keys, with Heat's oddities kept because consumers read them (``user_id`` carries
the user *name*, ``user_identity`` the id; ``create_at``), plus what Ceilometer's event
definitions and tree-aware consumers look for and Heat leaves out: ``name``,
``root_stack_id`` and ``parent`` (the owning stack's id, None at the top).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kiln.engine.model.live_stack import LiveStack

LOG = logging.getLogger(__name__)


@contextlib.contextmanager
def never_failing(event_type: str) -> Iterator[None]:
    """A notification is best-effort: a failure to build or queue one is logged, never
    the action's failure."""
    try:
        yield
    except Exception:
        LOG.exception("notification %s not sent", event_type)


def _isotime(value: dt.datetime | None) -> str | None:
    """Heat's isotime: UTC, whole seconds, a ``Z``."""
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def stack_payload(stack: LiveStack) -> dict[str, Any]:
    info = stack.info
    return {
        "tenant_id": info.project_id,
        "user_id": info.username,
        "user_identity": info.user_id,
        "username": info.username,
        "stack_identity": info.id,
        "stack_name": info.name,
        "state": f"{info.action}_{info.status}",
        "state_reason": info.status_reason,
        "create_at": _isotime(info.created_at),
        "updated_at": _isotime(info.updated_at),
        "tags": list(info.tags) or None,
        "description": stack.template.description,
        "name": info.name,
        "root_stack_id": info.root_stack_id or info.id,
        "parent": info.owner_id,
    }


def context(stack: LiveStack) -> dict[str, Any]:
    """The request context of the envelope (``_context_*``): who the stack acts for,
    never a token."""
    info = stack.info
    return {"user_id": info.user_id, "user_name": info.username,
            "project_id": info.project_id, "tenant": info.project_id}
