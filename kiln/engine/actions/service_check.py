"""Heat's service check: a resource whose OpenStack service is not in the caller's
catalog is refused before anything else is judged of it (HEAT-E99001
ResourceTypeUnavailable). Apart from kiln.engine.actions.validation so that a create's
own checks (kiln.engine.actions.admit) can make it per resource without that module."""

from __future__ import annotations

from kiln.engine.model.live_stack import LiveStack, Slot
from kiln.errors import ResourceTypeUnavailable


def check_services(stack: LiveStack, catalog: frozenset[str]) -> None:
    """Heat's service check: a resource whose OpenStack service is not in the *catalog*
    is a 400 ResourceTypeUnavailable naming the service and the type."""
    for slot in stack.slots.values():
        check_service(slot, catalog)


def check_service(slot: Slot, catalog: frozenset[str] | None) -> None:
    """One resource's service check. Heat makes it first of all of a resource's own
    checks, so a missing service is reported before that resource's property errors;
    None (no catalog at hand) checks nothing."""
    if catalog is None:
        return
    from kiln.clients.availability import missing_service

    cls = type(slot.plugin)
    reason = missing_service(cls, catalog)
    if reason is not None:
        raise ResourceTypeUnavailable(slot.definition.type, cls.client_name, reason)
