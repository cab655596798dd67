"""What the agent tests share: templates, waiting on stack and resource states, and the
collector arguments a DeployedServer publishes (read the way a user reads them, from the
server's ``os_collect_config`` attribute)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

DEADLINE = 90.0

SCRIPT = """#!/bin/sh
echo "stdout: $greeting from $deploy_server_id ($deploy_action)"
echo to-stderr >&2
printf '%s' "$greeting-done" > "$heat_outputs_path.result"
exit ${exit_code:-0}
"""


def deployment_template(*, transport: str = "POLL_TEMP_URL",
                        signal: str = "TEMP_URL_SIGNAL",
                        actions: list[str] | None = None) -> dict[str, Any]:
    """A DeployedServer, a script SoftwareConfig and a deployment of it to the server."""
    deployment: dict[str, Any] = {
        "config": {"get_resource": "config"},
        "server": {"get_resource": "server"},
        "signal_transport": signal,
        "input_values": {"greeting": {"get_param": "greeting"},
                         "exit_code": {"get_param": "exit_code"}},
    }
    if actions is not None:
        deployment["actions"] = actions
    return {
        "heat_template_version": "2018-08-31",
        "parameters": {"greeting": {"type": "string", "default": "hello"},
                       "exit_code": {"type": "string", "default": "0"}},
        "resources": {
            "server": {"type": "OS::Heat::DeployedServer",
                       "properties": {"software_config_transport": transport}},
            "config": {"type": "OS::Heat::SoftwareConfig",
                       "properties": {"group": "script",
                                      "inputs": [{"name": "greeting"},
                                                 {"name": "exit_code"}],
                                      "outputs": [{"name": "result"}],
                                      "config": SCRIPT}},
            "deployment": {"type": "OS::Heat::SoftwareDeployment", "properties": deployment},
        },
        "outputs": {
            "stdout": {"value": {"get_attr": ["deployment", "deploy_stdout"]}},
            "stderr": {"value": {"get_attr": ["deployment", "deploy_stderr"]}},
            "status_code": {"value": {"get_attr": ["deployment", "deploy_status_code"]}},
            "result": {"value": {"get_attr": ["deployment", "result"]}},
        },
    }


def wait_for(fetch: Callable[[], Any], done: Callable[[Any], bool], what: str,
             deadline: float = DEADLINE) -> Any:
    """Observe ``fetch()`` until ``done`` holds, with growing pauses, up to ``deadline``."""
    end = time.monotonic() + deadline
    delay = 0.02
    while True:
        value = fetch()
        if done(value):
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}; last value: {value!r}")
        time.sleep(delay)  # polling a remote state; bounded by the deadline
        delay = min(delay * 2, 0.25)


def settled(hc: Any, stack_id: str) -> Any:
    return wait_for(lambda: hc.stacks.get(stack_id),
                    lambda s: not s.stack_status.endswith("IN_PROGRESS"),
                    f"stack {stack_id} to settle")


def deleted(hc: Any, stack_id: str) -> str:
    """Wait for a delete to end: ``DELETE_COMPLETE`` once the stack is gone, else the
    status it settled in."""
    from heatclient import exc

    def status() -> str:
        try:
            stack = hc.stacks.get(stack_id)
        except exc.HTTPNotFound:
            return "DELETE_COMPLETE"
        if stack.stack_status == "DELETE_COMPLETE":
            return "DELETE_COMPLETE"
        return f"{stack.stack_status}: {stack.stack_status_reason}"

    return str(wait_for(status, lambda s: "IN_PROGRESS" not in s, f"{stack_id} deleted"))


def resource_status(hc: Any, stack_id: str, name: str) -> str:
    return str(hc.resources.get(stack_id, name).resource_status)


def deploy_actions(hc: Any, stack_id: str, server: str = "server") -> list[str]:
    """The ``deploy_action`` of each config in a server's metadata (what its agent
    would run next)."""
    configs = hc.resources.metadata(stack_id, server).get("deployments") or []
    return [str({i["name"]: i.get("value") for i in c["inputs"]}.get("deploy_action"))
            for c in configs]


def wait_deployment(hc: Any, stack_id: str, action: str, server: str = "server") -> None:
    """Wait until a deployment for ``action`` is in the server's metadata: the moment its
    agent can run it (the resource shows IN_PROGRESS a little before that)."""
    wait_for(lambda: deploy_actions(hc, stack_id, server), lambda got: action in got,
             f"a {action} deployment for {server}")


def wait_resource(hc: Any, stack_id: str, name: str, status: str) -> None:
    wait_for(lambda: resource_status(hc, stack_id, name), lambda s: s == status,
             f"{name} to reach {status}")


def outputs(hc: Any, stack_id: str) -> dict[str, Any]:
    stack = hc.stacks.get(stack_id)
    return {o["output_key"]: o.get("output_value") for o in stack.outputs}


def collector_args(occ: dict[str, Any]) -> list[str]:
    """os-collect-config's command-line options for the collector a server publishes (what
    os-apply-config writes into os-collect-config.conf on a real server)."""
    args: list[str] = []
    collectors = [c for c in occ["collectors"] if c != "local"]
    for name in collectors:
        for key, value in (occ.get(name) or {}).items():
            if value is None:
                continue
            option, text = f"--{name}-{key.replace('_', '-')}", str(value)
            # a value starting with "-" (an issued secret is random and now and then does)
            # would be read by argparse as an option: joined to its name instead
            args += [f"{option}={text}"] if text.startswith("-") else [option, text]
    return [*args, *collectors]


def server_collector(hc: Any, stack_id: str, server: str = "server") -> list[str]:
    occ = hc.resources.get(stack_id, server).attributes["os_collect_config"]
    return collector_args(occ)


def metadata_url(args: list[str]) -> str:
    """The ``request`` collector's URL among os-collect-config arguments."""
    url = args[args.index("--request-metadata-url") + 1]
    assert "temp_url_sig=" in url and "temp_url_expires=" in url, url
    return url


def create(hc: Any, name: str, template: dict[str, Any], **params: Any) -> str:
    """Start creating a stack (not waiting); its id."""
    stack = hc.stacks.create(stack_name=name, template=template, parameters=params)
    return str(stack["stack"]["id"])


def run_for(hc: Any, sid: str, box: Any, args: list[str], action: str) -> Any:
    """Once the server's deployment for ``action`` is there, run the agent chain once
    (it must succeed) and return the stack once it has settled."""
    wait_deployment(hc, sid, action)
    run = box.run_chain(args)
    assert run.returncode == 0, box.log()
    return settled(hc, sid)
