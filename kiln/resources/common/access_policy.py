"""What an AWS::IAM::User asks of its policies (OS::Heat::AccessPolicy): which resources
its keys may describe."""

from __future__ import annotations

from kiln.errors import StackValidationFailed
from kiln.resources.base import Property, Resource, Token


class AccessPolicyBase(Resource):
    """The resources a policy lets an AWS::IAM::User's keys describe."""

    properties_schema = {
        "AllowedResources": Property(
            "list", "Resources that users are allowed to access by the "
            "DescribeStackResource API.", required=True),
    }

    def validate(self) -> None:
        super().validate()
        for name in self.properties["AllowedResources"]:
            if self.runtime.resource(str(name)) is None:
                raise StackValidationFailed(f"AccessPolicy resource {name} not in stack")

    async def handle_create(self) -> Token:
        return None

    def access_allowed(self, resource_name: str) -> bool:
        return resource_name in (self.properties["AllowedResources"] or [])
