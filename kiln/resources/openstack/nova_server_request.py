"""What OS::Nova::Server asks the cloud for before it POSTs a server: the ports Heat makes
itself for a network entry (``subnet``, ``port_extra_properties``) and the block device
mappings (legacy and v2) with their volumes, images and volume types looked up."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kiln.resources.common.cloud import OpenStackResource
from kiln.resources.common.lookup import find_image, find_volume, find_volume_type
from kiln.resources.openstack._neutron import find_id


async def internal_port(res: OpenStackResource, net: Mapping[str, Any], index: int,
                        network_id: str | None, groups: list[str]) -> str:
    body: dict[str, Any] = {"name": f"{res.name}-port-{index}"}
    if network_id:
        body["network_id"] = network_id
    fixed: dict[str, Any] = {}
    if net.get("fixed_ip"):
        fixed["ip_address"] = net["fixed_ip"]
    if net.get("subnet"):
        fixed["subnet_id"] = await find_id(res, "subnet", net["subnet"])
        if not network_id:
            subnet = await res.api("GET", f"/subnets/{fixed['subnet_id']}",
                                   service="network")
            body["network_id"] = subnet["subnet"]["network_id"]
    if fixed:
        body["fixed_ips"] = [fixed]
    extra = dict(net.get("port_extra_properties") or {})
    if extra.pop("no_fixed_ips", False):
        body["fixed_ips"] = []
    if groups:
        body["security_groups"] = [await find_id(res, "security_group", g)
                                   for g in groups]
    specs = extra.pop("value_specs", None) or {}
    if extra.get("qos_policy"):
        extra["qos_policy_id"] = await find_id(res, "qos_policy", extra.pop("qos_policy"))
    body.update({k: v for k, v in extra.items() if v is not None})
    body.update(specs)
    answer = await res.api("POST", "/ports", {"port": body}, service="network")
    return str(answer["port"]["id"])


async def block_devices(res: OpenStackResource, props: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    legacy = props.get("block_device_mapping")
    if legacy:
        items = []
        for bdm in legacy:
            item: dict[str, Any] = {"device_name": bdm["device_name"]}
            if bdm.get("volume_id"):
                item["volume_id"] = await find_volume(res, bdm["volume_id"])
            if bdm.get("snapshot_id"):
                item["snapshot_id"] = bdm["snapshot_id"]
            if bdm.get("volume_size") is not None:
                item["volume_size"] = bdm["volume_size"]
            item["delete_on_termination"] = bool(bdm.get("delete_on_termination"))
            items.append(item)
        out["block_device_mapping"] = items
    v2 = props.get("block_device_mapping_v2")
    if v2:
        out["block_device_mapping_v2"] = [await _bdm_v2(res, b) for b in v2]
    return out

async def _bdm_v2(res: OpenStackResource, bdm: Mapping[str, Any]) -> dict[str, Any]:
    item: dict[str, Any] = {}
    image = bdm.get("image")
    if bdm.get("volume_id"):
        item.update(source_type="volume", destination_type="volume",
                    uuid=await find_volume(res, bdm["volume_id"]))
    elif bdm.get("snapshot_id"):
        item.update(source_type="snapshot", destination_type="volume",
                    uuid=bdm["snapshot_id"])
    elif image:
        item.update(source_type="image", destination_type="volume",
                    uuid=await find_image(res, image))
    elif bdm.get("swap_size"):
        item.update(source_type="blank", destination_type="local",
                    guest_format="swap", volume_size=bdm["swap_size"])
    elif bdm.get("ephemeral_size"):
        item.update(source_type="blank", destination_type="local",
                    volume_size=bdm["ephemeral_size"])
        if bdm.get("ephemeral_format"):
            item["guest_format"] = bdm["ephemeral_format"]
    for key in ("device_name", "device_type", "disk_bus", "boot_index", "volume_size"):
        if bdm.get(key) is not None and key not in item:
            item[key] = bdm[key]
    if bdm.get("volume_type"):
        item["volume_type"] = await find_volume_type(res, bdm["volume_type"])
    item["delete_on_termination"] = bool(bdm.get("delete_on_termination"))
    return item
