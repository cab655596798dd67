"""Issue 14's benchmark: N servers, each with a port and a floating IP, on the test
cloud (tests/support/cloud), created and deleted by Kiln and, with ``--heat-url``, by
the real Heat 27 on the same services, plus the cloud's own time for the same objects
made directly with openstacksdk (the floor any orchestrator adds to).

    .venv-test/bin/python bench/cloud_bench.py --servers 50 [--write] \\
        [--heat-url http://127.0.0.1:20304/v1/<project id> --heat-db <its heat.sqlite>]

The stack: a network, a subnet, a router with a gateway to ``public`` and an interface,
then per server a port, the server on it (m1.tiny, cirros-kiln) and a floating IP for
the port (depending on the interface). Times are wall clock from the create request to
CREATE_COMPLETE, and from the delete request to the stack being gone.

Beside the wall times, each create is set against the critical path of the cloud's own
time for its resources (``bench/critical_path.py``): the ratio wall / critical path is
issue 14's "adds almost nothing" (target <= 1.10), and the gaps are what the
orchestrator added between a requirement's COMPLETE and its dependant's IN_PROGRESS.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.critical_path import (
    analyse,
    requirements,
    server_readiness,
    spans_from_api,
    spans_from_db,
)
from tests.support.clients import heat_client
from tests.support.cloud import running_cloud
from tests.support.server import start_kiln


def template(servers: int) -> dict[str, Any]:
    resources: dict[str, Any] = {
        "net": {"type": "OS::Neutron::Net"},
        "subnet": {"type": "OS::Neutron::Subnet",
                   "properties": {"network": {"get_resource": "net"},
                                  "cidr": "10.60.0.0/22"}},
        "router": {"type": "OS::Neutron::Router",
                   "properties": {"external_gateway_info": {"network": "public"}}},
        "iface": {"type": "OS::Neutron::RouterInterface",
                  "properties": {"router": {"get_resource": "router"},
                                 "subnet": {"get_resource": "subnet"}}},
    }
    for i in range(servers):
        resources[f"port{i}"] = {
            "type": "OS::Neutron::Port",
            "properties": {"network": {"get_resource": "net"},
                           "fixed_ips": [{"subnet": {"get_resource": "subnet"}}]}}
        resources[f"server{i}"] = {
            "type": "OS::Nova::Server",
            "properties": {"flavor": "m1.tiny", "image": "cirros-kiln",
                           "user_data_format": "RAW",
                           "networks": [{"port": {"get_resource": f"port{i}"}}]}}
        resources[f"fip{i}"] = {
            "type": "OS::Neutron::FloatingIP", "depends_on": ["iface"],
            "properties": {"floating_network": "public",
                           "port_id": {"get_resource": f"port{i}"}}}
    return {"heat_template_version": "2018-08-31", "resources": resources}


def _wait(heat: Any, stack_id: str, timeout: float) -> str:
    from heatclient import exc

    deadline = time.monotonic() + timeout
    while True:
        try:
            stack = heat.stacks.get(stack_id)
        except exc.HTTPNotFound:
            return "DELETE_COMPLETE"
        if not stack.stack_status.endswith("_IN_PROGRESS"):
            return str(stack.stack_status) + (
                "" if stack.stack_status.endswith("COMPLETE") else
                f": {stack.stack_status_reason}")
        if time.monotonic() > deadline:
            return f"TIMEOUT ({stack.stack_status})"
        time.sleep(0.2)  # a client's status poll (heatclient's --wait polls every 5 s)


def run_stack(heat: Any, servers: int, timeout: float, *, conn: Any = None,
              db: Path | None = None) -> dict[str, Any]:
    """Create, analyse (events from *db* if given, else the API), delete."""
    name = f"bench-{uuid.uuid4().hex[:8]}"
    t0 = time.monotonic()
    requested = time.time()
    created = heat.stacks.create(stack_name=name, template=template(servers))
    accepted = time.time()
    stack_id = created["stack"]["id"]
    status = _wait(heat, stack_id, timeout)
    done = time.time()
    create_s = time.monotonic() - t0
    result: dict[str, Any] = {"create_s": round(create_s, 1), "create_status": status,
                              "load_average_at_create_end": os.getloadavg()[0]}
    if status == "CREATE_COMPLETE":
        spans = (spans_from_db(db, stack_id, name) if db is not None
                 else spans_from_api(heat, stack_id, name))
        result["events_from"] = "database (microseconds)" if db else "API (seconds)"
        ready: dict[str, float] = {}
        if conn is not None:
            result["nova"], ready = server_readiness(conn, heat, stack_id, spans)
        result["critical_path"] = analyse(spans, requirements(heat, stack_id),
                                          requested, accepted, done, ready)
        print(json.dumps(result, indent=2), flush=True)
    t1 = time.monotonic()
    heat.stacks.delete(stack_id)
    deleted = _wait(heat, stack_id, timeout)
    result.update({"delete_s": round(time.monotonic() - t1, 1), "delete_status": deleted})
    return result


def direct(conn: Any, servers: int) -> dict[str, Any]:
    """The same objects made with openstacksdk, as fast as the dependencies allow: the
    cloud's own time (network chain, then all ports/servers/floating IPs at once)."""
    t0 = time.monotonic()
    public = conn.network.find_network("public", ignore_missing=False)
    net = conn.network.create_network(name="bench-direct")
    subnet = conn.network.create_subnet(network_id=net.id, cidr="10.61.0.0/22",
                                        ip_version=4)
    router = conn.network.create_router(name="bench-direct",
                                        external_gateway_info={"network_id": public.id})
    conn.network.add_interface_to_router(router, subnet_id=subnet.id)
    flavor = conn.compute.find_flavor("m1.tiny", ignore_missing=False)
    image = conn.image.find_image("cirros-kiln", ignore_missing=False)
    chain_s = time.monotonic() - t0

    def one(_: int) -> tuple[Any, Any, Any]:
        port = conn.network.create_port(network_id=net.id,
                                        fixed_ips=[{"subnet_id": subnet.id}])
        server = conn.compute.create_server(name="bench-direct", flavor_id=flavor.id,
                                            image_id=image.id,
                                            networks=[{"port": port.id}])
        fip = conn.network.create_ip(floating_network_id=public.id, port_id=port.id)
        conn.compute.wait_for_server(server, interval=0.2, wait=600)
        return port, server, fip

    with concurrent.futures.ThreadPoolExecutor(max_workers=servers) as pool:
        list(pool.map(one, range(servers)))
    create_s = time.monotonic() - t0
    print(f"direct create: {create_s:.1f} s", flush=True)
    cleanup(conn, "bench-direct")
    return {"create_s": round(create_s, 1), "network_chain_s": round(chain_s, 1)}


