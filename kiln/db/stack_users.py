"""Stack users Kiln made in Keystone (table ``stack_user``), so they go with the stack.

One row per (stack, resource name): the first credential a resource's servers need makes
the user, later ones (a replacement of the same name, another keypair) reuse it, and the
stack's delete removes every user its rows name (kiln.engine.actions.identity).
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.orm import Session

from kiln.db.models import Stack, StackUser
from kiln.db.stacks import _changed


def get_user(s: Session, stack_id: str, resource_name: str) -> tuple[str, str] | None:
    """(user_id, project_id) of the resource's stack user, if it has one."""
    row = s.get(StackUser, (stack_id, resource_name))
    return (row.user_id, row.project_id) if row is not None else None


def add_user(s: Session, *, stack_id: str, resource_name: str, user_id: str,
             project_id: str) -> None:
    s.add(StackUser(stack_id=stack_id, resource_name=resource_name, user_id=user_id,
                    project_id=project_id))
    s.flush()


def list_users(s: Session, stack_id: str) -> list[tuple[str, str]]:
    """(resource_name, user_id) of every stack user of ``stack_id``."""
    rows = s.execute(sa.select(StackUser.resource_name, StackUser.user_id)
                     .where(StackUser.stack_id == stack_id)
                     .order_by(StackUser.created_at))
    return [(r[0], r[1]) for r in rows]


def delete_user(s: Session, stack_id: str, resource_name: str) -> None:
    s.execute(sa.delete(StackUser).where(StackUser.stack_id == stack_id,
                                         StackUser.resource_name == resource_name))


def user_project(s: Session, stack_id: str) -> str | None:
    """The stack's user project (``stack.stack_user_project_id``)."""
    return s.execute(sa.select(Stack.stack_user_project_id)
                     .where(Stack.id == stack_id)).scalar_one_or_none()


def top_stack(s: Session, stack_id: str) -> str:
    """The top-level stack of ``stack_id``'s tree (following each stack's owner)."""
    current = stack_id
    for _ in range(100):   # far deeper than max_nested_stack_depth allows
        owner = s.execute(sa.select(Stack.owner_id).where(Stack.id == current)
                          ).scalar_one_or_none()
        if not owner:
            return current
        current = str(owner)
    return current


def claim_user_project(s: Session, stack_ids: list[str], project_id: str) -> str:
    """Set the user project of the stacks that have none yet (a root stack and the
    nested stack asking); returns the root's project, which wins a race."""
    root = stack_ids[0]
    _changed(s)
    s.execute(sa.update(Stack).where(Stack.id == root,
                                     Stack.stack_user_project_id.is_(None))
              .values(stack_user_project_id=project_id))
    winner = user_project(s, root) or project_id
    for other in stack_ids[1:]:
        s.execute(sa.update(Stack).where(Stack.id == other)
                  .values(stack_user_project_id=winner))
    return winner
