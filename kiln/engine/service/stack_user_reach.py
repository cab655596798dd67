"""What a stack user (keystone mode) may reach: the resource it was made for, nothing else.

Kiln makes a Keystone user per resource that hands credentials to servers (a server's
POLL_SERVER_HEAT login, a HEAT_SIGNAL deployment's or handle's password, the user behind
a CFN keypair), each with only the ``heat_stack_user_role`` role. Heat's policy lets such
a user read metadata and signal, but Heat checks which resource only for
DescribeStackResource; Kiln checks it everywhere (issue 22): a caller with that role
signals only a resource whose stack user it is, and reads only those and what their
plugins allow (an AWS::IAM::User's AccessPolicy), else 403. Callers without the role
(the stack's owner, an admin, no-auth mode) are not concerned, and pay nothing.
"""

from __future__ import annotations

from kiln.engine.model.context import RequestContext
from kiln.engine.service.shared import ServiceCore
from kiln.errors import Forbidden

DEFAULT_ROLE = "heat_stack_user"


def is_stack_user(service: ServiceCore, ctx: RequestContext) -> bool:
    role = str(getattr(service.conf, "heat_stack_user_role", None) or DEFAULT_ROLE)
    return not ctx.is_admin and role in ctx.roles


async def owned(service: ServiceCore, ctx: RequestContext, stack_id: str) -> list[str]:
    """The resources of ``stack_id`` whose stack user the caller is."""
    users = await service.store.stack_users.users_of(stack_id)
    return [name for name, user_id in users if user_id == ctx.user_id]


async def confine(service: ServiceCore, ctx: RequestContext, stack_id: str,
                  resource_name: str, *, read: bool) -> None:
    """Raise Forbidden unless a stack-user caller may signal (or, ``read``, read)
    ``resource_name`` of ``stack_id``; other callers pass."""
    if not is_stack_user(service, ctx):
        return
    mine = await owned(service, ctx, stack_id)
    if resource_name in mine:
        return
    if read and mine:
        stack = await service.engine.load(stack_id)
        for name in mine:
            slot = stack.slots.get(name)
            if slot is not None and slot.plugin.access_allowed(resource_name):
                return
    what = "read" if read else "signal"
    raise Forbidden(f"This stack user may not {what} {resource_name}: it may reach only "
                    "the resource it was made for.")


async def confine_server(service: ServiceCore, ctx: RequestContext, server_id: str) -> None:
    """Raise Forbidden unless a stack-user caller is the stack user of a resource whose
    physical id is ``server_id`` (the server whose deployments it reads)."""
    if not is_stack_user(service, ctx):
        return
    for rec, _stack in await service.store.resources.by_physical_id(server_id):
        if rec.name in await owned(service, ctx, rec.stack_id):
            return
    raise Forbidden("This stack user may not read the deployments of another server.")
