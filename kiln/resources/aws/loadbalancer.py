"""AWS::ElasticLoadBalancing::LoadBalancer: an haproxy server as a nested stack.

The child stack is Kiln's built-in template (``loadbalancer.yaml`` next to this module)
or the operator's ``[DEFAULT] loadbalancer_template`` file. Either way it has a server
``LB_instance`` set up by cfn-init from its ``AWS::CloudFormation::Init`` metadata, a
wait condition it signals when haproxy runs (``LBTimeout`` seconds, 600 unless the
parent stack has a parameter of that name), and an output ``PublicIp``.

What the plugin adds is the haproxy configuration: one frontend on the first listener's
``LoadBalancerPort``, one backend with a server line per ``Instances`` entry (the
address Nova gives the server, ``0.0.0.0`` for one Nova does not know) on the listener's
``InstancePort``, with ``HealthCheck``'s interval and thresholds. It is written into
the metadata's ``/etc/haproxy/haproxy.cfg``; when ``Instances`` or ``SecurityGroups``
change the child stack is updated with the new configuration and groups, and cfn-hup on
the server rewrites the file and reloads haproxy. As in Heat, the parent stack's own
parameters ``KeyName``, ``LbFlavor``, ``LbImageId`` and ``LBTimeout`` are passed on to
the child when it declares them; without a ``KeyName`` the server gets no key pair.

Of the attributes only ``DNSName`` has a value (the child's ``PublicIp``); the others
are empty strings, as Heat answers them.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any, ClassVar

from kiln.clients import clients_for, errors, rest
from kiln.errors import StackValidationFailed
from kiln.resources.base import (
    Attribute,
    Properties,
    Property,
    ResourceFailure,
    SupportStatus,
    Token,
)
from kiln.resources.nested import NestedStackResource
from kiln.resources.provider import _parse
from kiln.template.constraints import AllowedValues
from kiln.template.definitions import ResourceDefinition

#: the parent stack's parameters handed to the child when the parent declares them
PASSED_PARAMETERS = ("KeyName", "LbFlavor", "LBTimeout", "LbImageId")
SERVER = "LB_instance"
CONFIG_FILE = "/etc/haproxy/haproxy.cfg"

_NOT_IMPLEMENTED = "Not Implemented."


@cache
def builtin_template() -> str:
    return resources.files("kiln.resources.aws").joinpath("loadbalancer.yaml").read_text()


def _health_check_schema() -> dict[str, Property]:
    return {
        "HealthyThreshold": Property(
            "integer", "The number of consecutive health probe successes required before "
            "moving the instance to the healthy state.", required=True),
        "Interval": Property(
            "integer", "The approximate interval, in seconds, between health checks of an "
            "individual instance.", required=True),
        "Target": Property("string", "The port being checked.", required=True),
        "Timeout": Property("integer", "Health probe timeout, in seconds.", required=True),
        "UnhealthyThreshold": Property(
            "integer", "The number of consecutive health probe failures required before "
            "moving the instance to the unhealthy state", required=True),
    }


def _listener_schema() -> Property:
    return Property("map", schema={
        "InstancePort": Property("integer", "TCP port on which the instance server is "
                                 "listening.", required=True),
        "LoadBalancerPort": Property("integer", "The external load balancer port number.",
                                     required=True),
        "Protocol": Property("string", "The load balancer transport protocol to use.",
                             required=True, constraints=[AllowedValues(("TCP", "HTTP"))]),
        "SSLCertificateId": Property("string", _NOT_IMPLEMENTED, implemented=False),
        "PolicyNames": Property("list", _NOT_IMPLEMENTED, implemented=False),
    })


def haproxy_config(listener: Mapping[str, Any], health: Mapping[str, Any] | None,
                   addresses: list[str]) -> str:
    """The haproxy.cfg for one listener and the back ends at *addresses*."""
    lines = ["global", "    daemon", "    maxconn 256", "    stats socket /tmp/.haproxy-stats",
             "", "defaults", "    mode http", "    timeout connect 5000ms",
             "    timeout client 50000ms", "    timeout server 50000ms", "",
             "frontend http", f"    bind *:{listener['LoadBalancerPort']}",
             "    default_backend servers", "", "backend servers", "    balance roundrobin",
             "    option http-server-close", "    option forwardfor", "    option httpchk"]
    check = ""
    if health:
        lines.append(f"    timeout check {int(health['Timeout'])}s")
        check = (f" check inter {health['Interval']}s fall {health['UnhealthyThreshold']}"
                 f" rise {health['HealthyThreshold']}")
    port = listener["InstancePort"]
    lines += [f"    server server{n} {addr}:{port}{check}"
              for n, addr in enumerate(addresses, start=1)]
    return "\n".join(lines) + "\n"


class LoadBalancer(NestedStackResource):
    type_name = "AWS::ElasticLoadBalancing::LoadBalancer"
    support_status = SupportStatus()
    checks_child_services: ClassVar[bool] = True  # a create without Nova is refused, as Heat's is
    description = (
        "A load balancer: a nested stack whose server runs haproxy in front of the "
        "Instances.\n\nThe nested stack's template is Kiln's built-in one unless "
        "[DEFAULT] loadbalancer_template names another. Its server image (parameter "
        "LbImageId) must run cfn-init, cfn-hup and cfn-signal and provide haproxy, "
        "socat and cron.")
    properties_schema = {
        "AvailabilityZones": Property("list", "The Availability Zones in which to create the "
                                      "load balancer.", required=True),
        "HealthCheck": Property("map", "An application health check for the instances.",
                                schema=_health_check_schema()),
        "Instances": Property("list", "The list of instance IDs load balanced.",
                              update_allowed=True),
        "Listeners": Property("list", "One or more listeners for this load balancer.",
                              schema=_listener_schema(), required=True),
        "AppCookieStickinessPolicy": Property("string", _NOT_IMPLEMENTED, implemented=False),
        "LBCookieStickinessPolicy": Property("string", _NOT_IMPLEMENTED, implemented=False),
        "SecurityGroups": Property("list", "List of Security Groups assigned on current LB.",
                                   update_allowed=True),
        "Subnets": Property("list", _NOT_IMPLEMENTED, implemented=False),
    }
    attributes_schema = {
        "CanonicalHostedZoneName": Attribute(
            "The name of the hosted zone that is associated with the LoadBalancer.", "string"),
        "CanonicalHostedZoneNameID": Attribute(
            "The ID of the hosted zone name that is associated with the LoadBalancer.",
            "string"),
        "DNSName": Attribute("The DNS name for the LoadBalancer.", "string"),
        "SourceSecurityGroup.GroupName": Attribute(
            "The security group that you can use as part of your inbound rules for your "
            "LoadBalancer's back-end instances.", "string"),
        "SourceSecurityGroup.OwnerAlias": Attribute("Owner of the source security group.",
                                                    "string"),
    }

    #: the haproxy configuration the next child template carries (set before create and
    #: update, which need Nova for the addresses)
    _haproxy: str | None = None

    # -- the child stack -------------------------------------------------------------------
    def _template_path(self) -> str | None:
        return getattr(self.runtime.conf, "loadbalancer_template", None) or None

    def validate(self) -> None:
        super().validate()
        path = self._template_path()
        if path and not os.access(path, os.R_OK):
            raise StackValidationFailed("Custom LoadBalancer template can not be found")
        health = self.properties["HealthCheck"]
        if health and float(health["Interval"]) < float(health["Timeout"]):
            raise StackValidationFailed("Interval must be larger than Timeout")

    def _parent_parameter(self, name: str) -> tuple[bool, Any]:
        try:
            return True, self.runtime.stack_parameter(name)
        except KeyError:
            return False, None

    def child_template(self, properties: Properties) -> Mapping[str, Any]:
        path = self._template_path()
        if path:
            try:
                with open(path, encoding="utf-8") as handle:
                    text = handle.read()
            except OSError:
                raise StackValidationFailed(
                    "Custom LoadBalancer template can not be found") from None
        else:
            path, text = "loadbalancer.yaml", builtin_template()
        template = copy.deepcopy(dict(_parse(text, path)))
        if not self._parent_parameter("KeyName")[0]:
            server = template.get("Resources", {}).get(SERVER, {})
            server.get("Properties", {}).pop("KeyName", None)
            template.get("Parameters", {}).pop("KeyName", None)
        if self._haproxy is not None:
            try:
                files = (template["Resources"][SERVER]["Metadata"]
                         ["AWS::CloudFormation::Init"]["config"]["files"])
                files[CONFIG_FILE]["content"] = self._haproxy
            except (KeyError, TypeError):
                raise ResourceFailure(
                    f"The load balancer template has no {CONFIG_FILE} in the "
                    f"AWS::CloudFormation::Init metadata of {SERVER}") from None
        return template

    def child_parameters(self, properties: Properties) -> Mapping[str, Any]:
        params: dict[str, Any] = {"SecurityGroups": properties["SecurityGroups"]}
        for name in PASSED_PARAMETERS:
            found, value = self._parent_parameter(name)
            if found:
                params[name] = value
        return params

    async def _address(self, server_id: str) -> str:
        """The first address Nova shows for the server (networks in reverse name order,
        as Heat picks it); ``0.0.0.0`` when Nova does not know the server."""
        from kiln.clients.manager import CloudNotConfigured

        def call(conn: Any) -> Any:
            return rest.request(conn, "compute", "GET", f"/servers/{server_id}")

        try:
            answer = await clients_for(self.runtime).call(
                call, what=f"GET compute/servers/{server_id}")
        except Exception as exc:
            if errors.is_not_found(exc):
                return "0.0.0.0"
            if isinstance(exc, CloudNotConfigured):
                raise ResourceFailure(
                    f"Service nova is not available for resource type {self.type_name}, "
                    "reason: no cloud is configured",
                    exc_type="ResourceTypeUnavailable") from exc
            raise ResourceFailure(errors.message_of(exc),
                                  exc_type=errors.heat_error_name(exc)) from exc
        server = answer.get("server") if isinstance(answer, dict) else None
        addresses = (server or {}).get("addresses") or {}
        for network in sorted(addresses, reverse=True):
            if addresses[network]:
                return str(addresses[network][0]["addr"])
        return "0.0.0.0"

    async def _configure(self, properties: Properties, *, was: Any = None) -> None:
        """The haproxy configuration for *properties*: none at create without instances
        (the file stays empty), one without servers when an update empties the list."""
        instances = properties["Instances"]
        if not instances and was is None:
            self._haproxy = None
            return
        addresses = [await self._address(str(i)) for i in instances or []]
        self._haproxy = haproxy_config(properties["Listeners"][0], properties["HealthCheck"],
                                       addresses)

    async def handle_create(self) -> Token:
        await self._configure(self.properties)
        return await super().handle_create()

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        await self._configure(new_properties, was=self.properties["Instances"])
        return await super().handle_update(new_definition, new_properties, prop_diff)

    # -- attributes ------------------------------------------------------------------------
    def resolve_attribute(self, name: str) -> Any:
        if name == "DNSName":
            return self.nested_output("PublicIp")
        return ""

    def reference_id(self) -> str:
        return self.name
