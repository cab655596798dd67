"""Resources that own a stack user (Heat's ``StackUser``): suspending the stack disables
the user, resuming enables it again.

A stack user's credentials live inside a server (a wait-condition handle's password or
pre-signed URL, a scaling policy's alarm URL, an IAM user's access key, a deployed
server's polling credentials). While the stack is suspended Heat disables those users in
Keystone, so the credentials stop working until the stack resumes; a type whose own
suspend does something else (OS::Nova::Server suspends its server, a software deployment
runs its SUSPEND config) keeps its user enabled, as Heat's do. Types subclass
:class:`StackUserResource` instead of :class:`~kiln.resources.base.Resource`; a subclass
overriding suspend or resume calls ``super()`` to keep this behaviour.
"""

from __future__ import annotations

from kiln.resources.base import Resource, Token


class StackUserResource(Resource):
    """A resource whose stack user is disabled while its stack is suspended."""

    async def handle_suspend(self) -> Token:
        await self.runtime.set_stack_user_enabled(self.name, False)
        return None

    async def handle_resume(self) -> Token:
        await self.runtime.set_stack_user_enabled(self.name, True)
        return None
