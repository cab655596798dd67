"""Who is asking: the request context every EngineService call receives."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field


@dataclass(frozen=True)
class RequestContext:
    """A caller of one project. ``is_admin`` (every project's stacks by id, no quotas) is
    never the default: a caller is confined to ``project_id`` unless granted more.
    ``lists_all_projects`` grants only the ``global_tenant`` stack listing; the no-auth
    API gives it, as an operator's policy file gives Heat's ``stacks:global_index``."""

    project_id: str
    user_id: str = "admin"
    username: str = "admin"
    roles: tuple[str, ...] = ("member",)
    is_admin: bool = False
    lists_all_projects: bool = False
    request_id: str = field(default_factory=lambda: "req-" + str(uuid.uuid4()))
    auth_token: str | None = None
