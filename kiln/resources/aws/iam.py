"""AWS::IAM::User and AWS::IAM::AccessKey: a template's own EC2 credentials.

In keystone mode the user is a stack user in Keystone's stack domain (as Heat makes it)
and the keypair a Keystone EC2 credential of that user, checked by Keystone's ec2tokens;
without an identity service Kiln issues the keypair itself, so a template's
access key signs requests to Kiln's CFN API (cfn-hup, cfn-get-metadata, cfn-init on a
server) exactly as it would sign Heat's. What a key may read is its user's policies
(OS::Heat::AccessPolicy): DescribeStackResource of the resources they allow, in this
stack only.
"""

from __future__ import annotations

from typing import Any

from kiln.resources.base import (
    Attribute,
    Property,
    Resource,
    ResourceFailure,
    SupportStatus,
    Token,
)
from kiln.resources.common.access_policy import AccessPolicyBase
from kiln.resources.common.stack_user import StackUserResource
from kiln.template.constraints import AllowedValues


class User(StackUserResource):
    type_name = "AWS::IAM::User"
    support_status = SupportStatus()
    description = "No description available"
    secret_data = frozenset({"password"})
    properties_schema = {
        "Path": Property("string", "Not Implemented."),
        "Groups": Property("list", "Not Implemented."),
        "LoginProfile": Property("map", "A login profile for the user.", schema={
            "Password": Property("string")}),
        "Policies": Property("list", "Access policies to apply to the user."),
    }

    def _policies(self) -> list[Any]:
        """The OS::Heat::AccessPolicy resources named in Policies (other entries, such as
        embedded IAM documents, are ignored, as Heat ignores them)."""
        found = []
        for name in self.properties["Policies"] or []:
            if isinstance(name, str):
                found.append(self.runtime.resource(name))
        return found

    async def handle_create(self) -> Token:
        for policy in self._policies():
            if not isinstance(policy, AccessPolicyBase):
                raise ResourceFailure(
                    f"The Referenced Attribute ({self.name} Policies) is incorrect.",
                    exc_type="InvalidTemplateAttribute")
        profile = self.properties["LoginProfile"] or {}
        if profile.get("Password"):
            self.data["password"] = profile["Password"]
        # the reference is the user's name (AccessKey's UserName names it); the user is
        # a stack user (in Keystone's stack domain in keystone mode, a placeholder id
        # without an identity service), removed with the stack
        self.resource_id = self.physical_resource_name()
        user = await self.runtime.stack_user(self.name, password=self.data.get("password"))
        self.data["user_id"] = str(user["user_id"])
        return None

    def reference_id(self) -> str:
        return self.resource_id or self.name

    def access_allowed(self, resource_name: str) -> bool:
        return all(policy.access_allowed(resource_name) for policy in self._policies()
                   if isinstance(policy, AccessPolicyBase))


class AccessKey(Resource):
    type_name = "AWS::IAM::AccessKey"
    support_status = SupportStatus()
    description = "No description available"
    secret_data = frozenset({"secret_key"})
    properties_schema = {
        "Serial": Property("integer", "Not Implemented.", implemented=False),
        "UserName": Property("string",
                             "The name of the user that the new key will belong to.",
                             required=True),
        "Status": Property("string", "Not Implemented.",
                           constraints=[AllowedValues(("Active", "Inactive"))],
                           implemented=False),
    }
    attributes_schema = {
        "UserName": Attribute("Username associated with the AccessKey.", "string"),
        "SecretAccessKey": Attribute("Keypair secret key.", "string"),
    }

    def _user(self) -> Resource | None:
        return self.runtime.resource_by_refid(self.properties["UserName"])

    async def handle_create(self) -> Token:
        if not isinstance(self._user(), User):
            raise ResourceFailure(f"could not find user {self.properties['UserName']}",
                                  exc_type="NotFound")
        user = self._user()
        assert user is not None
        keypair = await self.runtime.issue_ec2_keypair(self.name, user=user.name)
        self.resource_id = keypair["access_key"]
        self.data["secret_key"] = keypair["secret_key"]
        return None

    async def handle_delete(self) -> Token:
        if self.resource_id:
            await self.runtime.delete_ec2_keypair(self.resource_id)
        self.data.pop("secret_key", None)
        return None

    def resolve_attribute(self, name: str) -> Any:
        if name == "UserName":
            return self.properties["UserName"]
        if name == "SecretAccessKey":
            return self.data.get("secret_key") or "000-000-000"
        return None

    def access_allowed(self, resource_name: str) -> bool:
        user = self._user()
        return isinstance(user, User) and user.access_allowed(resource_name)
