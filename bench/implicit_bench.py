"""What Heat's implicit dependencies cost the engine on a big cloud stack.

    .venv-test/bin/python bench/implicit_bench.py [--pairs 300]

One network and subnet, then N times (a port on the network, a server on the port, a
floating IP for the port): every port waits for the subnet, every server for the
subnet, every floating IP for the routers and interfaces reaching its port. The plugins
are the real classes with their cloud calls replaced (as in
tests/unit/engine/test_implicit_dependencies.py), created through EngineService on
SQLite; the figure is one computation of the implicit requirements, and one build of the
whole graph (which every action does once), on the created stack.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kiln.conf import CONF
from kiln.engine.model.implicit import add_implicit_requirements
from kiln.engine.service import EngineService, RequestContext
from kiln.resources.openstack.neutron_floatingip import FloatingIP
from kiln.resources.openstack.neutron_net import Net
from kiln.resources.openstack.neutron_port import Port
from kiln.resources.openstack.neutron_subnet import Subnet
from kiln.resources.openstack.nova_server import Server
from kiln.resources.registry import global_registry
from tests.unit.engine.test_implicit_dependencies import _offline


def template(pairs: int) -> dict[str, Any]:
    res: dict[str, Any] = {
        "net": {"type": "OS::Neutron::Net"},
        "subnet": {"type": "OS::Neutron::Subnet",
                   "properties": {"network": {"get_resource": "net"},
                                  "cidr": "10.0.0.0/16"}}}
    for i in range(pairs):
        res[f"p{i}"] = {"type": "OS::Neutron::Port",
                        "properties": {"network": {"get_resource": "net"}}}
        res[f"s{i}"] = {"type": "OS::Nova::Server",
                        "properties": {"flavor": "f", "image": "i",
                                       "networks": [{"port": {"get_resource": f"p{i}"}}]}}
        res[f"f{i}"] = {"type": "OS::Neutron::FloatingIP",
                        "properties": {"floating_network": "public",
                                       "port_id": {"get_resource": f"p{i}"}}}
    return {"heat_template_version": "2018-08-31", "resources": res}


async def main(pairs: int) -> None:
    registry = global_registry()
    for cls in (Net, Subnet, Port, Server, FloatingIP):
        registry.register(cls.type_name, _offline(cls))
    CONF.set_override("poll_initial_delay", 0.001, group="kiln_engine")
    directory = tempfile.mkdtemp()
    svc = EngineService(db_url=f"sqlite:///{directory}/bench.db")
    await svc.start()
    try:
        ctx = RequestContext(project_id="demo")
        ident = await svc.create_stack(ctx, "big", template(pairs), {}, {}, {})
        await svc.wait_for_stack(ident["stack_id"])
        stack = await svc.engine.load(ident["stack_id"])
        started = time.perf_counter()
        add_implicit_requirements(stack)
        implicit = time.perf_counter() - started
        started = time.perf_counter()
        svc.engine.graph(stack)
        graph = time.perf_counter() - started
        print(f"{len(stack.slots)} resources: implicit requirements {implicit * 1000:.1f} ms, "
              f"whole graph {graph * 1000:.1f} ms")
    finally:
        await svc.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=300)
    asyncio.run(main(parser.parse_args().pairs))
