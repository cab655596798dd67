"""A placeholder that can stand in for any resource type: OS::Heat::None, and the
hidden types Heat keeps only so that old templates load (OS::Glance::Image)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, ClassVar

from kiln.resources.base import Properties, Resource, Token
from kiln.template.definitions import ResourceDefinition


class Placeholder(Resource):
    """Accepts any properties and answers every attribute with None.

    Operators map real types to it in an environment to switch resources off, so it must
    never reject a template written for the type it replaces, and never update or replace.
    """

    side_effect_free = True
    #: Heat never validates a None's definition at create (its ``validate`` does
    #: nothing) nor resolves its properties (it keeps none): the engine skips both, so
    #: a template whose real type was stubbed out never fails on the stub's properties.
    #: Its metadata is still resolved.
    validates_definition: ClassVar[bool] = False

    @classmethod
    def make_properties(cls, resource_name: str, resolved: Any) -> Properties:
        return Properties({}, {})

    @property
    def properties(self) -> Properties:
        return Properties({}, {})

    @properties.setter
    def properties(self, value: Properties) -> None:
        pass

    async def handle_create(self) -> Token:
        self.resource_id = str(uuid.uuid4())
        self.data["is_placeholder"] = "True"
        return None

    def needs_update(self, new_definition: ResourceDefinition,
                     prop_diff: Mapping[str, Any]) -> bool:
        return False

    def diff_properties(self, old: Properties, new: Properties) -> dict[str, Any]:
        return {}

    def get_attribute(self, name: str, *path: Any) -> Any:
        return None

    def all_attributes(self) -> dict[str, Any]:
        return {}
