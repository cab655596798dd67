"""OS::Nova::HostAggregate through kiln serve and heatclient, checked in the real Nova.
The aggregate gets no availability zone: the test cloud's one compute host is shared by
the other tests' servers."""

from __future__ import annotations

import uuid
from typing import Any

from tests.cloud.helpers import delete_and_wait, physical_ids, settled


def _template(name: str, host: str, metadata: dict[str, str],
              hosts: bool = True) -> dict[str, Any]:
    return {"heat_template_version": "2018-08-31", "resources": {"agg": {
        "type": "OS::Nova::HostAggregate",
        "properties": {"name": name, "hosts": [host] if hosts else [],
                       "metadata": metadata}}}}


def test_host_aggregate_hosts_and_metadata_change_in_place(cloud_heat: Any, sdk: Any,
                                                           cloud: Any) -> None:
    suffix = uuid.uuid4().hex[:6]
    name = f"agg-{suffix}"
    host = cloud.layout.compute_host
    cloud_heat.stacks.create(stack_name=name, template=_template(
        f"kagg-{suffix}", host, {"ssd": "true", "tier": "gold"}))
    settled(cloud_heat, name, "CREATE_COMPLETE", timeout=120)
    ids = physical_ids(cloud_heat, name)
    agg = sdk.compute.get_aggregate(ids["agg"])
    assert (agg.name, agg.hosts) == (f"kagg-{suffix}", [host])
    assert {k: v for k, v in agg.metadata.items() if k in ("ssd", "tier")} == {
        "ssd": "true", "tier": "gold"}

    cloud_heat.stacks.update(name, template=_template(
        f"kagg-{suffix}-2", host, {"ssd": "false"}, hosts=False))
    settled(cloud_heat, name, "UPDATE_COMPLETE", timeout=120)
    assert physical_ids(cloud_heat, name) == ids
    agg = sdk.compute.get_aggregate(ids["agg"])
    assert (agg.name, agg.hosts) == (f"kagg-{suffix}-2", [])
    assert agg.metadata.get("ssd") == "false" and "tier" not in agg.metadata

    cloud_heat.stacks.update(name, template=_template(f"kagg-{suffix}-2", host, {}))
    stack = settled(cloud_heat, name, "UPDATE_COMPLETE", timeout=120)
    assert sdk.compute.get_aggregate(ids["agg"]).hosts == [host]
    assert delete_and_wait(cloud_heat, stack.id) == "DELETE_COMPLETE"   # hosts first
    assert ids["agg"] not in {str(a.id) for a in sdk.compute.aggregates()}
