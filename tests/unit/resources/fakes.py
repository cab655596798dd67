"""An in-memory ResourceRuntime and a small driver that runs the two-step contract.

The clock is explicit, so waiting plugins are tested by advancing it, never by sleeping.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kiln.conf import CONF
from kiln.errors import EntityNotFound
from kiln.resources.base import Resource, ResourceState, SignalKind
from kiln.resources.registry import Registry, build_registry, global_registry
from kiln.template.definitions import ResourceDefinition


class MemoryConfigStore:
    def __init__(self) -> None:
        self.configs: dict[str, dict[str, Any]] = {}

    async def create(self, *, name: str, group: str, config: Any,
                     inputs: Sequence[Mapping[str, Any]],
                     outputs: Sequence[Mapping[str, Any]],
                     options: Mapping[str, Any]) -> dict[str, Any]:
        config_id = str(uuid.uuid4())
        row = {"id": config_id, "name": name, "group": group, "config": config,
               "inputs": list(inputs), "outputs": list(outputs), "options": dict(options),
               "creation_time": "2026-01-01T00:00:00Z"}
        self.configs[config_id] = row
        return dict(row)

    async def get(self, config_id: str) -> dict[str, Any]:
        try:
            return dict(self.configs[config_id])
        except KeyError:
            raise EntityNotFound(f"Software Config ({config_id}) could not be found") from None

    async def delete(self, config_id: str) -> None:
        self.configs.pop(config_id, None)


class MemoryDeploymentStore:
    """Deployments as the engine keeps them; ``signal`` follows Heat's rules in short."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, Any]] = {}

    async def create(self, *, deployment_id: str, server_id: str, config_id: str,
                     input_values: Mapping[str, Any] | None, action: str, status: str,
                     status_reason: str) -> dict[str, Any]:
        row = {"id": deployment_id, "server_id": server_id, "config_id": config_id,
               "input_values": dict(input_values or {}), "output_values": None,
               "action": action, "status": status, "status_reason": status_reason}
        self.rows[deployment_id] = row
        return dict(row)

    async def get(self, deployment_id: str) -> dict[str, Any]:
        try:
            return dict(self.rows[deployment_id])
        except KeyError:
            raise EntityNotFound(f"Deployment {deployment_id} not found") from None

    async def update(self, deployment_id: str, **values: Any) -> dict[str, Any]:
        row = self.rows[deployment_id]
        row.update({k: v for k, v in values.items() if v is not None})
        return dict(row)

    async def delete(self, deployment_id: str) -> None:
        if self.rows.pop(deployment_id, None) is None:
            raise EntityNotFound(f"Deployment {deployment_id} not found")

    async def signal(self, deployment_id: str, details: Any) -> str | None:
        row = self.rows[deployment_id]
        code = details.get("deploy_status_code")
        failed = bool(code) and str(code) != "0"
        row.update(output_values=dict(details), status="FAILED" if failed else "COMPLETE",
                   status_reason=f"deploy_status_code : Deployment exited with non-zero "
                                 f"status code: {code}" if failed else "Outputs received")
        return f"deployment {deployment_id} {'failed' if failed else 'succeeded'}"


