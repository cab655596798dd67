"""OS::Heat::WaitConditionHandle, OS::Heat::WaitCondition, OS::Heat::UpdateWaitConditionHandle."""

from __future__ import annotations

import json
import secrets
import uuid
from collections.abc import Mapping
from typing import Any

from kiln.resources.base import Attribute, Property, ResourceFailure, SupportStatus, Token
from kiln.resources.common.wait_condition import (
    SUCCESS,
    CfnWaitHandle,
    WaitConditionBase,
    WaitHandleBase,
)
from kiln.template.constraints import AllowedValues, Range
from kiln.template.definitions import ResourceDefinition

SIGNAL_TRANSPORTS = ("CFN_SIGNAL", "TEMP_URL_SIGNAL", "HEAT_SIGNAL", "NO_SIGNAL",
                     "ZAQAR_SIGNAL", "TOKEN_SIGNAL")


class HeatWaitConditionHandle(WaitHandleBase):
    type_name = "OS::Heat::WaitConditionHandle"
    secret_data = frozenset({"token", "password", "ec2_signed_url"})
    support_status = SupportStatus(version="2014.2")
    description = (
        "Resource for managing instance signals.\n\n"
        "The main points of this resource are:\n"
        "  - have no dependencies (so the instance can reference it).\n"
        "  - create credentials to allow for signalling from the instance.\n"
        "  - handle signals from the instance, validate and store result.")
    properties_schema = {
        "signal_transport": Property(
            "string",
            "How the client will signal the wait condition. CFN_SIGNAL will allow an HTTP "
            "POST to a CFN keypair signed URL. TEMP_URL_SIGNAL will create a Swift TempURL "
            "to be signalled via HTTP PUT. HEAT_SIGNAL will allow calls to the Heat API "
            "resource-signal using the provided keystone credentials. ZAQAR_SIGNAL will "
            "create a dedicated zaqar queue to be signalled using the provided keystone "
            "credentials. TOKEN_SIGNAL will allow and HTTP POST to a Heat API endpoint with "
            "the provided keystone token. NO_SIGNAL will result in the resource going to a "
            "signalled state without waiting for any signal.",
            default="TOKEN_SIGNAL", constraints=[AllowedValues(SIGNAL_TRANSPORTS)],
            support_status=SupportStatus(version="6.0.0")),
    }
    attributes_schema = {
        "token": Attribute(
            "Token for stack-user which can be used for signalling handle when "
            "signal_transport is set to TOKEN_SIGNAL. None for all other signal "
            "transports.", "string"),
        "endpoint": Attribute(
            "Endpoint/url which can be used for signalling handle when signal_transport is "
            "set to TOKEN_SIGNAL. None for all other signal transports.", "string"),
        "curl_cli": Attribute(
            "Convenience attribute, provides curl CLI command prefix, which can be used for "
            "signalling handle completion or failure when signal_transport is set to "
            "TOKEN_SIGNAL. You can signal success by adding --data-binary "
            "'{\"status\": \"SUCCESS\"}' , or signal failure by adding --data-binary "
            "'{\"status\": \"FAILURE\"}'. This attribute is set to None for all other "
            "signal transports.", "string"),
        "signal": Attribute(
            "JSON serialized map that includes the endpoint, token and/or other attributes "
            "the client must use for signalling this handle. The contents of this map "
            "depend on the type of signal selected in the signal_transport property.",
            "string"),
    }

    def normalise(self, details: Any) -> Any:
        if details and not isinstance(details, Mapping):
            return details
        number = len(self.metadata) + len(self.state.signals) + 1
        entry = dict(details or {})
        entry.setdefault("reason", f"Signal {number} received")
        entry.setdefault("data", None)
        entry.setdefault("id", number)
        entry.setdefault("status", SUCCESS)
        return entry

    async def handle_create(self) -> Token:
        transport = self.properties["signal_transport"]
        if transport == "ZAQAR_SIGNAL":
            raise ResourceFailure("signal_transport ZAQAR_SIGNAL needs a messaging service "
                                  "(Zaqar), and none is configured", exc_type="NotSupported")
        if transport == "TOKEN_SIGNAL":
            token = self.runtime.signal_token(self.name)
            if token is not None:
                self.data["token"] = token
            self.data["endpoint"] = self.runtime.signal_url(self.name, "heat")
        elif transport == "CFN_SIGNAL":
            keypair = await self.runtime.issue_ec2_keypair(self.name)
            self.data["access_key"] = keypair["access_key"]
            self.data["ec2_signed_url"] = self.runtime.presigned_signal_url(
                self.name, "cfn_waitcondition", keypair)
        elif transport == "HEAT_SIGNAL":
            password = self.data.get("password") or secrets.token_urlsafe(24)
            self.data["password"] = password
            user = await self.runtime.stack_user(self.name, password=password)
            self.data["user"] = json.dumps({
                "auth_url": user.get("auth_url"), "username": user.get("username"),
                "user_id": user.get("user_id"), "project_id": user.get("project_id"),
                "domain_id": user.get("domain_id"), "region_name": user.get("region_name"),
                "alarm_url": user.get("signal_url")})
        # last: the attributes answer None until the resource id is set, so a stack
        # shown while the keypair or user is being made never gives half of them (a
        # signal without its alarm_url)
        self.resource_id = uuid.uuid4().hex
        return None

    async def handle_delete(self) -> Token:
        access_key = self.data.pop("access_key", None)
        if access_key is not None:
            await self.runtime.delete_ec2_keypair(access_key)
        return None

    def _signal(self) -> dict[str, Any] | None:
        transport = self.properties["signal_transport"]
        if transport == "CFN_SIGNAL":
            return {"alarm_url": self.data.get("ec2_signed_url")}
        if transport == "HEAT_SIGNAL":
            user = json.loads(self.data.get("user") or "{}")
            # the native signal route under the stack user's project, as Heat's
            alarm_url = user.get("alarm_url") or self.runtime.signal_url(self.name, "heat")
            return {**user, "password": self.data.get("password"), "alarm_url": alarm_url}
        if transport == "NO_SIGNAL":
            return {}
        return None

    def resolve_attribute(self, name: str) -> Any:
        if not self.resource_id:
            return None
        if name == "signal":
            return json.dumps(self._signal())
        if name in ("token", "endpoint"):
            return self.data.get(name)
        if name == "curl_cli":
            endpoint, token = self.data.get("endpoint"), self.data.get("token")
            if endpoint is None or token is None:
                return None
            return (f"curl -i -X POST -H 'X-Auth-Token: {token}' "
                    "-H 'Content-Type: application/json' -H 'Accept: application/json' "
                    f"{endpoint}")
        return None


