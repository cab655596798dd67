"""The plugin lookup the engine injects into every live stack it builds.

A type name the environment's registry resolved is either a provider template (a file
of the stack, run as a nested stack) or a type of the global registry: built-ins,
``plugin_dirs`` and the ``kiln.resources`` entry points (:mod:`kiln.resources.registry`).
"""

from __future__ import annotations

from collections.abc import Mapping

from kiln.resources.base import Resource
from kiln.resources.provider import provider_class
from kiln.resources.registry import global_registry
from kiln.template.environment import ResourceRegistry


def find_plugin(type_name: str, files: Mapping[str, str]) -> type[Resource]:
    """:class:`~kiln.engine.model.live_stack.PluginLookup` over the global registry."""
    if ResourceRegistry.is_template(type_name):
        return provider_class(type_name, files)
    return global_registry().get(type_name)
