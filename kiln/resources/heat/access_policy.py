"""OS::Heat::AccessPolicy: which resources an AWS::IAM::User's keys may describe."""

from __future__ import annotations

from kiln.errors import StackValidationFailed
from kiln.resources.base import Property, Resource, SupportStatus, Token


class AccessPolicy(Resource):
    type_name = "OS::Heat::AccessPolicy"
    support_status = SupportStatus()
    description = (
        "Resource for defining which resources can be accessed by users.\n\n"
        "NOTE: Now this resource is actually associated with an AWS user resource,\n"
        "not any OS:: resource though it is registered under the OS namespace below.\n\n"
        "Resource for defining resources that users are allowed to access by the\n"
        "DescribeStackResource API.")
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
