"""A real `kiln serve` on PostgreSQL and on MariaDB: the same stack lifecycle, driven
through python-heatclient, works on each database server Kiln supports."""

from __future__ import annotations

import pytest
from heatclient.exc import HTTPNotFound

from tests.support.clients import heat_client, wait_for_stack_status
from tests.support.fixtures import StartKiln

TEMPLATE = """
heat_template_version: 2018-08-31
resources:
  word:
    type: OS::Heat::RandomString
    properties: {length: 8}
  chained:
    type: OS::Heat::Value
    properties: {value: {get_attr: [word, value]}}
outputs:
  word: {value: {get_attr: [chained, value]}}
"""


def lifecycle(start_kiln_factory: StartKiln, url: str) -> None:
    server = start_kiln_factory(options={"database": {"connection": url}})
    heat = heat_client(server.endpoint("proj1"))
    heat.stacks.create(stack_name="backend", template=TEMPLATE)
    stack = wait_for_stack_status(heat, "backend")
    assert stack.stack_status == "CREATE_COMPLETE"
    (output,) = stack.outputs
    assert output["output_key"] == "word"
    assert len(output["output_value"]) == 8
    resources = {r.resource_name: r.resource_status for r in heat.resources.list("backend")}
    assert resources == {"word": "CREATE_COMPLETE", "chained": "CREATE_COMPLETE"}
    assert [s.stack_name for s in heat.stacks.list()] == ["backend"]
    # another project sees nothing
    assert list(heat_client(server.endpoint("proj2")).stacks.list()) == []
    assert server.stop() == 0

    restarted = start_kiln_factory(options={"database": {"connection": url}})
    heat = heat_client(restarted.endpoint("proj1"))
    assert heat.stacks.get("backend").stack_status == "CREATE_COMPLETE"
    heat.stacks.delete("backend")
    # Once deleted, the name no longer resolves (404). A lookup that resolved the name
    # while the delete was still running is redirected to the stack's id, and showing a
    # stack by id shows deleted stacks too (as Heat does): then it is DELETE_COMPLETE.
    try:
        final = wait_for_stack_status(heat, "backend")
    except HTTPNotFound as exc:
        assert "The Stack (backend) could not be found" in str(exc)
    else:
        assert (final.stack_status, final.stack_status_reason) == (
            "DELETE_COMPLETE", "Stack DELETE completed successfully")
    assert list(heat.stacks.list()) == []


@pytest.mark.postgresql
def test_postgresql(start_kiln_factory: StartKiln, postgresql_url: str) -> None:
    lifecycle(start_kiln_factory, postgresql_url)


@pytest.mark.mysql
def test_mariadb(start_kiln_factory: StartKiln, mysql_url: str) -> None:
    lifecycle(start_kiln_factory, mysql_url)