class HeatWaitCondition(WaitConditionBase):
    type_name = "OS::Heat::WaitCondition"
    support_status = SupportStatus(version="2014.2")
    description = (
        "Resource for handling signals received by WaitConditionHandle.\n\n"
        "Resource takes WaitConditionHandle and starts to create. Resource is in\n"
        "CREATE_IN_PROGRESS status until WaitConditionHandle doesn't receive\n"
        "sufficient number of successful signals (this number can be specified with\n"
        "count property) and successfully creates after that, or fails due to\n"
        "timeout.")
    properties_schema = {
        "handle": Property(
            "string",
            "A reference to the wait condition handle used to signal this wait condition.",
            required=True),
        "timeout": Property(
            "number",
            "The number of seconds to wait for the correct number of signals to arrive.",
            required=True, constraints=[Range(1, 43200)]),
        "count": Property(
            "integer",
            "The number of success signals that must be received before the stack creation "
            "process continues.",
            default=1, update_allowed=True, constraints=[Range(min=1)]),
    }
    attributes_schema = {
        "data": Attribute("JSON string containing data associated with wait condition "
                          "signals sent to the handle.", "string"),
    }


class UpdateWaitConditionHandle(CfnWaitHandle):
    """Replaced on every stack update, so senders must signal the new handle again."""

    type_name = "OS::Heat::UpdateWaitConditionHandle"
    support_status = SupportStatus(version="2014.1")
    replaced_on_every_update = True
    description = (
        "WaitConditionHandle that clears signals and changes handle on update.\n\n"
        "This works similarly to an AWS::CloudFormation::WaitConditionHandle, except\n"
        "that on update it clears all signals received and changes the handle. Using\n"
        "this handle means that you must setup the signal senders to send their\n"
        "signals again any time the update handle changes. This allows us to roll\n"
        "out new configurations and be confident that they are rolled out once\n"
        "UPDATE COMPLETE is reached.")

    def needs_update(self, new_definition: ResourceDefinition,
                     prop_diff: Mapping[str, Any]) -> bool:
        return True

    def needs_replace(self, prop_diff: Mapping[str, Any]) -> bool:
        return True
