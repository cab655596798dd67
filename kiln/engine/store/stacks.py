"""The stack rows and their templates, as the engine's actions use them.

Each method is one transaction: a read on the facade's reader pool, or a write queued
for its batching writer (a write returns the writer's future, queued the moment it is
called, resolved once committed). What a method writes together stays together: a new
stack's row, resources and first event are one commit, and so is a finished delete.
"""

from __future__ import annotations

import asyncio
from collections.abc import Container, Mapping, Sequence
from typing import Any

from sqlalchemy.orm import Session

from kiln.db import events as db_events
from kiln.db import recovery as db_recovery
from kiln.db import resources as db_resources
from kiln.db import stacks as db_stacks
from kiln.db import templates as db_templates
from kiln.db.facade import Database
from kiln.db.records import (
    NewEvent,
    NewResource,
    NewStack,
    RawTemplateRecord,
    ResourceRecord,
    StackQuery,
    StackRecord,
)
from kiln.engine.model.states import COMPLETE, DELETE, FAILED
from kiln.errors import EntityNotFound

#: ``{resource name: (row id, uuid, created_at)}`` of rows just inserted
Inserted = dict[str, tuple[int, str, Any]]
#: the resource list's read: (stack, its rows) for the stack and each nested stack asked
#: for, and the child stacks among them (whose parent resources name them)
StackResources = tuple[list[tuple[StackRecord, list[ResourceRecord]]], list[StackRecord]]
#: what loading a stored stack reads: its row, its template (without the body when the
#: parsed template is cached), its resource rows
StoredStack = tuple[StackRecord, RawTemplateRecord, list[ResourceRecord]]


def _admit(s: Session, new: NewStack, rows: list[NewResource],
           event: NewEvent) -> tuple[StackRecord, Inserted]:
    rec = db_stacks.create_stack(s, new)
    created = db_resources.insert_resources(s, rows)
    db_events.add_events(s, [event])
    return rec, created


def _mark_deleted(s: Session, stack_id: str, event: NewEvent) -> None:
    db_stacks.update_stack(s, stack_id, {"action": DELETE, "status": COMPLETE,
                                         "status_reason": event.resource_status_reason})
    db_events.add_events(s, [event])
    db_stacks.soft_delete_stack(s, stack_id)


