"""Types of retired OpenStack services (and retired APIs of live ones) that Heat 27 keeps
as hidden placeholders: a template naming one still validates and runs, each such
resource creating nothing, and none is ever listed. Without them a template that Heat
runs is a 400 on Kiln. The statuses are Heat 27's (its ``resource_types`` never shows
them, but the reason is kept for the day someone asks)."""

from __future__ import annotations

from kiln.resources.base import Resource, SupportStatus
from kiln.resources.common.placeholder import Placeholder

_LBAAS_V1 = ("Use LBaaS V2 instead.", "9.0.0", "7.0.0")
_OCTAVIA = ("Use octavia instead.", "21.0.0", None)
_SAHARA = ("Sahara project was retired", "23.0.0", "22.0.0")
_SENLIN = ("Senlin project was retired", "23.0.0", "22.0.0")
_MONASCA = ("Monasca project was retired", "25.0.0", "22.0.0")

#: type -> (why it is hidden, the Heat version that hid it, the one that deprecated it)
RETIRED: dict[str, tuple[str, str, str | None]] = {
    "OS::Aodh::CombinationAlarm": (
        "OS::Aodh::CombinationAlarm is deprecated and has been removed from Aodh, use "
        "OS::Aodh::CompositeAlarm instead.", "9.0.0", "7.0.0"),
    "OS::Designate::Domain": (
        "This resource has been removed, use OS::Designate::Zone instead.", "10.0.0",
        "8.0.0"),
    "OS::Designate::Record": (
        "This resource has been removed, use OS::Designate::RecordSet instead.", "10.0.0",
        "8.0.0"),
    "OS::Magnum::Bay": ("Please use OS::Magnum::Cluster instead.", "11.0.0", "9.0.0"),
    "OS::Monasca::AlarmDefinition": _MONASCA,
    "OS::Monasca::Notification": _MONASCA,
    "OS::Neutron::HealthMonitor": _LBAAS_V1,
    "OS::Neutron::LoadBalancer": _LBAAS_V1,
    "OS::Neutron::Pool": _LBAAS_V1,
    "OS::Neutron::PoolMember": _LBAAS_V1,
    "OS::Neutron::LBaaS::HealthMonitor": _OCTAVIA,
    "OS::Neutron::LBaaS::L7Policy": _OCTAVIA,
    "OS::Neutron::LBaaS::L7Rule": _OCTAVIA,
    "OS::Neutron::LBaaS::Listener": _OCTAVIA,
    "OS::Neutron::LBaaS::LoadBalancer": _OCTAVIA,
    "OS::Neutron::LBaaS::Pool": _OCTAVIA,
    "OS::Neutron::LBaaS::PoolMember": _OCTAVIA,
    "OS::Sahara::Cluster": _SAHARA,
    "OS::Sahara::ClusterTemplate": _SAHARA,
    "OS::Sahara::DataSource": _SAHARA,
    "OS::Sahara::ImageRegistry": _SAHARA,
    "OS::Sahara::Job": _SAHARA,
    "OS::Sahara::JobBinary": _SAHARA,
    "OS::Sahara::NodeGroupTemplate": _SAHARA,
    "OS::Senlin::Cluster": _SENLIN,
    "OS::Senlin::Node": _SENLIN,
    "OS::Senlin::Policy": _SENLIN,
    "OS::Senlin::Profile": _SENLIN,
    "OS::Senlin::Receiver": _SENLIN,
    "OS::Vitrage::Template": ("Vitrage project was retired", "27.0.0", "26.0.0"),
}


def _placeholder(type_name: str, why: str, hidden_in: str,
                 deprecated_in: str | None) -> type[Resource]:
    previous = (SupportStatus(status="DEPRECATED", version=deprecated_in)
                if deprecated_in else None)
    return type(type_name.replace("::", "_"), (Placeholder,), {
        "__module__": __name__,
        "__doc__": f"{type_name}: a hidden placeholder, as in Heat 27 ({why})",
        "type_name": type_name,
        "description": f"Kept so that old templates load: creates nothing ({why})",
        "support_status": SupportStatus(status="HIDDEN", version=hidden_in, message=why,
                                        previous_status=previous),
    })


def resource_mapping() -> dict[str, type[Resource]]:
    return {name: _placeholder(name, *status) for name, status in RETIRED.items()}
