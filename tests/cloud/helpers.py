"""Small helpers the cloud tests share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def find(finder: Callable[..., Any], name_or_id: str, **kwargs: Any) -> Any:
    """An sdk ``find_*`` call that gives None for a missing object (without the
    deprecated ``ignore_missing=True``)."""
    from openstack import exceptions

    try:
        return finder(name_or_id, ignore_missing=False, **kwargs)
    except exceptions.NotFoundException:
        return None


def container_gone(sdk: Any, name: str) -> bool:
    """Whether Swift has no container *name* (a HEAD answers 404)."""
    from openstack import exceptions

    try:
        sdk.object_store.get_container_metadata(name)
    except exceptions.NotFoundException:
        return True
    return False


def outputs(stack: Any) -> dict[str, Any]:
    return {o["output_key"]: o["output_value"] for o in stack.outputs}


def delete_and_wait(heat: Any, stack_id: str, *, timeout: float = 180.0) -> str:
    """Delete a stack and wait until it is gone; returns the last status seen
    (DELETE_COMPLETE, or DELETE_FAILED with its reason appended)."""
    import time

    from heatclient import exc

    heat.stacks.delete(stack_id)
    deadline = time.monotonic() + timeout
    delay = 0.05
    while True:
        try:
            stack = heat.stacks.get(stack_id)
        except exc.HTTPNotFound:
            return "DELETE_COMPLETE"
        if stack.stack_status == "DELETE_COMPLETE":
            return "DELETE_COMPLETE"
        if stack.stack_status == "DELETE_FAILED":
            return f"DELETE_FAILED: {stack.stack_status_reason}"
        if time.monotonic() > deadline:
            raise AssertionError(f"stack {stack_id} still {stack.stack_status}")
        time.sleep(delay)  # status poll with backoff, bounded by the deadline
        delay = min(delay * 2, 0.5)


def physical_ids(heat: Any, stack: str) -> dict[str, str]:
    """Each resource's physical ID, by resource name."""
    return {r.resource_name: r.physical_resource_id for r in heat.resources.list(stack)}


def settled(heat: Any, stack: str, status: str, *, timeout: float = 180.0) -> Any:
    """Wait for the stack's action to end; assert it ended in *status* (the reason
    shown otherwise); return the stack."""
    from tests.support.clients import wait_for_stack_status

    current = wait_for_stack_status(heat, stack, timeout=timeout)
    assert current.stack_status == status, current.stack_status_reason
    return current
