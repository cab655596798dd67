"""OS::Nova::Server's property and attribute schemas (Heat 27's names), apart from the
resource's behaviour in nova_server.py so that each module holds one thing."""

from __future__ import annotations

from typing import Any

from kiln.resources.base import Attribute, Property, SupportStatus
from kiln.resources.common.cloud import HIDDEN, custom
from kiln.resources.openstack.neutron_port import VNIC_TYPES
from kiln.template.constraints import AllowedValues, Length, Range


def _allowed(*values: Any) -> list[AllowedValues]:
    return [AllowedValues(allowed=values)]


_PORT_EXTRA = {
    "value_specs": Property("map", "Extra attributes of the port.", default={},
                            update_allowed=True),
    "admin_state_up": Property("boolean", "Whether the port is up.", default=True,
                               update_allowed=True),
    "mac_address": Property("string", "MAC address of the port.", constraints=custom("mac_addr")),
    "allowed_address_pairs": Property(
        "list", "Other addresses the port may send from.", update_allowed=True,
        schema=Property("map", schema={
            "mac_address": Property("string", "MAC address.", constraints=custom("mac_addr")),
            "ip_address": Property("string", "Address or CIDR.", required=True,
                                   constraints=custom("ip_or_cidr"))})),
    "binding:vnic_type": Property("string", "The vNIC type.", default="normal",
                                  update_allowed=True, constraints=_allowed(*VNIC_TYPES)),
    "port_security_enabled": Property("boolean", "Whether port security is on.",
                                      update_allowed=True),
    "qos_policy": Property("string", "QoS policy of the port.", update_allowed=True,
                           constraints=custom("neutron.qos_policy")),
    "propagate_uplink_status": Property("boolean", "Propagate the uplink status.",
                                        update_allowed=True),
    "no_fixed_ips": Property("boolean", "Give the port no address.", default=False,
                             update_allowed=True),
}

_NETWORK = {
    "uuid": Property("string", "Deprecated: use network.", support_status=HIDDEN,
                     constraints=custom("neutron.network")),
    "network": Property("string", "Network (name or ID) of the NIC.",
                        constraints=custom("neutron.network")),
    "allocate_network": Property("string", "'auto' or 'none' instead of a network.",
                                 update_allowed=True, constraints=_allowed("none", "auto")),
    "fixed_ip": Property("string", "Fixed address of the NIC.", constraints=custom("ip_addr")),
    "port": Property("string", "Existing port (name or ID) for the NIC.",
                     constraints=custom("neutron.port")),
    "port_extra_properties": Property("map", "Properties of the port made for the NIC.",
                                      update_allowed=True, schema=_PORT_EXTRA),
    "subnet": Property("string", "Subnet of the port made for the NIC."),
    "floating_ip": Property("string", "ID of a floating IP to point at the NIC."),
    "tag": Property("string", "Device tag of the NIC."),
}

_BDM = {
    "device_name": Property("string", "Device name (vda, ...).", required=True),
    "volume_id": Property("string", "Volume to attach.", constraints=custom("cinder.volume")),
    "snapshot_id": Property("string", "Snapshot to make the volume from.",
                            constraints=custom("cinder.snapshot")),
    "volume_size": Property("integer", "Size (GB) of the volume."),
    "delete_on_termination": Property("boolean", "Delete the volume with the server."),
}

_BDM_V2 = {
    "device_name": Property("string", "Device name (vda, ...)."),
    "volume_id": Property("string", "Volume to attach.", constraints=custom("cinder.volume")),
    "image_id": Property("string", "Deprecated: use image.", support_status=HIDDEN,
                         constraints=custom("glance.image")),
    "image": Property("string", "Image to make the volume from.",
                      constraints=custom("glance.image")),
    "snapshot_id": Property("string", "Snapshot to make the volume from.",
                            constraints=custom("cinder.snapshot")),
    "swap_size": Property("integer", "Size (MB) of a swap device."),
    "ephemeral_size": Property("integer", "Size (GB) of an ephemeral device.",
                               constraints=[Range(min=1)]),
    "ephemeral_format": Property("string", "File system of the ephemeral device.",
                                 constraints=_allowed("ext2", "ext3", "ext4", "xfs", "ntfs")),
    "device_type": Property("string", "Device type.", constraints=_allowed("cdrom", "disk")),
    "disk_bus": Property("string", "Bus of the device.",
                         constraints=_allowed("ide", "lame_bus", "sata", "scsi", "usb",
                                              "virtio")),
    "boot_index": Property("integer", "Boot order of the device."),
    "volume_size": Property("integer", "Size (GB) of the volume."),
    "delete_on_termination": Property("boolean", "Delete the volume with the server."),
    "volume_type": Property("string", "Type of the volume made.",
                            constraints=custom("cinder.vtype")),
}