class StackStore:
    """Stack rows: admitting, loading, looking up, finishing."""

    def __init__(self, db: Database) -> None:
        self._db = db

    # -- admitting ----------------------------------------------------------------------
    async def admission(self, project_id: str, name: str, *,
                        count_stacks: bool) -> tuple[bool, int]:
        """Whether ``name`` is taken in the project and (``count_stacks``) how many
        stacks the project has, in one read."""
        def read(s: Session) -> tuple[bool, int]:
            taken = db_stacks.get_stack_by_name(s, project_id, name) is not None
            return taken, (db_stacks.count_project_stacks(s, project_id)
                           if count_stacks else 0)

        return await self._db.run(read)

    def admit(self, new: NewStack, rows: list[NewResource],
              event: NewEvent) -> asyncio.Future[tuple[StackRecord, Inserted]]:
        """The stack row (locked by the engine ``new`` names), its INIT resources and
        its first event, in one transaction."""
        return self._db.write(_admit, new, rows, event)

    def add_template(self, template: Mapping[str, Any], environment: Mapping[str, Any],
                     files: Mapping[str, str], hidden: Sequence[str]) -> asyncio.Future[int]:
        """A new raw template (an update's target); its id."""
        return self._db.write(db_stacks.create_raw_template, template, environment, files,
                              hidden)

    # -- reading ------------------------------------------------------------------------
    async def get(self, stack_id: str, *, show_deleted: bool = False) -> StackRecord | None:
        return await self._db.run(db_stacks.get_stack, stack_id, show_deleted=show_deleted)

    async def load(self, stack_id: str, *, show_deleted: bool = False,
                   parsed: Container[int] = ()) -> StoredStack:
        """A stored stack in one read; a template whose id is in ``parsed`` (the
        engine's template cache) comes without its body, which would only be parsed
        over. EntityNotFound when there is no such stack."""
        def read(s: Session) -> StoredStack:
            rec = db_stacks.get_stack(s, stack_id, show_deleted=show_deleted)
            if rec is None:
                raise EntityNotFound(f"The Stack ({stack_id}) could not be found.")
            if rec.raw_template_id in parsed:
                raw = db_templates.get_raw_template_without_body(s, rec.raw_template_id)
            else:
                raw = db_stacks.get_raw_template(s, rec.raw_template_id)
            return rec, raw, db_resources.list_resources(s, stack_id)

        return await self._db.run(read)

    async def raw_template(self, raw_template_id: int) -> RawTemplateRecord:
        return await self._db.run(db_stacks.get_raw_template, raw_template_id)

    async def raw_template_without_body(self, raw_template_id: int) -> RawTemplateRecord:
        """Its environment and files only (the body would only be parsed over)."""
        return await self._db.run(db_templates.get_raw_template_without_body,
                                  raw_template_id)

    async def find(self, key: str, *, project_id: str | None, name_project_id: str,
                   show_deleted: bool = False) -> StackRecord | None:
        """The stack whose id is ``key`` (within ``project_id``; None: any project),
        else the one named ``key`` in ``name_project_id``, in one read."""
        def read(s: Session) -> StackRecord | None:
            rec = db_stacks.get_stack(s, key, project_id=project_id,
                                      show_deleted=show_deleted)
            if rec is None:
                rec = db_stacks.get_stack_by_name(s, name_project_id, key,
                                                  show_deleted=show_deleted)
            return rec

        return await self._db.run(read)

    async def summaries(self, query: StackQuery) -> list[tuple[Any, ...]]:
        """The stack list's rows: plain tuples of the columns a summary shows, then its
        tags (:func:`kiln.db.stacks.list_stack_summaries`)."""
        return await self._db.run(db_stacks.list_stack_summaries, query)

    async def count(self, query: StackQuery) -> int:
        return await self._db.run(db_stacks.count_stacks, query)

    async def generation(self) -> int | None:
        """The ``stacks`` change counter (:func:`kiln.db.stacks.stacks_generation`)."""
        return await self._db.run(db_stacks.stacks_generation)

    async def tree(self, root_stack_id: str) -> list[StackRecord]:
        """Every stack of the tree under ``root_stack_id``."""
        return await self._db.run(db_stacks.list_tree_stacks, root_stack_id)

    async def with_resources(self, rec: StackRecord, nested_depth: int) -> StackResources:
        """The stack's resource rows, and those of its nested stacks down to
        ``nested_depth`` levels below it, with its children, in one read."""
        def read(s: Session) -> StackResources:
            out = [(rec, db_resources.list_resources(s, rec.id))]
            kids = db_stacks.list_child_stacks(s, rec.id)
            if nested_depth:
                for child in db_stacks.list_tree_stacks(s, rec.root_stack_id):
                    if child.id != rec.id and 0 < child.nested_depth - rec.nested_depth \
                            <= nested_depth:
                        out.append((child, db_resources.list_resources(s, child.id)))
                        kids.append(child)
            return out, kids

        return await self._db.run(read)

    async def children(self, stack_id: str) -> list[StackRecord]:
        """The stack's child stacks (not deleted)."""
        return await self._db.run(db_stacks.list_child_stacks, stack_id)

    # -- changing -----------------------------------------------------------------------
    def save_outputs(self, stack_id: str, outputs: Any) -> asyncio.Future[bool]:
        """The outputs of a stack at rest, resolved again after a side change."""
        return self._db.write(db_stacks.update_stack, stack_id, {"outputs": outputs})

    def set_tags(self, stack_id: str, tags: list[str]) -> asyncio.Future[None]:
        """The stack's tags, replaced (an update that changed them)."""
        return self._db.write(db_stacks.set_stack_tags, stack_id, tags)

    def request_cancel(self, stack_id: str, reason: str) -> asyncio.Future[bool]:
        """A cancel of the stack's queued action, kept as its reason for the engine that
        takes it (kiln.engine.service.unheld; the caller holds the row)."""
        return self._db.write(db_stacks.update_stack, stack_id, {"status_reason": reason})

    def mark_crashed(self, stack_id: str, reason: str) -> asyncio.Future[bool]:
        """FAILED after an engine bug ended its action (the action is left as it was)."""
        return self._db.write(db_stacks.update_stack, stack_id,
                              {"status": FAILED, "status_reason": reason})

    def fail_unloadable(self, stack_id: str, reason: str) -> asyncio.Future[None]:
        """Recovery's last resort for a stack it cannot load: its IN_PROGRESS resources,
        snapshots and the stack itself FAILED with ``reason``, and the stack's event, in
        one transaction."""
        return self._db.write(db_recovery.fail_stored_stack, stack_id, reason)

    def mark_deleted(self, stack_id: str, event: NewEvent) -> asyncio.Future[None]:
        """DELETE_COMPLETE, its event, and the row soft-deleted, in one transaction."""
        return self._db.write(_mark_deleted, stack_id, event)
