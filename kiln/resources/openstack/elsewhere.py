"""Heat's resource types for services Kiln has no plugin for (Octavia, Designate,
Manila, Trove, Magnum, Zaqar, Mistral, Aodh, Barbican, Zun, Blazar, Ironic, Swift, ...).

They are registered under Heat's names with the service they need, so that a template
using one gets Heat's answer instead of "unknown type": without the service in the
catalog, HEAT-E99001 "Service <client> is not available for resource type <type>,
reason: <client> <service type> endpoint is not in service catalog." (a 400), and the
listing leaves them out, as Heat does. With the service present they are still not
available ("Kiln does not implement ..."): Kiln cannot create them.
"""

from __future__ import annotations

from kiln.resources.base import Resource, ResourceFailure, Token

#: type name -> Heat's client plugin name
TYPES = {
    "AWS::S3::Bucket": "swift",
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
    "OS::Heat::SwiftSignal": "swift",
    "OS::Heat::SwiftSignalHandle": "swift",
    "OS::Ironic::Port": "ironic",
    "OS::Magnum::Cluster": "magnum",
    "OS::Magnum::ClusterTemplate": "magnum",
    "OS::Manila::SecurityService": "manila",
    "OS::Manila::Share": "manila",
    "OS::Manila::ShareNetwork": "manila",
    "OS::Manila::ShareType": "manila",
    "OS::Mistral::CronTrigger": "mistral",
    "OS::Mistral::ExternalResource": "mistral",
    "OS::Mistral::Workflow": "mistral",
    "OS::Neutron::FloatingIPPortForward": "openstack",
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
    "OS::Swift::Container": "swift",
    "OS::Trove::Cluster": "trove",
    "OS::Trove::Instance": "trove",
    "OS::Zaqar::MistralTrigger": "zaqar",
    "OS::Zaqar::Queue": "zaqar",
    "OS::Zaqar::SignedQueueURL": "zaqar",
    "OS::Zaqar::Subscription": "zaqar",
    "OS::Zun::Container": "zun",
}


class ElsewhereResource(Resource):
    """A type whose service Kiln does not drive."""

    implemented = False  # see Resource.implemented
    validates_definition = False

    async def handle_create(self) -> Token:
        raise ResourceFailure(f"Service {self.client_name} is not available for resource "
                              f"type {self.type_name}, reason: Kiln does not implement it.",
                              exc_type="ResourceTypeUnavailable")


def resource_mapping() -> dict[str, type[Resource]]:
    return {name: type(name.replace("::", "_"), (ElsewhereResource,),
                       {"type_name": name, "client_name": client,
                        "__doc__": f"{name}: needs {client}, which Kiln does not drive."})
            for name, client in TYPES.items()}
