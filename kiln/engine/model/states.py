"""The vocabulary every engine module shares: what happens to a resource, and the states.

One typed :class:`Change` is used by update planning, update preview, events and
execution alike, so a preview can never disagree with what an update then does.
"""

from __future__ import annotations

import enum


class Change(enum.Enum):
    """What an action does to one resource."""

    NOOP = "noop"
    CREATE = "create"
    UPDATE = "update"                    # in place
    REPLACE_CBD = "replace_create_before_delete"
    REPLACE_DBC = "replace_delete_before_create"
    DELETE = "delete"

    @property
    def is_replace(self) -> bool:
        return self in (Change.REPLACE_CBD, Change.REPLACE_DBC)


# Heat's action and status names (stack and resource alike).
INIT = "INIT"
CREATE = "CREATE"
UPDATE = "UPDATE"
DELETE = "DELETE"
ROLLBACK = "ROLLBACK"
SUSPEND = "SUSPEND"
RESUME = "RESUME"
CHECK = "CHECK"
SNAPSHOT = "SNAPSHOT"
RESTORE = "RESTORE"
ADOPT = "ADOPT"

IN_PROGRESS = "IN_PROGRESS"
COMPLETE = "COMPLETE"
FAILED = "FAILED"

#: the status reason Heat writes on every resource transition
STATE_CHANGED = "state changed"
#: the stack status reason when an action exceeds the stack timeout (convergence wording)
TIMED_OUT = "Timed out"
#: what a resource interrupted by a user's cancel shows ("CREATE aborted (...)")
CANCELLED = "Operation cancelled"


def stack_started(action: str) -> str:
    return f"Stack {action} started"


def stack_completed(action: str) -> str:
    return f"Stack {action} completed successfully"


def resource_failed(action: str, reason: str) -> str:
    """A stack's reason when one of its resources failed."""
    return f"Resource {action} failed: {reason}"
