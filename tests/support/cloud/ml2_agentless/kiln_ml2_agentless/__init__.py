"""An ML2 mechanism driver for a Neutron that runs without agents (tests only).

Nova asks Neutron to bind each server's port to the compute host. The real drivers
(openvswitch, ovn, ...) bind only where their agent reports in; with none running the
binding fails and the server goes to ERROR. This driver accepts every host: it binds the
port to its first segment as an OVS port (Nova's fake virt driver never plugs it) and
marks it ACTIVE, which also makes Neutron tell Nova the VIF is plugged.
"""

from neutron_lib import constants
from neutron_lib.api.definitions import portbindings
from neutron_lib.plugins.ml2 import api


class AgentlessDriver(api.MechanismDriver):
    """Binds any port on any host; nothing else."""

    def initialize(self):
        pass

    @property
    def connectivity(self):
        return portbindings.CONNECTIVITY_L2

    def bind_port(self, context):
        segments = context.segments_to_bind
        if not segments:
            return
        details = {portbindings.CAP_PORT_FILTER: True, portbindings.OVS_HYBRID_PLUG: False}
        context.set_binding(segments[0][api.ID], portbindings.VIF_TYPE_OVS, details,
                            status=constants.PORT_STATUS_ACTIVE)

    def filter_hosts_with_segment_access(self, context, segments, candidate_hosts,
                                         agent_getter):
        return set(candidate_hosts)

    def get_workers(self):
        return []