PROPERTIES = {
    "name": Property("string", "Server name (default: the physical name).",
                     update_allowed=True),
    "image": Property("string", "Image (name or ID) to boot from.", update_allowed=True,
                      constraints=custom("glance.image")),
    "block_device_mapping": Property("list", "Volumes to attach (legacy format).",
                                     schema=Property("map", schema=_BDM)),
    "block_device_mapping_v2": Property("list", "Block devices of the server.",
                                        schema=Property("map", schema=_BDM_V2)),
    "flavor": Property("string", "Flavor (name or ID).", required=True,
                       update_allowed=True, constraints=custom("nova.flavor")),
    "flavor_update_policy": Property("string", "RESIZE the server on a flavor change, "
                                               "or REPLACE it.",
                                     default="RESIZE", update_allowed=True,
                                     constraints=_allowed("RESIZE", "REPLACE")),
    "image_update_policy": Property("string", "REBUILD the server on an image change, "
                                              "or REPLACE it.",
                                    default="REBUILD", update_allowed=True,
                                    constraints=_allowed("REBUILD", "REPLACE",
                                                         "REBUILD_PRESERVE_EPHEMERAL")),
    "key_name": Property("string", "Keypair to inject.", constraints=custom("nova.keypair")),
    "admin_user": Property("string", "Removed: has no effect.", support_status=HIDDEN),
    "availability_zone": Property("string", "Availability zone to boot in."),
    "security_groups": Property("list", "Security groups (names or IDs).", default=[]),
    "networks": Property("list", "The server's NICs.", update_allowed=True,
                         schema=Property("map", schema=_NETWORK)),
    "scheduler_hints": Property("map", "Hints for the scheduler."),
    "metadata": Property("map", "Key/value metadata of the server.", default={},
                         update_allowed=True),
    "user_data_format": Property("string", "How user_data is packaged.",
                                 default="HEAT_CFNTOOLS",
                                 constraints=_allowed("HEAT_CFNTOOLS", "RAW",
                                                      "SOFTWARE_CONFIG")),
    "software_config_transport": Property(
        "string", "How the agents get software deployments.", default="POLL_SERVER_CFN",
        update_allowed=True,
        constraints=_allowed("POLL_SERVER_CFN", "POLL_SERVER_HEAT", "POLL_TEMP_URL",
                             "ZAQAR_MESSAGE")),
    "user_data_update_policy": Property("string", "What a user_data change does.",
                                        default="REPLACE", update_allowed=True,
                                        constraints=_allowed("REPLACE", "IGNORE",
                                                             "REBUILD")),
    "user_data": Property("string", "User data for cloud-init.", default="",
                          update_allowed=True),
    "reservation_id": Property("string", "Reservation ID for a set of servers."),
    "config_drive": Property("boolean", "Whether to attach a config drive."),
    "diskConfig": Property("string", "Disk partitioning.",
                           constraints=_allowed("AUTO", "MANUAL")),
    "personality": Property("map", "Files to inject (path: content).", default={},
                            support_status=SupportStatus(status="DEPRECATED")),
    "admin_pass": Property("string", "Administrator password.", update_allowed=True),
    "tags": Property("list", "Server tags.", update_allowed=True,
                     schema=Property("string")),
    "deployment_swift_data": Property(
        "map", "Swift container/object for POLL_TEMP_URL.", default={},
        update_allowed=True,
        schema={"container": Property("string", "Container.", constraints=[Length(min=1)]),
                "object": Property("string", "Object.", constraints=[Length(min=1)])}),
}

ATTRIBUTES = {
    "name": Attribute("Name of the server.", "string"),
    "addresses": Attribute("Addresses per network, with ports.", "map"),
    "networks": Attribute("Addresses per network name and ID.", "map"),
    "first_address": Attribute("Deprecated: first IPv4 address.", "string",
                               support_status=HIDDEN),
    "instance_name": Attribute("The hypervisor's name of the server.", "string"),
    "accessIPv4": Attribute("The IPv4 access address.", "string"),
    "accessIPv6": Attribute("The IPv6 access address.", "string"),
    "console_urls": Attribute("Console URLs by type.", "map"),
    "tags": Attribute("The server's tags.", "list"),
    "os_collect_config": Attribute("os-collect-config settings of the server.", "map"),
}
