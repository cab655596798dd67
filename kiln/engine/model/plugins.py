"""Which plugin class runs each resource of a stack, and the slot holding its instance.
"""

from __future__ import annotations

from typing import Any

from kiln.engine.model.live_stack import LiveStack, Slot
from kiln.errors import KilnError, ResourceTypeNotFound, StackValidationFailed
from kiln.resources.base import Resource, ResourceState
from kiln.resources.provider import TemplateResource
from kiln.template.definitions import NO_NAMES, ResourceDefinition, name_set


def plugin_class(stack: LiveStack, definition: ResourceDefinition) -> tuple[str, type[Resource]]:
    """(final type name, plugin class) for a definition, through the stack's registry."""
    registry = stack.environment.registry
    # without per-resource registry entries the answer depends on the type alone:
    # resolve each type once per stack (a stack of 1,000 of one type asks once)
    if stack.type_cache_usable is None:
        stack.type_cache_usable = not (registry.as_dict().get("resources") or {})
    if stack.type_cache_usable:
        hit = stack.type_cache.get(definition.type)
        if hit is not None:
            return hit  # type: ignore[no-any-return]
    found = _plugin_class(stack, registry, definition)
    if stack.type_cache_usable:
        stack.type_cache[definition.type] = found
    return found


def _plugin_class(stack: LiveStack, registry: Any,
                  definition: ResourceDefinition) -> tuple[str, type[Resource]]:
    from kiln.resources.registry import global_registry

    resolved = registry.resolve(definition.type, definition.name)
    if registry.is_template(resolved):
        from kiln.resources.provider import provider_class

        return resolved, provider_class(resolved, stack.files)
    try:
        return resolved, global_registry().get(resolved)
    except (KeyError, ResourceTypeNotFound):
        raise ResourceTypeNotFound(
            f'The Resource Type ({definition.type}) could not be found.') from None


def check_types(stack: LiveStack) -> None:
    """What Heat checks as it makes each enabled resource, before it looks at the
    template's references, cycles and parameter values: every type exists (so an
    unknown type is reported first), then no name contains ``/``."""
    names = stack.bound.enabled_resource_names()
    for name in names:
        rtype = stack.template.resources[name].type
        if isinstance(rtype, str):
            plugin_class(stack, ResourceDefinition(name=name, type=rtype))
    for name in names:
        if "/" in name:
            raise StackValidationFailed('Resource name may not contain "/"',
                                        path=("resources", name))


def validates_definition(plugin: type[Resource] | Resource) -> bool:
    """Whether a plugin's definition is validated (and its properties resolved) at
    create; OS::Heat::None's is not, as in Heat."""
    return plugin.validates_definition


def declared_class(stack: LiveStack, name: str) -> type[Resource]:
    """The plugin class of resource ``name`` as the template declares it (its slot may
    not exist yet: the template checks ask while definitions are built); an unknown
    type raises Heat's ResourceTypeNotFound."""
    slot = stack.slots.get(name)
    if slot is not None:
        return type(slot.plugin)
    snippet = stack.template.resources[name]
    rtype = snippet.type if isinstance(snippet.type, str) else ""
    return plugin_class(stack, ResourceDefinition(name=name, type=rtype))[1]


def make_slot(stack: LiveStack, definition: ResourceDefinition,
              state: ResourceState | None = None, *,
              requires: frozenset[str] = NO_NAMES) -> Slot:
    type_name, cls = plugin_class(stack, definition)
    plugin = cls(definition.name, definition, stack.runtime, state or ResourceState())
    # a plugin whose definition Heat does not validate keeps no properties: they are
    # final as they are (nothing to resolve at create)
    return Slot(name=definition.name, definition=definition, type_name=type_name,
                plugin=plugin, requires=requires,
                saved_data=dict(plugin.state.data),
                props_final=not validates_definition(cls))


def add_template_slots(stack: LiveStack) -> None:
    deps = stack.bound.dependencies()
    for name, definition in stack.bound.resource_definitions().items():
        stack.slots[name] = make_slot(stack, definition,
                                      requires=name_set(deps.get(name, ())))


def _attributes_fixed(cls: type[Resource]) -> bool:
    """Whether Heat checks ``get_attr`` names against this plugin's schema: not for
    plugins whose attributes are dynamic (they answer any name) nor provider templates."""
    return (cls.get_attribute is Resource.get_attribute
            and not issubclass(cls, TemplateResource))


def attribute_known(stack: LiveStack, name: str, attr: str) -> bool:
    """Whether ``get_attr: [name, attr]`` names an attribute resource ``name`` can have
    (the template layer asks while it builds definitions, as Heat checks at validation)."""
    snippet = stack.template.resources.get(name)
    if snippet is None or not isinstance(snippet.type, str):
        return True
    try:
        _, cls = plugin_class(stack, ResourceDefinition(name=name, type=snippet.type))
    except KilnError:
        return True  # the unknown type is reported with the resource's own error
    return not _attributes_fixed(cls) or attr in cls.attribute_names()
