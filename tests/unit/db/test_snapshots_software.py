"""Snapshots, software configs and deployments."""

from __future__ import annotations

import pytest

from kiln import errors
from kiln.db import snapshots, software, stacks
from tests.unit.db.support import Tx, new_stack


def test_snapshot_crud(tx: Tx) -> None:
    st = new_stack(tx)
    with tx() as s:
        a = snapshots.create_snapshot(s, st.id, "p1", "first")
        b = snapshots.create_snapshot(s, st.id, "p1", None, data={"resources": {}})
        assert (a.action, a.status) == ("SNAPSHOT", "IN_PROGRESS")
        assert snapshots.update_snapshot(s, a.id, {"status": "COMPLETE",
                                                   "data": {"resources": {"r": {}}}})
        assert not snapshots.update_snapshot(s, "missing", {"status": "COMPLETE"})
    with tx() as s:
        got = snapshots.get_snapshot(s, a.id)
        assert got is not None and got.status == "COMPLETE"
        assert got.data == {"resources": {"r": {}}} and got.updated_at is not None
        assert [x.id for x in snapshots.list_snapshots(s, st.id)] == [a.id, b.id]
        assert snapshots.count_snapshots(s, st.id) == 2
        assert snapshots.delete_snapshot(s, b.id)
        assert not snapshots.delete_snapshot(s, b.id)
        assert snapshots.get_snapshot(s, b.id) is None
        stacks.soft_delete_stack(s, st.id)
        assert snapshots.count_snapshots(s, st.id) == 1   # a soft delete keeps them


def test_software_config_crud_and_delete_refused_while_deployed(tx: Tx) -> None:
    with tx() as s:
        cfg = software.create_software_config(
            s, "p1", name="cfg", group="script",
            config={"config": "#!/bin/sh\necho hi", "inputs": [], "outputs": [],
                    "options": {}})
        other = software.create_software_config(s, "p2", name="x", group=None, config=None)
        dep = software.create_software_deployment(
            s, "p1", config_id=cfg.id, server_id="srv-1", action="CREATE",
            status="IN_PROGRESS", input_values={"a": 1})
    with tx() as s:
        got = software.get_software_config(s, cfg.id)
        assert got is not None and got.config["config"].startswith("#!/bin/sh")
        assert [c.id for c in software.list_software_configs(s, "p1")] == [cfg.id]
        assert {c.id for c in software.list_software_configs(s, None)} == {cfg.id, other.id}
        with pytest.raises(errors.Conflict, match="can not be deleted as it is referenced"):
            software.delete_software_config(s, cfg.id)
    with tx() as s:
        assert software.delete_software_deployment(s, dep.id)
        assert software.delete_software_config(s, cfg.id)
        assert software.get_software_config(s, cfg.id) is None


def test_software_config_pages_newest_first(tx: Tx) -> None:
    with tx() as s:
        made = [software.create_software_config(s, "p1", name=f"c{i}", group="script",
                                                config={}) for i in range(5)]
    newest_first = [c.id for c in reversed(made)]
    with tx() as s:
        assert [c.id for c in software.list_software_configs(s, "p1")] == newest_first
        page1 = software.list_software_configs(s, "p1", limit=2)
        page2 = software.list_software_configs(s, "p1", limit=2, marker=page1[-1].id)
        assert [c.id for c in page1 + page2] == newest_first[:4]


def test_software_deployments_by_server_and_update(tx: Tx) -> None:
    with tx() as s:
        cfg = software.create_software_config(s, "p1", name="c", group="script", config={})
        cfg2 = software.create_software_config(s, "p1", name="c2", group="script", config={})
        d1 = software.create_software_deployment(s, "p1", config_id=cfg.id,
                                                 server_id="srv-1", action="CREATE",
                                                 status="IN_PROGRESS")
        d2 = software.create_software_deployment(s, "p1", config_id=cfg.id,
                                                 server_id="srv-2", action="CREATE",
                                                 status="IN_PROGRESS",
                                                 stack_user_project_id="sup")
        with pytest.raises(errors.EntityNotFound):
            software.create_software_deployment(s, "p1", config_id="nope", server_id="x",
                                                action="CREATE", status="IN_PROGRESS")
    with tx() as s:
        assert [d.id for d in software.list_software_deployments(s, "p1")] == [d1.id, d2.id]
        assert [d.id for d in software.list_software_deployments(
            s, "p1", server_id="srv-2")] == [d2.id]
        # the stack-user project (the agent's credentials) sees its deployments too
        assert [d.id for d in software.list_software_deployments(s, "sup")] == [d2.id]
        got = software.get_software_deployment(s, d1.id)
        assert got is not None and got.server_id == "srv-1"
        upd = software.update_software_deployment(s, d1.id, {
            "status": "COMPLETE", "output_values": {"deploy_stdout": "ok"},
            "config_id": cfg2.id})
        assert upd is not None and upd.status == "COMPLETE" and upd.config_id == cfg2.id
        assert upd.output_values == {"deploy_stdout": "ok"}
        assert software.update_software_deployment(s, "missing", {"status": "X"}) is None
        with pytest.raises(errors.EntityNotFound):
            software.update_software_deployment(s, d1.id, {"config_id": "nope"})
