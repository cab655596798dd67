"""EngineService: a stack's history. Each create and update keeps the template,
environment and files it brought (``max_stack_versions`` per stack); any two are
diffable, and any one can be made a change set ("update to version N", in
:mod:`.changesets`), reviewed and executed like any other.

What is shown of an environment masks the parameters the version's template hides.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import logging
from collections.abc import Mapping
from typing import Any

import yaml

from kiln.db.records import StackVersionRecord
from kiln.engine.model.context import RequestContext
from kiln.engine.model.live_stack import LiveStack
from kiln.engine.service.changeset_plan import MASK
from kiln.engine.service.interface import Identity
from kiln.engine.service.replies import isotime
from kiln.engine.service.shared import ServiceCore
from kiln.errors import EntityNotFound

LOG = logging.getLogger(__name__)


def _hidden(template: Any, environment: Mapping[str, Any]) -> set[str]:
    names = set(environment.get("encrypted_param_names") or ())
    if isinstance(template, Mapping):
        for section in ("parameters", "Parameters"):
            for key, schema in (template.get(section) or {}).items():
                if isinstance(schema, Mapping) and (
                    schema.get("hidden") in (True, "true", "True")
                    or str(schema.get("NoEcho", "")).lower() == "true"
                ):
                    names.add(key)
    return names


def shown_environment(template: Any, environment: Any) -> dict[str, Any]:
    """The environment as a user may see it: hidden parameters masked, Kiln's own
    bookkeeping key left out."""
    env = dict(environment or {})
    hidden = _hidden(template, env)
    env.pop("encrypted_param_names", None)
    for key in ("parameters", "parameter_defaults"):
        if isinstance(env.get(key), Mapping):
            env[key] = {k: (MASK if k in hidden else v) for k, v in env[key].items()}
    return env


def _text(version: StackVersionRecord) -> list[str]:
    document = {
        "template": version.template,
        "environment": shown_environment(version.template, version.environment),
        "files": sorted(version.files or {}),
    }
    text = yaml.safe_dump(json.loads(json.dumps(document, default=str)), sort_keys=False)
    return text.splitlines(keepends=True)


def _log_failure(written: asyncio.Future[int]) -> None:
    if not written.cancelled() and written.exception() is not None:
        LOG.error("a stack version was not kept: %s", written.exception())


class HistoryOps:
    """A stack's versions: kept on each create and update, listed, shown and diffed.
    Restoring one is a change set (:mod:`.changesets`)."""

    def __init__(self, core: ServiceCore) -> None:
        self.core = core

    def remember_version(self, stack: LiveStack, action: str) -> None:
        """Keep what ``stack`` now runs as its next version (create and update).

        Called just before the action is launched, and not awaited: the request's answer
        used to wait for this write's commit, queued behind the action's own first
        writes, which made a 1,000-resource create's POST answer 0.1-0.5 s later. The
        database writer commits in queue order, so the version is durable no later than
        anything the launched action writes: a client that sees a resource's progress or
        the action's end can list its version. A failed write is logged; the action is
        not affected."""
        keep = int(self.core.conf.max_stack_versions)
        if keep <= 0:
            return
        written = self.core.store.versions.add(
            stack.info.id,
            action,
            stack.template.raw,
            stack.environment.env_as_dict(),
            dict(stack.files),
            keep,
        )
        written.add_done_callback(_log_failure)

    async def version(
        self, ctx: RequestContext, stack_identity: Identity, version: int
    ) -> StackVersionRecord:
        rec = await self.core.find(ctx, stack_identity)
        found = await self.core.store.versions.get(rec.id, version)
        if found is None:
            raise EntityNotFound(f"Version {version} of stack {rec.name} is not kept")
        return found

    def _summary(self, version: StackVersionRecord) -> dict[str, Any]:
        return {
            "version": version.version,
            "action": version.action,
            "created_at": isotime(version.created_at),
        }

    async def list_stack_versions(
        self, ctx: RequestContext, stack_identity: Identity
    ) -> list[dict[str, Any]]:
        rec = await self.core.find(ctx, stack_identity)
        return [self._summary(v) for v in await self.core.store.versions.of_stack(rec.id)]

    async def show_stack_version(
        self, ctx: RequestContext, stack_identity: Identity, version: int
    ) -> dict[str, Any]:
        found = await self.version(ctx, stack_identity, version)
        return {
            **self._summary(found),
            "template": found.template,
            "environment": shown_environment(found.template, found.environment),
            "files": sorted(found.files or {}),
        }

    async def diff_stack_versions(
        self, ctx: RequestContext, stack_identity: Identity, old: int, new: int
    ) -> dict[str, Any]:
        """A unified diff of two versions (template, environment with hidden values
        masked, file names)."""
        before = await self.version(ctx, stack_identity, old)
        after = await self.version(ctx, stack_identity, new)
        diff = difflib.unified_diff(_text(before), _text(after), f"version {old}", f"version {new}")
        return {"from": old, "to": new, "diff": "".join(diff)}
