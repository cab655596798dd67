"""OS::Heat::SoftwareDeployment and OS::Heat::StructuredDeployment.

A deployment binds a stored config to a server. On each of its actions it stores a
*derived* config (the source config plus the input values and ``deploy_*`` inputs an agent
needs), points the deployment row at it, and waits until the agent reports back (through
a signal, or through the software-deployments API) unless signal_transport is NO_SIGNAL.
Rows live in the engine's tables, reached through ``runtime.software_configs`` and
``runtime.software_deployments``; outputs are cached in the resource's data so attributes
can be read synchronously.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import uuid
from collections.abc import Mapping
from typing import Any

from kiln import tempurl
from kiln.errors import EntityNotFound, InvalidTemplateAttribute, UserParameterMissing
from kiln.resources.base import (
    Attribute,
    Properties,
    Property,
    Resource,
    ResourceFailure,
    SupportStatus,
    Token,
    UpdateReplace,
    select_path,
)
from kiln.resources.heat.software_config import typed_default
from kiln.template.constraints import AllowedValues
from kiln.template.definitions import ResourceDefinition

DEPLOY_ACTIONS = ("CREATE", "UPDATE", "DELETE", "SUSPEND", "RESUME")
SIGNAL_TRANSPORTS = ("CFN_SIGNAL", "TEMP_URL_SIGNAL", "HEAT_SIGNAL", "NO_SIGNAL",
                     "ZAQAR_SIGNAL")
STANDARD_ATTRIBUTES = ("deploy_stdout", "deploy_stderr", "deploy_status_code")


def _io_input(entry: Mapping[str, Any], value: Any) -> dict[str, Any]:
    """A derived input: the stored declaration plus its value (None keys dropped)."""
    out = {k: v for k, v in entry.items() if v is not None and k != "value"}
    out.setdefault("type", "String")
    out["value"] = value
    return out


class SoftwareDeployment(Resource):
    type_name = "OS::Heat::SoftwareDeployment"
    #: the signal URLs are credentials, and the outputs a server sent may be secrets
    secret_data = frozenset({"temp_url_key", "signal_temp_url", "password", "signal_url",
                             "output_values"})
    no_signal_actions = ()
    requires_deferred_auth = True  # Heat's SignalResponder
    support_status = SupportStatus(version="2014.1")
    description = (
        "This resource associates a server with some configuration.\n\n"
        "The configuration is to be deployed to that server.\n\n"
        "A deployment allows input values to be specified which map to the inputs\n"
        "schema defined in the config resource. These input values are interpreted\n"
        "by the configuration tool in a tool-specific manner.\n\n"
        "Whenever this resource goes to an IN_PROGRESS state, it creates an\n"
        "ephemeral config that includes the inputs values plus a number of extra\n"
        "inputs which have names prefixed with ``deploy_``. The extra inputs relate\n"
        "to the current state of the stack, along with the information and\n"
        "credentials required to signal back the deployment results.\n\n"
        "Unless signal_transport=NO_SIGNAL, this resource will remain in an\n"
        "IN_PROGRESS state until the server signals it with the output values\n"
        "for that deployment. Those output values are then available as resource\n"
        "attributes, along with the default attributes deploy_stdout,\n"
        "deploy_stderr and deploy_status_code.\n\n"
        "Specifying actions other than the default CREATE and UPDATE will result\n"
        "in the deployment being triggered in those actions. For example this would\n"
        "allow cleanup configuration to be performed during actions SUSPEND and\n"
        "DELETE. A config could be designed to only work with some specific\n"
        "actions, or a config can read the value of the deploy_action input to\n"
        "allow conditional logic to perform different configuration for different\n"
        "actions.")
    properties_schema = {
        "config": Property(
            "string",
            "ID of software configuration resource to execute when applying to the server.",
            update_allowed=True),
        "server": Property(
            "string",
            "ID of resource to apply configuration to. Normally this should be a Nova "
            "server ID.",
            required=True),
        "input_values": Property(
            "map", "Input values to apply to the software configuration on this server.",
            update_allowed=True),
        "actions": Property(
            "list",
            "Which lifecycle actions of the deployment resource will result in this "
            "deployment being triggered.",
            default=["CREATE", "UPDATE"], update_allowed=True,
            constraints=[AllowedValues(DEPLOY_ACTIONS)]),
        "name": Property(
            "string",
            "Name of the derived config associated with this deployment. This is used to "
            "apply a sort order to the list of configurations currently deployed to a "
            "server.",
            update_allowed=True),
        "signal_transport": Property(
            "string",
            "How the server should signal to heat with the deployment output values. "
            "CFN_SIGNAL will allow an HTTP POST to a CFN keypair signed URL. "
            "TEMP_URL_SIGNAL will create a Swift TempURL to be signaled via HTTP PUT. "
            "HEAT_SIGNAL will allow calls to the Heat API resource-signal using the "
            "provided keystone credentials. ZAQAR_SIGNAL will create a dedicated zaqar "
            "queue to be signaled using the provided keystone credentials. NO_SIGNAL will "
            "result in the resource going to the COMPLETE state without waiting for any "
            "signal.",
            default="CFN_SIGNAL", constraints=[AllowedValues(SIGNAL_TRANSPORTS)]),
    }
    attributes_schema = {
        "deploy_stdout": Attribute("Captured stdout from the configuration execution.",
                                   "string"),
        "deploy_stderr": Attribute("Captured stderr from the configuration execution.",
                                   "string"),
        "deploy_status_code": Attribute(
            "Returned status code from the configuration execution.", "string"),
    }

    # -- the source and derived configs ------------------------------------------------
    async def _load_config(self, config_id: str | None) -> dict[str, Any]:
        if not config_id:
            return {"inputs": [], "outputs": []}
        config = await self.runtime.software_configs.get(config_id)
        config.setdefault("inputs", [])
        config.setdefault("outputs", [])
        return config

    def empty_config(self) -> Any:
        return ""

    def _derived_inputs(self, props: Properties, action: str,
                        source: Mapping[str, Any]) -> list[dict[str, Any]]:
        values = dict(props["input_values"] or {})
        derived = []
        for entry in source.get("inputs") or []:
            default = entry.get("default")
            if default is not None and "type" in entry:
                default = typed_default(entry["type"], default)
            derived.append(_io_input(entry, values.pop(entry["name"], default)))
        derived += [{"name": k, "type": "String", "value": v} for k, v in values.items()]
        transport = props["signal_transport"]
        stack = f"{self.runtime.stack_name}/{self.runtime.stack_id}"
        for name, value, text in (
                ("deploy_server_id", props["server"], "ID of the server being deployed to"),
                ("deploy_action", action, "Name of the current action being deployed"),
                ("deploy_stack_id", stack, "ID of the stack this deployment belongs to"),
                ("deploy_resource_name", self.name,
                 "Name of this deployment resource in the stack"),
                ("deploy_signal_transport", transport,
                 "How the server should signal to heat with the deployment output values.")):
            derived.append({"name": name, "description": text, "type": "String",
                            "value": value})
        if transport == "CFN_SIGNAL":
            derived.append({"name": "deploy_signal_id",
                            "description": "ID of signal to use for signaling output values",
                            "type": "String", "value": self._signal_url()})
            derived.append({"name": "deploy_signal_verb",
                            "description": "HTTP verb to use for signaling output values",
                            "type": "String", "value": "POST"})
        elif transport == "HEAT_SIGNAL" and self.data.get("heat_signal_user"):
            # Heat's shape: the stack user's credentials; heat-config-notify logs in to
            # Keystone with them and signals through the native API
            user = json.loads(self.data["heat_signal_user"])
            for name, value, text in (
                    ("deploy_auth_url", user.get("auth_url"), "URL for API authentication"),
                    ("deploy_username", user.get("username"),
                     "Username for API authentication"),
                    ("deploy_user_id", user.get("user_id"), "User ID for API authentication"),
                    ("deploy_password", self.data.get("password"),
                     "Password for API authentication"),
                    ("deploy_project_id", user.get("project_id"),
                     "ID of project for API authentication")):
                derived.append({"name": name, "description": text, "type": "String",
                                "value": value})
            if user.get("region_name"):
                derived.append({"name": "deploy_region_name",
                                "description": "Region name for API authentication",
                                "type": "String", "value": user["region_name"]})
        elif transport == "HEAT_SIGNAL":
            # no identity service: the native signal route itself, which needs no login
            derived.append({"name": "deploy_signal_id",
                            "description": "ID of signal to use for signaling output values",
                            "type": "String",
                            "value": self.runtime.signal_url(self.name, "heat")})
        elif transport == "TEMP_URL_SIGNAL":
            derived.append({"name": "deploy_signal_id",
                            "description": "ID of signal to use for signaling output values",
                            "type": "String", "value": self._temp_signal_url()})
            derived.append({"name": "deploy_signal_verb",
                            "description": "HTTP verb to use for signaling output values",
                            "type": "String", "value": "PUT"})
        elif transport == "ZAQAR_SIGNAL":
            raise ResourceFailure(f"signal_transport {transport} needs a cloud service "
                                  "Kiln does not provide", exc_type="NotSupported")
        return derived

    def _signal_url(self) -> str:
        url = self.data.get("signal_url")
        if url is None:
            url = self.data["signal_url"] = self.runtime.signal_url(self.name, "cfn_signal")
        return url

    def _temp_signal_url(self) -> str:
        """Kiln's stand-in for Heat's Swift signal URL: a signed PUT to this resource,
        served by Kiln itself (:mod:`kiln.api.tempurl`); made once, like Heat's."""
        url = self.data.get("signal_temp_url")
        if url is None:
            key = self.data.get("temp_url_key") or tempurl.new_key()
            self.data["temp_url_key"] = key
            rt = self.runtime
            url = self.data["signal_temp_url"] = tempurl.make_url(
                tempurl.base_url(rt.conf), key, method="PUT", project_id=rt.project_id,
                stack_id=rt.stack_id, resource_name=self.name)
        return url

    async def _heat_signal_user(self) -> None:
        """The stack user whose password HEAT_SIGNAL hands the server (keystone mode);
        without an identity service nothing is made and the signal URL is given."""
        password = self.data.get("password") or secrets.token_urlsafe(24)
        user = await self.runtime.stack_user(self.name, password=password)
        if not user.get("auth_url"):
            return
        self.data["password"] = password
        self.data["heat_signal_user"] = json.dumps(
            {k: user.get(k) for k in ("auth_url", "username", "user_id", "project_id",
                                      "region_name")})

    def build_config(self, props: Properties, source: Mapping[str, Any],
                     inputs: list[dict[str, Any]]) -> Any:
        """The derived config's body; StructuredDeployment substitutes inputs into it."""
        return source.get("config")

    async def _store_derived(self, props: Properties, action: str,
                             source: Mapping[str, Any]) -> dict[str, Any]:
        if props["signal_transport"] == "CFN_SIGNAL" and "signal_url" not in self.data:
            # signed once with the deployment's own keypair; kept for later actions
            keypair = await self.runtime.issue_ec2_keypair(self.name)
            self.data["access_key"] = keypair["access_key"]
            self.data["signal_url"] = self.runtime.presigned_signal_url(
                self.name, "cfn_signal", keypair)
        if props["signal_transport"] == "HEAT_SIGNAL" and "heat_signal_user" not in self.data:
            await self._heat_signal_user()
        inputs = self._derived_inputs(props, action, source)
        body = self.build_config(props, source, inputs)
        return await self.runtime.software_configs.create(
            name=props["name"] or source.get("name") or self.physical_resource_name(),
            group=source.get("group") or "Heat::Ungrouped",
            config=body if body else self.empty_config(),
            inputs=inputs, outputs=list(source.get("outputs") or []),
            options=source.get("options") or {})

    # -- actions --------------------------------------------------------------------------
    def _triggered(self, props: Properties, action: str, source: Mapping[str, Any]) -> bool:
        if source.get("group") == "component":
            return any(action in c.get("actions", ())
                       for c in (source.get("config") or {}).get("configs", []))
        return action in props["actions"]

    async def _deploy(self, props: Properties, action: str,
                      source: Mapping[str, Any] | None = None) -> Token:
        if source is None:
            source = await self._load_config(props["config"])
        if not self._triggered(props, action, source):
            return None
        derived = await self._store_derived(props, action, source)
        self.data["output_names"] = json.dumps([o["name"] for o in source["outputs"]])
        waiting = props["signal_transport"] != "NO_SIGNAL"
        status, reason = (("IN_PROGRESS", "Deploy data available") if waiting else
                          ("COMPLETE", "Not waiting for outputs signal"))
        store = self.runtime.software_deployments
        if self.resource_id is None:
            self.resource_id = str(uuid.uuid4())
            await store.create(deployment_id=self.resource_id, server_id=props["server"],
                               config_id=derived["id"], input_values=props["input_values"],
                               action=action, status=status, status_reason=reason)
        else:
            previous = (await store.get(self.resource_id))["config_id"]
            await store.update(self.resource_id, config_id=derived["id"],
                               input_values=props["input_values"], action=action,
                               status=status, status_reason=reason)
            if previous:
                with contextlib.suppress(EntityNotFound):
                    await self.runtime.software_configs.delete(previous)
        return {"deployment": self.resource_id} if waiting else None

    async def _complete(self, token: Token) -> bool:
        if not token:
            return True
        deployment = await self.runtime.software_deployments.get(self.resource_id or "")
        self.data["output_values"] = json.dumps(deployment.get("output_values") or {})
        if deployment["status"] == "COMPLETE":
            return True
        if deployment["status"] == "FAILED":
            raise ResourceFailure("Deployment to server failed: "
                                  f"{deployment.get('status_reason')}")
        return False

    async def handle_cancel(self, action: str, token: Token) -> None:
        """Heat's handle_<action>_cancel: a deployment still waiting for its server when
        the action is interrupted (a stack timeout, a cancel) is marked FAILED, so the
        software-deployments API does not show it IN_PROGRESS forever."""
        if not token or self.resource_id is None:
            return
        with contextlib.suppress(EntityNotFound):
            store = self.runtime.software_deployments
            if (await store.get(self.resource_id))["status"] == "IN_PROGRESS":
                await store.update(self.resource_id, status="FAILED",
                                   status_reason="Deployment cancelled.")

    async def handle_create(self) -> Token:
        return await self._deploy(self.properties, "CREATE")

    async def check_create_complete(self, token: Token) -> bool:
        return await self._complete(token)

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        source = await self._load_config(new_properties["config"])
        if self.resource_id is not None:
            old_id = (await self.runtime.software_deployments.get(self.resource_id))[
                "config_id"]
            old = {i["name"]: i.get("value")
                   for i in (await self._load_config(old_id))["inputs"]}
            for entry in self._derived_inputs(new_properties, "UPDATE", source):
                name = entry["name"]
                if entry.get("replace_on_change") and name in old \
                        and old[name] != entry["value"]:
                    raise UpdateReplace(f"input {name} changed")
        return await self._deploy(new_properties, "UPDATE", source)

    async def check_update_complete(self, token: Token) -> bool:
        return await self._complete(token)

    async def handle_delete(self) -> Token:
        try:
            return await self._deploy(self.properties, "DELETE")
        except EntityNotFound:
            return None

    async def check_delete_complete(self, token: Token) -> bool:
        with contextlib.suppress(EntityNotFound):
            if not await self._complete(token):
                return False
        await self._remove()
        return True

    async def _remove(self) -> None:
        self.data.pop("signal_url", None)
        access_key = self.data.pop("access_key", None)
        if access_key is not None:
            await self.runtime.delete_ec2_keypair(access_key)
        if self.resource_id is None:
            return
        with contextlib.suppress(EntityNotFound):
            derived = (await self.runtime.software_deployments.get(self.resource_id))[
                "config_id"]
            await self.runtime.software_deployments.delete(self.resource_id)
            if derived:
                await self.runtime.software_configs.delete(derived)

    async def handle_suspend(self) -> Token:
        return await self._deploy(self.properties, "SUSPEND")

    async def check_suspend_complete(self, token: Token) -> bool:
        return await self._complete(token)

    async def handle_resume(self) -> Token:
        return await self._deploy(self.properties, "RESUME")

    async def check_resume_complete(self, token: Token) -> bool:
        return await self._complete(token)

    async def handle_signal(self, details: Any) -> str | None:
        reason = await self.runtime.software_deployments.signal(self.resource_id or "",
                                                                details)
        with contextlib.suppress(EntityNotFound):
            deployment = await self.runtime.software_deployments.get(self.resource_id or "")
            self.data["output_values"] = json.dumps(deployment.get("output_values") or {})
        return reason

    # -- attributes: the deployment's output values ----------------------------------------
    def _outputs(self) -> dict[str, Any]:
        raw = self.data.get("output_values")
        return json.loads(raw) if raw else {}

    def get_attribute(self, name: str, *path: Any) -> Any:
        values = self._outputs() if self.resource_id is not None else {}
        if name in values:
            return select_path(values[name], path)
        known = self.data.get("output_names")
        if known is not None and name not in json.loads(known) \
                and name not in STANDARD_ATTRIBUTES:
            raise InvalidTemplateAttribute(
                f"The Referenced Attribute ({self.name} {name}) is incorrect.")
        return None

    def all_attributes(self) -> dict[str, Any]:
        values = self._outputs()
        names = json.loads(self.data.get("output_names") or "[]")
        return {n: values.get(n) for n in (*STANDARD_ATTRIBUTES, *names)}


