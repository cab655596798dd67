"""A live stack's slots: one per resource, holding its plugin instance.

The plugin class comes from :meth:`LiveStack.plugin_class
<kiln.engine.model.live_stack.LiveStack.plugin_class>` (the environment's registry, then
the lookup the engine injected).
"""

from __future__ import annotations

from kiln.engine.model.live_stack import LiveStack, Slot
from kiln.errors import StackValidationFailed
from kiln.resources.base import ResourceState
from kiln.template.definitions import NO_NAMES, ResourceDefinition, name_set


def check_types(stack: LiveStack) -> None:
    """What Heat checks as it makes each enabled resource, before it looks at the
    template's references, cycles and parameter values: every type exists (so an
    unknown type is reported first), then no name contains ``/``."""
    names = stack.bound.enabled_resource_names()
    for name in names:
        rtype = stack.template.resources[name].type
        if isinstance(rtype, str):
            stack.plugin_class(ResourceDefinition(name=name, type=rtype))
    for name in names:
        if "/" in name:
            raise StackValidationFailed('Resource name may not contain "/"',
                                        path=("resources", name))


def make_slot(stack: LiveStack, definition: ResourceDefinition,
              state: ResourceState | None = None, *,
              requires: frozenset[str] = NO_NAMES) -> Slot:
    type_name, cls = stack.plugin_class(definition)
    plugin = cls(definition.name, definition, stack.runtime, state or ResourceState())
    # a plugin whose definition Heat does not validate keeps no properties: they are
    # final as they are (nothing to resolve at create)
    return Slot(name=definition.name, definition=definition, type_name=type_name,
                plugin=plugin, requires=requires,
                saved_data=dict(plugin.state.data),
                props_final=not cls.validates_definition)


def add_template_slots(stack: LiveStack) -> None:
    deps = stack.bound.dependencies()
    for name, definition in stack.bound.resource_definitions().items():
        stack.slots[name] = make_slot(stack, definition,
                                      requires=name_set(deps.get(name, ())))
