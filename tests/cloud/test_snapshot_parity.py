"""Stack snapshots of OpenStack resources as Heat 27 makes them on the same cloud
(scripts/cloud_update_parity.py, bench/results/update_parity_heat27.json): a volume's
snapshot is a Cinder backup, and ``deletion_policy: Snapshot`` backs a volume up before
deleting it. The test cloud runs no cinder-backup service, so Cinder accepts the backup
and fails it ("Service not found for creating backup."), which Heat reports as the
snapshot's (or the delete's) failure; what such a failure leaves is what is compared."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from heatclient import exc

from tests.cloud.helpers import delete_and_wait, physical_ids, settled


def _volume(name: str, policy: str | None = None) -> dict[str, Any]:
    volume: dict[str, Any] = {"type": "OS::Cinder::Volume",
                              "properties": {"size": 1, "name": name}}
    if policy:
        volume["deletion_policy"] = policy
    return {"heat_template_version": "2018-08-31", "resources": {"volume": volume}}


def _backups(sdk: Any, volume_id: str) -> list[str]:
    return sorted(b.status for b in sdk.block_storage.backups(details=True)
                  if b.volume_id == volume_id)


def test_a_volume_snapshot_is_a_backup_and_its_failure_leaves_the_volume_usable(
        cloud_heat: Any, sdk: Any) -> None:
    """Heat 27: the snapshot asks Cinder for a backup, and fails with the backup's own
    fail_reason; the volume, still available, is then updated in place (Heat replaces a
    FAILED resource only when its object is in error or gone), and the failed snapshot
    cannot be restored."""
    name = f"snapvol-{uuid.uuid4().hex[:6]}"
    cloud_heat.stacks.create(stack_name=name, template=_volume("sv1"))
    settled(cloud_heat, name, "CREATE_COMPLETE")
    volume_id = physical_ids(cloud_heat, name)["volume"]
    snap = cloud_heat.stacks.snapshot(name, name="s1")["id"]
    stack = settled(cloud_heat, name, "SNAPSHOT_FAILED")
    assert stack.stack_status_reason == ("Resource SNAPSHOT failed: Error: "
                                         "resources.volume: Service not found for "
                                         "creating backup.")
    assert _backups(sdk, volume_id) == ["error"]

    cloud_heat.stacks.update(name, template=_volume("sv2"))
    settled(cloud_heat, name, "UPDATE_COMPLETE")
    assert physical_ids(cloud_heat, name)["volume"] == volume_id     # in place
    assert sdk.block_storage.get_volume(volume_id).name == "sv2"
    with pytest.raises(exc.HTTPBadRequest, match="Restoring incomplete snapshot"):
        cloud_heat.stacks.restore(name, snap)
    cloud_heat.stacks.snapshot_delete(name, snap)
    assert delete_and_wait(cloud_heat, name) == "DELETE_COMPLETE"
    # the backup in error stays (as after Heat): Cinder deletes backups only through
    # the backup service the test cloud does not run


def test_deletion_policy_snapshot_backs_a_volume_up_before_deleting_it(
        cloud_heat: Any, sdk: Any) -> None:
    """Heat 27 accepts ``deletion_policy: Snapshot`` on a volume and, at delete, asks
    Cinder for a backup first, deleting the volume only once the backup is available;
    a failed backup fails the delete and keeps the volume. A volume gone meanwhile has
    nothing to back up, and the next delete completes."""
    name = f"snapdel-{uuid.uuid4().hex[:6]}"
    cloud_heat.stacks.create(stack_name=name, template=_volume("sd1", "Snapshot"))
    settled(cloud_heat, name, "CREATE_COMPLETE")
    volume_id = physical_ids(cloud_heat, name)["volume"]
    status = delete_and_wait(cloud_heat, name)
    assert status == ('DELETE_FAILED: Resource DELETE failed: ResourceUnknownStatus: '
                      'resources.volume: Volume backup failed - Unknown status error due '
                      'to "Unknown"'), status
    assert sdk.block_storage.get_volume(volume_id).status == "available"
    assert _backups(sdk, volume_id) == ["error"]
    # a volume already gone has nothing to back up: the next delete completes
    sdk.block_storage.delete_volume(volume_id)
    sdk.block_storage.wait_for_delete(sdk.block_storage.get_volume(volume_id), wait=120)
    assert delete_and_wait(cloud_heat, name) == "DELETE_COMPLETE"


def test_an_external_resource_is_left_alone_by_an_update(cloud_heat: Any,
                                                          sdk: Any) -> None:
    """Heat 27 skips the update of a resource adopted with ``external_id`` before it
    looks at its new properties, so an image template without the properties a create
    would need updates COMPLETE and the image stays as it was; the stack's delete
    leaves the adopted image in the cloud (HOT's rule for external resources)."""
    image = sdk.image.create_image(name=f"ext-{uuid.uuid4().hex[:6]}", disk_format="raw",
                                   container_format="bare", data=b"\0" * 1024, wait=True)
    name = f"extimg-{uuid.uuid4().hex[:6]}"

    def template(props: dict[str, Any]) -> dict[str, Any]:
        return {"heat_template_version": "2018-08-31", "resources": {"image": {
            "type": "OS::Glance::WebImage", "external_id": image.id,
            "properties": props}}}

    cloud_heat.stacks.create(stack_name=name,
                             template=template({"location": "http://127.0.0.1:1/x"}))
    settled(cloud_heat, name, "CREATE_COMPLETE")
    cloud_heat.stacks.update(name, template=template({"location": "http://127.0.0.1:1/x",
                                                      "name": "renamed"}))
    settled(cloud_heat, name, "UPDATE_COMPLETE")
    assert sdk.image.get_image(image.id).name == image.name
    assert delete_and_wait(cloud_heat, name) == "DELETE_COMPLETE"
    assert sdk.image.get_image(image.id).status == "active"
    sdk.image.delete_image(image)


def test_user_data_rebuild_boots_the_server_with_the_new_user_data(
        cloud_heat: Any, sdk: Any) -> None:
    """``user_data_update_policy: REBUILD`` rebuilds the server in place with the new
    user data (Heat 27 hands the text to Nova as the image and fails the update)."""
    import base64

    from tests.support.cloud.catalog import IMAGE

    def template(user_data: str) -> dict[str, Any]:
        return {"heat_template_version": "2018-08-31", "resources": {"server": {
            "type": "OS::Nova::Server", "properties": {
                "image": IMAGE, "flavor": "m1.tiny", "networks": [{"network": "public"}],
                "user_data_format": "RAW", "user_data_update_policy": "REBUILD",
                "user_data": user_data}}}}

    name = f"udrebuild-{uuid.uuid4().hex[:6]}"
    cloud_heat.stacks.create(stack_name=name, template=template("one"))
    settled(cloud_heat, name, "CREATE_COMPLETE")
    server = physical_ids(cloud_heat, name)["server"]
    cloud_heat.stacks.update(name, template=template("two"))
    settled(cloud_heat, name, "UPDATE_COMPLETE")
    assert physical_ids(cloud_heat, name)["server"] == server
    found = sdk.compute.get_server(server)
    assert base64.b64decode(found.user_data).decode() == "two"
    assert delete_and_wait(cloud_heat, name, timeout=180) == "DELETE_COMPLETE"