@dataclass
class FakeRuntime:
    stack_id: str = "5a7f7a3e-0000-4000-8000-000000000001"
    stack_name: str = "teststack"
    project_id: str = "proj"
    conf: Any = field(default_factory=lambda: CONF)
    nested: Any = None
    clock: float = 1_000_000.0
    software_configs: MemoryConfigStore = field(default_factory=MemoryConfigStore)
    software_deployments: MemoryDeploymentStore = field(default_factory=MemoryDeploymentStore)
    resources: dict[str, Resource] = field(default_factory=dict)
    stack_user_calls: list[tuple[str, str | None, bool]] = field(default_factory=list)
    #: resource name -> whether its stack user is enabled (after suspend/resume)
    stack_user_enabled: dict[str, bool] = field(default_factory=dict)
    saved: list[str] = field(default_factory=list)
    #: (suffix, body) of each autoscaling notification a group sent
    notifications: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    keypairs: dict[str, dict[str, str]] = field(default_factory=dict)

    def resolve(self, node: Any) -> Any:
        return node  # tests pass already-resolved properties

    def stack_parameter(self, name: str) -> Any:
        raise KeyError(name)  # a stack of no template

    def plugin_class(self, type_name: str) -> type[Resource]:
        """Types of the built-in registry only (no environment, no provider templates)."""
        return global_registry().get(type_name)

    def now(self) -> float:
        return self.clock

    def resource(self, name: str) -> Resource | None:
        return self.resources.get(name)

    def resource_by_refid(self, refid: str) -> Resource | None:
        for res in self.resources.values():
            if res.reference_id() == refid:
                return res
        return None

    def signal_url(self, resource_name: str, kind: SignalKind) -> str:
        if kind == "heat":
            return (f"http://kiln:8004/v1/{self.project_id}/stacks/{self.stack_name}/"
                    f"{self.stack_id}/resources/{resource_name}/signal")
        arn = (f"arn%3Aopenstack%3Aheat%3A%3A{self.project_id}%3Astacks/{self.stack_name}/"
               f"{self.stack_id}/resources/{resource_name}")
        path = "waitcondition" if kind == "cfn_waitcondition" else "signal"
        return f"http://kiln:8000/v1/{path}/{arn}?Signature=abc"

    def signal_token(self, resource_name: str) -> str | None:
        return "stack-user-token"

    async def save_resource(self, resource_name: str, *,
                            event: tuple[str, str] | None = None) -> None:
        self.saved.append(resource_name)

    def notify_autoscaling(self, suffix: str, body: Mapping[str, Any]) -> None:
        self.notifications.append((suffix, dict(body)))

    async def issue_ec2_keypair(self, resource_name: str, *,
                                user: str | None = None) -> Mapping[str, str]:
        keypair = {"access_key": f"AK{len(self.keypairs)}-{resource_name}",
                   "secret_key": "SK"}
        self.keypairs[keypair["access_key"]] = keypair
        return keypair

    async def delete_ec2_keypair(self, access_key: str) -> None:
        self.keypairs.pop(access_key, None)

    def presigned_signal_url(self, resource_name: str, kind: SignalKind,
                             keypair: Mapping[str, str]) -> str:
        return (f"{self.signal_url(resource_name, kind).split('?')[0]}"
                f"?AWSAccessKeyId={keypair['access_key']}&Signature=abc")

    async def set_stack_user_enabled(self, resource_name: str, enabled: bool) -> None:
        self.stack_user_enabled[resource_name] = enabled

    async def stack_user(self, resource_name: str, *, password: str | None = None,
                         keypair: bool = False) -> Mapping[str, Any]:
        self.stack_user_calls.append((resource_name, password, keypair))
        user: dict[str, Any] = {"user_id": "u-1", "project_id": "stack-user-project",
                                "auth_url": "http://keystone:5000/v3", "region_name": None}
        if keypair:
            user.update(access_key_id="AK", secret_access_key="SK",
                        metadata_url="http://kiln:8000/v1/")
        return user


_REGISTRY: Registry | None = None


def registry() -> Registry:
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = build_registry(use_entry_points=False)
    return _REGISTRY


def make(runtime: FakeRuntime, name: str, type_name: str,
         properties: Mapping[str, Any] | None = None) -> Resource:
    """A resource of the stack, registered with the runtime like the engine would."""
    cls = registry().get(type_name)
    definition = ResourceDefinition(name=name, type=type_name, properties=dict(properties or {}),
                                    raw={"type": type_name, "properties": properties or {}})
    res = cls(name, definition, runtime, ResourceState())
    res.validate()
    runtime.resources[name] = res
    return res


def roundtrip(token: Any) -> Any:
    """What the engine does with a token: persist it as JSON and read it back."""
    return json.loads(json.dumps(token))


#: what :func:`check_once` answers when the action is complete
DONE: Any = object()


async def check_once(res: Resource, check: Any, token: Any) -> Any:
    """One check, given the token as the engine gives it (kiln.engine.runtime.runner):
    the same token every poll until a check hands a new one on (``res.checkpoint``),
    which the engine persists (JSON) and gives to the next check. A check that changes
    its token in place fails here: the engine persisted the token as it was, so the
    change would be lost with a crash (a resumed resize would re-POST from step 0)."""
    before = json.dumps(token, sort_keys=True)
    done = await check(token)
    assert json.dumps(token, sort_keys=True) == before, (
        f"{res.name}: check changed its token in place ({before} -> "
        f"{json.dumps(token, sort_keys=True)}); hand a new one on with checkpoint()")
    moved = res.take_checkpoint()
    if done:
        return DONE
    return token if moved is None else roundtrip(moved[0])


async def run(res: Resource, action: str, *args: Any, advance: bool = True,
              max_polls: int = 1000) -> int:
    """Drive handle_<action> then check_<action>_complete to completion.

    Between polls the fake clock moves by the plugin's poll_delay hint (or 1 s), which is
    what the engine's scheduler does with real time. Returns the number of checks.
    """
    runtime = res.runtime
    assert isinstance(runtime, FakeRuntime)
    res.take_checkpoint()
    token = await getattr(res, "handle_" + action)(*args)
    check = getattr(res, f"check_{action}_complete")
    for polls in range(1, max_polls + 1):
        token = await check_once(res, check, token)
        if token is DONE:
            return polls
        delay = res.poll_delay(token)
        if advance:
            runtime.clock += 1.0 if delay is None else delay
    raise AssertionError(f"{res.name} {action} never completed")
