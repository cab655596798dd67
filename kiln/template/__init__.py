"""Kiln's template layer: HOT and CloudFormation templates parsed, validated, resolved.

Pure: no I/O, no database, no configuration reads (callers pass limits). See
docs/contracts.md §2 for the seam the engine builds on.
"""

from __future__ import annotations

from kiln.template.bound import BoundTemplate, NullResolver
from kiln.template.definitions import ResourceDefinition, ResourceResolver, StackIdentity
from kiln.template.errors import TemplateError
from kiln.template.outputs import OutputResult
from kiln.template.template import Template, load_template
from kiln.template.versions import REGISTRY, TemplateVersion

__all__ = [
    "REGISTRY",
    "BoundTemplate",
    "NullResolver",
    "OutputResult",
    "ResourceDefinition",
    "ResourceResolver",
    "StackIdentity",
    "Template",
    "TemplateError",
    "TemplateVersion",
    "load_template",
]