def _retry(call: Any, *args: Any, **kwargs: Any) -> Any:
    """A cleanup call, retried while the loaded cloud drops connections."""
    for attempt in range(5):
        try:
            return call(*args, **kwargs)
        except Exception:
            if attempt == 4:
                raise
            time.sleep(2)  # the cloud is overloaded: give it a moment
    return None


def cleanup(conn: Any, name: str) -> None:
    """Delete the servers named *name* (and their floating IPs and ports), then the
    bench network, its router and subnet."""
    servers = [s for s in conn.compute.servers() if s.name == name]
    for server in servers:
        for port in _retry(lambda s=server: list(conn.network.ports(device_id=s.id))):
            for fip in _retry(lambda p=port: list(conn.network.ips(port_id=p.id))):
                _retry(conn.network.delete_ip, fip)
        _retry(conn.compute.delete_server, server)
    for server in servers:
        _retry(conn.compute.wait_for_delete, server, interval=0.5, wait=600)
    nets = _retry(lambda: list(conn.network.networks(name=name)))
    for router in _retry(lambda: list(conn.network.routers(name=name))):
        for net in nets:
            for subnet in net.subnet_ids:
                _retry(conn.network.remove_interface_from_router, router, subnet_id=subnet)
        _retry(conn.network.delete_router, router)
    for net in nets:
        for port in _retry(lambda n=net: list(conn.network.ports(network_id=n.id))):
            if port.device_owner != "network:router_interface":
                _retry(conn.network.delete_port, port, ignore_missing=True)
        _retry(conn.network.delete_network, net)


def heat_session_client(url: str, auth: dict[str, Any]) -> Any:
    from heatclient import client as heat
    from keystoneauth1 import session
    from keystoneauth1.identity import v3

    sess = session.Session(auth=v3.Password(**auth))
    return heat.Client("1", session=sess, endpoint_override=url)


def run_kiln(cloud: Any, conn: Any, servers: int, timeout: float) -> dict[str, Any]:
    """Start ``kiln serve`` (SQLite) on the cloud, run the stack, stop it."""
    workdir = Path(f"/tmp/kiln-cloud-bench-{uuid.uuid4().hex[:6]}")
    options = {"kiln_clients": {
        "auth_url": cloud.auth_url, "username": "admin",
        "password": cloud.layout.admin_password, "project_name": "admin"},
        "DEFAULT": {"region_name_for_services": cloud.region}}
    kiln = start_kiln(workdir, options=options)
    try:
        return run_stack(heat_client(kiln.endpoint("admin")), servers, timeout,
                         conn=conn, db=workdir / "state" / "kiln.sqlite")
    finally:
        kiln.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--servers", type=int, default=50)
    parser.add_argument("--heat-url", help="the real Heat's /v1/<project id> URL")
    parser.add_argument("--heat-db", type=Path,
                        help="its SQLite file, for event times in microseconds")
    parser.add_argument("--skip-kiln", action="store_true")
    parser.add_argument("--skip-direct", action="store_true")
    parser.add_argument("--timeout", type=float, default=1200)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--write", action="store_true",
                        help="update bench/results/cloud.json: the entries this run "
                             "measured replace those of the same name (so Kiln and "
                             "Heat may be measured by separate runs)")
    args = parser.parse_args()
    if args.write:
        args.json = Path(__file__).resolve().parent / "results" / "cloud.json"
    result: dict[str, Any] = {"servers": args.servers,
                              "load_average_at_start": os.getloadavg()[0],
                              "cpus": os.cpu_count(),
                              "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    with running_cloud() as cloud:
        if not args.skip_direct:
            result["direct_sdk"] = direct(cloud.connect(), args.servers)
            print("direct:", result["direct_sdk"], flush=True)
        conn = cloud.connect()
        if not args.skip_kiln:
            result["kiln"] = run_kiln(cloud, conn, args.servers, args.timeout)
            print("kiln:", result["kiln"], flush=True)
        if args.heat_url:
            result["heat27"] = run_stack(heat_session_client(args.heat_url, cloud.auth),
                                         args.servers, args.timeout, conn=conn,
                                         db=args.heat_db)
            print("heat 27:", result["heat27"], flush=True)
    if args.json:
        recorded = result
        if args.write:
            # each measured entry keeps the run it came from (load, size, time)
            recorded = json.loads(args.json.read_text()) if args.json.exists() else {}
            run = {k: result[k] for k in ("servers", "load_average_at_start", "started")}
            for entry in ("direct_sdk", "kiln", "heat27"):
                if entry in result:
                    recorded[entry] = {**result[entry], "run": run}
            recorded["cpus"] = result["cpus"]
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(recorded, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
