"""What a plugin may reach outside itself: the runtime the engine gives each resource.

Kept apart from :mod:`kiln.resources.base` so the plugin base stays about plugins; the
base re-exports these names, which is where docs/contracts.md points.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from kiln.resources.base import Resource

SignalKind = Literal["heat", "cfn_waitcondition", "cfn_signal"]


class SoftwareConfigStore(Protocol):
    """The engine's software_config table, as the software-config plugins see it.

    ``create`` stores an immutable config and returns Heat's software-config dict
    (``id``, ``name``, ``group``, ``config``, ``inputs``, ``outputs``, ``options``,
    ``creation_time``); ``get`` returns the same dict or raises EntityNotFound;
    ``delete`` removes it (a missing id is not an error).
    """

    async def create(self, *, name: str, group: str, config: Any,
                     inputs: Sequence[Mapping[str, Any]],
                     outputs: Sequence[Mapping[str, Any]],
                     options: Mapping[str, Any]) -> dict[str, Any]: ...

    async def get(self, config_id: str) -> dict[str, Any]: ...

    async def delete(self, config_id: str) -> None: ...


class SoftwareDeploymentStore(Protocol):
    """The engine's software_deployment table (Heat's deployment dicts: ``id``,
    ``server_id``, ``config_id``, ``input_values``, ``output_values``, ``action``,
    ``status``, ``status_reason``, ``creation_time``). Creating or updating one refreshes
    the server's deployment metadata; ``get``/``update``/``delete`` raise EntityNotFound
    for an unknown id. ``signal`` applies an agent's signal (outputs, status code) exactly
    as ``EngineService.signal_software_deployment`` does and returns the event reason."""

    async def create(self, *, deployment_id: str, server_id: str, config_id: str,
                     input_values: Mapping[str, Any] | None, action: str, status: str,
                     status_reason: str) -> dict[str, Any]: ...

    async def get(self, deployment_id: str) -> dict[str, Any]: ...

    async def update(self, deployment_id: str, *, config_id: str | None = None,
                     input_values: Mapping[str, Any] | None = None,
                     output_values: Mapping[str, Any] | None = None,
                     action: str | None = None, status: str | None = None,
                     status_reason: str | None = None) -> dict[str, Any]: ...

    async def delete(self, deployment_id: str) -> None: ...

    async def signal(self, deployment_id: str, details: Any) -> str | None: ...


class AlarmStore(Protocol):
    """The alarms the watcher evaluates (kiln.alarms), as alarm resources see them: one
    alarm per resource, in the stack's project. ``rule`` is a
    :class:`kiln.alarms.rules.Rule`."""

    async def put(self, name: str, rule: Any, *, resource_name: str,
                  enabled: bool = True) -> None: ...

    async def delete(self, resource_name: str) -> None: ...

    async def set_enabled(self, name: str, enabled: bool) -> None: ...


class Peers(Protocol):
    """The other resources of a stack, as a plugin sees them while the engine builds the
    stack's dependency graph (:meth:`kiln.resources.base.Resource.implicit_requirements`).
    """

    def of_type(self, *type_names: str) -> Sequence[Resource]:
        """The resources whose type (as written, or as the environment maps it) is one
        of *type_names* (Heat's ``has_interface``)."""

    def value(self, resource: Resource, key: str) -> Any:
        """Property *key* of *resource* as its definition resolves now (a resource not
        yet created is referred to by its name, as Heat's graph sees it); None when it
        is unset or cannot be resolved yet."""

    def requirements(self, name: str) -> frozenset[str]:
        """What resource *name* already waits for (its references and depends_on)."""


class ResourceRuntime(Protocol):
    """Everything a plugin may reach outside itself; the engine implements it.

    Plugins never import the engine or the database; tests pass an in-memory runtime.
    """

    @property
    def stack_id(self) -> str: ...

    @property
    def stack_name(self) -> str: ...

    @property
    def project_id(self) -> str: ...

    #: kiln.conf.CONF (or a test double with the same attributes)
    @property
    def conf(self) -> Any: ...

    #: child-stack operations in the same engine (kiln.resources.nested.NestedStackOps)
    @property
    def nested(self) -> Any: ...

    #: OpenStack clients (kiln.clients.CloudClients) acting for the stack's owner; cloud
    #: plugins reach every OpenStack API through it and never build a session
    @property
    def clients(self) -> Any: ...

    @property
    def software_configs(self) -> SoftwareConfigStore: ...

    #: the stack's files (get_file contents, provider templates), by name
    @property
    def files(self) -> Mapping[str, str]: ...

    def plugin_class(self, type_name: str) -> type[Resource]:
        """The plugin class ``type_name`` runs as in this stack: the environment's
        mappings, provider templates, the registry. Heat's ResourceTypeNotFound (or the
        provider template's error, a KilnError) when there is none."""

    @property
    def software_deployments(self) -> SoftwareDeploymentStore: ...

    @property
    def alarms(self) -> AlarmStore: ...

    def resolve(self, node: Any) -> Any:
        """Resolve an unresolved template tree (functions) in this stack's template."""

    def stack_parameter(self, name: str) -> Any:
        """The value of the stack's parameter *name* (Heat's ``stack.parameters``);
        KeyError when the template declares none of that name."""

    def now(self) -> float:
        """Wall-clock seconds since the epoch; deadlines in tokens are in this clock."""

    def resource(self, name: str) -> Resource | None:
        """Another resource of the same stack, by its template name."""

    def resource_by_refid(self, refid: str) -> Resource | None:
        """The resource of this stack whose :meth:`Resource.reference_id` is *refid*."""

    def signal_url(self, resource_name: str, kind: SignalKind) -> str:
        """URL an agent uses to signal *resource_name*: the native API's
        ``.../resources/{name}/signal`` (``heat``), or the CFN API's pre-signed
        ``/v1/waitcondition/{arn}`` (``cfn_waitcondition``) / ``/v1/signal/{arn}``."""

    async def stack_user(self, resource_name: str, *, password: str | None = None,
                         keypair: bool = False) -> Mapping[str, Any]:
        """The identity servers use to reach Kiln on behalf of *resource_name* (Heat's
        stack-domain user), created on first use and removed with the stack: ``user_id``,
        ``project_id``, ``auth_url``, ``region_name``, ``signal_url`` (the native signal
        route under the user's project), in keystone mode ``username`` and ``domain_id``,
        and with ``keypair`` an EC2 ``access_key_id`` / ``secret_access_key`` plus the
        CFN ``metadata_url``; ``password`` is set as the user's password. Without an
        identity service the values are placeholders and ``auth_url`` is empty."""

    async def set_stack_user_enabled(self, resource_name: str, enabled: bool) -> None:
        """Disable (``enabled`` False) or enable the stack user of *resource_name*, if
        it has one: Heat's StackUser suspend and resume. With Keystone the user can then
        neither log in nor sign requests with its EC2 keypairs; without it, a no-op."""

    async def save_resource(self, resource_name: str, *,
                            event: tuple[str, str] | None = None) -> None:
        """Persist the data and metadata of *resource_name* now, outside an action of
        its own (a policy's signal resizing its group); the stack's outputs follow."""

    def notify_autoscaling(self, suffix: str, body: Mapping[str, Any]) -> None:
        """Heat's ``orchestration.autoscaling.<suffix>`` notification (``start``, ``end``,
        ``error``) about this stack, ``body`` (adjustment, capacity, groupname, message)
        added to the stack's; nothing when no notification driver is configured."""

    def signal_token(self, resource_name: str) -> str | None:
        """A token an agent may send with a signal to *resource_name* (Heat's stack-user
        token for TOKEN_SIGNAL); without an identity service, one Kiln issues and checks
        itself (:mod:`kiln.signal_tokens`), good for that resource only."""

    async def issue_ec2_keypair(self, resource_name: str, *,
                                user: str | None = None) -> Mapping[str, str]:
        """A new EC2 keypair for *resource_name* (``access_key``, ``secret_key``), of the
        stack user of *user* (another resource's, e.g. an AWS::IAM::User) or of the
        resource's own; in keystone mode a Keystone EC2 credential. Requests signed with
        it act in the stack's project, on this stack only. The plugin keeps the access
        key and revokes it (:meth:`delete_ec2_keypair`) when it goes; what is left goes
        with the stack. A replacement (same name) gets its own."""

    async def delete_ec2_keypair(self, access_key: str) -> None:
        """Revoke a keypair (and so the URLs signed with it); no error if it is gone."""

    def presigned_signal_url(self, resource_name: str, kind: SignalKind,
                             keypair: Mapping[str, str]) -> str:
        """:meth:`signal_url` of a CFN kind, pre-signed (SigV2) with *keypair*, as Heat's
        ``_get_ec2_signed_url``: ``cfn_waitcondition`` for a PUT, ``cfn_signal`` for a
        POST. Absolute; valid while the keypair exists."""
