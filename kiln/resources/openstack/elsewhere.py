"""Heat's resource types for services Kiln has no plugin for (Octavia, Designate,
Manila, Trove, Magnum, Zaqar, Mistral, Aodh, Barbican, Zun, Blazar, Ironic, ...) and for
the Neutron extensions Kiln does not drive (FWaaS, VPNaaS, SFC port chains, TaaS, L2
gateways).

They are registered under Heat's names with the service they need, so that a template
using one gets Heat's answer instead of "unknown type": without the service in the
catalog, HEAT-E99001 "Service <client> is not available for resource type <type>,
reason: <client> <service type> endpoint is not in service catalog." (a 400), and the
listing leaves them out, as Heat does. With the service present they are still not
available ("Kiln does not implement ..."): Kiln cannot create them.
"""

from __future__ import annotations

from typing import Any

from kiln.resources.base import Resource, ResourceFailure, SupportStatus, Token

#: type name -> Heat's client plugin name
TYPES = {
    "OS::Aodh::Alarm": "aodh",
    "OS::Aodh::CompositeAlarm": "aodh",
    "OS::Aodh::EventAlarm": "aodh",
    "OS::Aodh::GnocchiAggregationByMetricsAlarm": "aodh",
    "OS::Aodh::GnocchiAggregationByResourcesAlarm": "aodh",
    "OS::Aodh::GnocchiResourcesAlarm": "aodh",
    "OS::Aodh::LBMemberHealthAlarm": "aodh",
    "OS::Aodh::PrometheusAlarm": "aodh",
    "OS::Barbican::CertificateContainer": "barbican",
    "OS::Barbican::GenericContainer": "barbican",
    "OS::Barbican::Order": "barbican",
    "OS::Barbican::RSAContainer": "barbican",
    "OS::Barbican::Secret": "barbican",
    "OS::Blazar::Host": "blazar",
    "OS::Blazar::Lease": "blazar",
    "OS::Designate::RecordSet": "designate",
    "OS::Designate::Zone": "designate",
    "OS::Ironic::Port": "ironic",
    "OS::Magnum::BayModel": "magnum",
    "OS::Magnum::Cluster": "magnum",
    "OS::Magnum::ClusterTemplate": "magnum",
    "OS::Manila::SecurityService": "manila",
    "OS::Manila::Share": "manila",
    "OS::Manila::ShareNetwork": "manila",
    "OS::Manila::ShareType": "manila",
    "OS::Mistral::CronTrigger": "mistral",
    "OS::Mistral::ExternalResource": "mistral",
    "OS::Mistral::Workflow": "mistral",
    "OS::Neutron::Firewall": "neutron",
    "OS::Neutron::FirewallPolicy": "neutron",
    "OS::Neutron::FirewallRule": "neutron",
    "OS::Neutron::FloatingIPPortForward": "openstack",
    "OS::Neutron::IKEPolicy": "neutron",
    "OS::Neutron::IPsecPolicy": "neutron",
    "OS::Neutron::IPsecSiteConnection": "neutron",
    "OS::Neutron::L2Gateway": "neutron",
    "OS::Neutron::L2GatewayConnection": "neutron",
    "OS::Neutron::PortChain": "neutron",
    "OS::Neutron::PortPairGroup": "neutron",
    "OS::Neutron::TaaS::TapFlow": "neutron",
    "OS::Neutron::TaaS::TapService": "neutron",
    "OS::Neutron::VPNService": "neutron",
    "OS::Octavia::AvailabilityZone": "octavia",
    "OS::Octavia::AvailabilityZoneProfile": "octavia",
    "OS::Octavia::Flavor": "octavia",
    "OS::Octavia::FlavorProfile": "octavia",
    "OS::Octavia::HealthMonitor": "octavia",
    "OS::Octavia::L7Policy": "octavia",
    "OS::Octavia::L7Rule": "octavia",
    "OS::Octavia::Listener": "octavia",
    "OS::Octavia::LoadBalancer": "octavia",
    "OS::Octavia::Pool": "octavia",
    "OS::Octavia::PoolMember": "octavia",
    "OS::Octavia::Quota": "octavia",
    "OS::Trove::Cluster": "trove",
    "OS::Trove::Instance": "trove",
    "OS::Zaqar::MistralTrigger": "zaqar",
    "OS::Zaqar::Queue": "zaqar",
    "OS::Zaqar::SignedQueueURL": "zaqar",
    "OS::Zaqar::Subscription": "zaqar",
    "OS::Zun::Container": "zun",
}


#: the Neutron extension each needs (Heat's required_service_extension): without it the
#: type is unavailable for that reason instead
EXTENSIONS = {
    "OS::Neutron::Firewall": "fwaas", "OS::Neutron::FirewallPolicy": "fwaas",
    "OS::Neutron::FirewallRule": "fwaas", "OS::Neutron::IKEPolicy": "vpnaas",
    "OS::Neutron::IPsecPolicy": "vpnaas", "OS::Neutron::IPsecSiteConnection": "vpnaas",
    "OS::Neutron::VPNService": "vpnaas", "OS::Neutron::L2Gateway": "l2-gateway",
    "OS::Neutron::L2GatewayConnection": "l2-gateway-connection",
    "OS::Neutron::PortChain": "sfc", "OS::Neutron::PortPairGroup": "sfc",
    "OS::Neutron::TaaS::TapFlow": "taas", "OS::Neutron::TaaS::TapService": "taas",
}

#: hidden in Heat 27 (never listed) but still run, as the type that replaced them
HIDDEN = frozenset({"OS::Magnum::BayModel"})

#: the types Heat 27 itself marks unsupported ("use at your own risk")
UNSUPPORTED = frozenset({"OS::Neutron::PortChain", "OS::Neutron::PortPairGroup"})


class ElsewhereResource(Resource):
    """A type whose service Kiln does not drive."""

    implemented = False  # see Resource.implemented
    validates_definition = False

    async def handle_create(self) -> Token:
        raise ResourceFailure(f"Service {self.client_name} is not available for resource "
                              f"type {self.type_name}, reason: Kiln does not implement it.",
                              exc_type="ResourceTypeUnavailable")


def _attributes(name: str, client: str) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        "type_name": name, "client_name": client,
        "required_extension": (EXTENSIONS[name],) if name in EXTENSIONS else (),
        "__doc__": f"{name}: needs {client}, which Kiln does not drive."}
    if name in UNSUPPORTED:
        attrs["support_status"] = SupportStatus(status="UNSUPPORTED")
    elif name in HIDDEN:
        attrs["support_status"] = SupportStatus(status="HIDDEN")
    return attrs


def resource_mapping() -> dict[str, type[Resource]]:
    return {name: type(name.replace("::", "_"), (ElsewhereResource,),
                       _attributes(name, client))
            for name, client in TYPES.items()}