class StructuredDeployment(SoftwareDeployment):
    type_name = "OS::Heat::StructuredDeployment"
    description = (
        "A resource which has same logic with OS::Heat::SoftwareDeployment.\n\n"
        "A deployment resource like OS::Heat::SoftwareDeployment, but which\n"
        "performs input value substitution on the config defined by a\n"
        "OS::Heat::StructuredConfig resource.\n\n"
        "Some configuration tools have no concept of inputs, so the input value\n"
        "substitution needs to occur in the deployment resource. An example of this\n"
        "is the JSON metadata consumed by the cfn-init tool.\n\n"
        "Where the config contains {get_input: input_name} this will be substituted\n"
        "with the value of input_name in this resource's input_values. If get_input\n"
        "needs to be passed through to the substituted configuration then a\n"
        "different input_key property value can be specified.")
    properties_schema = {
        **{k: SoftwareDeployment.properties_schema[k]
           for k in ("config", "server", "input_values", "actions", "signal_transport",
                     "name")},
        "input_key": Property(
            "string", "Name of key to use for substituting inputs during deployment.",
            default="get_input"),
        "input_values_validate": Property(
            "string",
            "Perform a check on the input values passed to verify that each required input "
            "has a corresponding value. When the property is set to STRICT and no value is "
            "passed, an exception is raised.",
            default="LAX", constraints=[AllowedValues(("LAX", "STRICT"))]),
    }

    def empty_config(self) -> Any:
        return {}

    def build_config(self, props: Properties, source: Mapping[str, Any],
                     inputs: list[dict[str, Any]]) -> Any:
        values = {i["name"]: i.get("value") for i in inputs}
        key, strict = props["input_key"], props["input_values_validate"] == "STRICT"

        def walk(node: Any) -> Any:
            if isinstance(node, Mapping):
                if len(node) == 1:
                    fn, arg = next(iter(node.items()))
                    if fn == key and isinstance(arg, str):
                        if strict and arg not in values:
                            raise ResourceFailure(
                                f"The Parameter ({arg}) was not provided.",
                                exc_type=UserParameterMissing.__name__)
                        return values.get(arg)
                return {k: walk(v) for k, v in node.items()}
            if isinstance(node, list):
                return [walk(v) for v in node]
            return node

        return walk(source.get("config"))
