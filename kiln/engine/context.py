"""Who is asking: the request context every EngineService call receives."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field


@dataclass(frozen=True)
class RequestContext:
    project_id: str
    user_id: str = "admin"
    username: str = "admin"
    roles: tuple[str, ...] = ("admin",)
    is_admin: bool = True
    request_id: str = field(default_factory=lambda: "req-" + str(uuid.uuid4()))
    auth_token: str | None = None
