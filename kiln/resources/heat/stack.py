"""OS::Heat::Stack: a stack made from a template given as a property.

Heat runs it through the orchestration API of ``context.region_name``; Kiln runs it in
the same engine when the region is its own (or unset), and — as Heat's remote stacks
are — as a stack of its own, listed with the others rather than as a nested stack.
Another region, or a remote cloud's credentials (``credential_secret_id``), is refused
when the stack is validated, with Heat's words for an endpoint it cannot find: Kiln has
no remote engine to call. The template itself is validated there too, as Heat asks the
endpoint to validate it (kiln.engine.actions.validation).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from kiln.errors import StackValidationFailed
from kiln.resources.base import Attribute, Properties, Property, ResourceFailure, SupportStatus
from kiln.resources.nested import NestedStackResource
from kiln.resources.provider import _parse


class RemoteStack(NestedStackResource):
    type_name = "OS::Heat::Stack"
    support_status = SupportStatus(version="2014.2")
    description = "A resource for managing stacks."
    #: the child is a stack of its own, not a nested one (as with Heat's remote stacks)
    detached_child: ClassVar[bool] = True
    properties_schema = {
        "context": Property("map", "Context for this stack.", update_allowed=True, schema={
            "region_name": Property("string", "Region name in which this stack will be "
                                    "created."),
            "credential_secret_id": Property(
                "string", "A Barbican secret ID. The Barbican secret should contain an "
                "OpenStack credential that can be used to access a remote cloud.",
                update_allowed=True, support_status=SupportStatus(version="12.0.0")),
            "ca_cert": Property("string", "CA Cert for SSL.", update_allowed=True,
                                support_status=SupportStatus(version="12.0.0")),
            "insecure": Property("boolean", "If set, then the server's certificate will not "
                                 "be verified.", default=False, update_allowed=True,
                                 support_status=SupportStatus(version="12.0.0")),
        }),
        "template": Property("string", "Template that specifies the stack to be created as "
                             "a resource.", required=True, update_allowed=True),
        "timeout": Property("integer", "Number of minutes to wait for this stack creation.",
                            update_allowed=True),
        "parameters": Property("map", "Set of parameters passed to this stack.", default={},
                               update_allowed=True),
    }
    attributes_schema = {
        "stack_name": Attribute("Name of the stack.", "string"),
        "outputs": Attribute("A dict of key-value pairs output from the stack.", "map"),
    }

    def validate(self) -> None:
        super().validate()
        self._check_endpoint(self.properties)

    def _check_endpoint(self, properties: Properties) -> None:
        context = properties["context"] or {}
        if context.get("credential_secret_id"):
            raise StackValidationFailed(
                'Cannot establish connection to Heat endpoint at remote cloud due to '
                '"public endpoint for key-manager service not found"')
        region = context.get("region_name")
        if region and region != self.runtime.conf.region_name_for_services:
            raise StackValidationFailed(
                f'Cannot establish connection to Heat endpoint at region "{region}" due to '
                f'"public endpoint for orchestration service in {region} region not found"')

    def child_template(self, properties: Properties) -> Mapping[str, Any]:
        try:
            self._check_endpoint(properties)
        except StackValidationFailed as exc:  # a value that waited for a resource
            raise ResourceFailure(exc.message, exc_type="StackValidationFailed") from None
        return _parse(properties["template"], "template")

    def child_parameters(self, properties: Properties) -> Mapping[str, Any]:
        return dict(properties["parameters"] or {})

    def child_timeout(self) -> int | None:
        timeout = self.properties["timeout"]
        return int(timeout) if timeout else None

    def resolve_attribute(self, name: str) -> Any:
        if name == "stack_name":
            return self.data.get("nested_stack_name")
        if name == "outputs":
            return self.nested_outputs() if self.resource_id else None
        return None
