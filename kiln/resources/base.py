"""The plugin contract: what a resource type declares and the lifecycle hooks it implements.

This module is deliberately small. A plugin is *definition* (the class-level schemas, see
:mod:`kiln.resources.schema`) plus *execution* (the async ``handle_*`` /
``check_*_complete`` pairs). Persistence, locking, events and scheduling are the engine's;
talking to outside systems goes through adapters on the :class:`ResourceRuntime`.

Two-step lifecycle: ``handle_<action>()`` starts the work and returns a JSON-able token;
the engine persists the token, then calls ``check_<action>_complete(token)`` until it
returns True. Because the token (plus :attr:`Resource.resource_id` and
:attr:`Resource.data`) is everything a plugin may rely on between the two calls, any
engine can resume an action after a crash. :meth:`Resource.poll_delay` lets a plugin that
knows when it will be done (a timer, a deadline) tell the scheduler how long to sleep
instead of being polled.
"""

from __future__ import annotations

import base64
import functools
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from kiln.errors import (
    InvalidTemplateAttribute,
    KilnError,
    NotSupported,
    ResourceActionNotSupported,
    StackValidationFailed,
    format_path,
)
from kiln.resources import translation
from kiln.resources.live_state import NOT_CHECKED, LiveState, Unread
from kiln.resources.runtime import (
    Peers,
    ResourceRuntime,
    SignalKind,
    SoftwareConfigStore,
    SoftwareDeploymentStore,
)
from kiln.resources.schema import (
    SHOW_ATTRIBUTE,
    Attribute,
    Properties,
    Property,
    SupportStatus,
    changed_from_stored,
    property_error,
)
from kiln.template.definitions import ResourceDefinition

__all__ = [
    "ACTIONS",
    "Attribute",
    "Peers",
    "Properties",
    "Property",
    "Resource",
    "ResourceFailure",
    "ResourceRuntime",
    "ResourceState",
    "SignalKind",
    "SoftwareConfigStore",
    "SoftwareDeploymentStore",
    "SupportStatus",
    "Token",
    "UpdateReplace",
    "select_path",
]

#: Whatever handle_* returns; must survive ``json.dumps``/``json.loads`` unchanged. A
#: token is never changed in place: a check that moves the action on hands the engine a
#: new one (:meth:`Resource.checkpoint`), which the engine persists.
Token = Any

ACTIONS = ("CREATE", "UPDATE", "DELETE", "SUSPEND", "RESUME", "CHECK", "SNAPSHOT",
           "RESTORE", "ADOPT")

class ResourceFailure(KilnError):
    """A resource action failed; the engine marks the resource ``<ACTION>_FAILED``.

    ``exc_type`` is the name Heat shows before the message in the status reason
    (``"WaitConditionTimeout: resources.wc: 0 of 1 received"``).
    """

    def __init__(self, message: str, *, exc_type: str = "Error") -> None:
        super().__init__(message)
        self.exc_type = exc_type

    def status_reason(self, resource_name: str) -> str:
        """Heat's status reason for this failure of resource *resource_name*."""
        return f"{self.exc_type}: {format_path(('resources', resource_name))}: {self.message}"


class UpdateReplace(Exception):
    """Raised by ``handle_update`` when only then does a plugin learn that the change
    needs a new physical resource (a deployment input marked replace_on_change changed).
    Nothing has been changed yet; the engine ends the update COMPLETE with
    ``status_reason`` (None: Heat's "The Resource <type> "<name>" [...] Stack ...
    requires replacement.") and replaces the resource instead."""

    def __init__(self, message: str = "", *, status_reason: str | None = None) -> None:
        super().__init__(message)
        self.status_reason = status_reason


@dataclass(slots=True)
class ResourceState:
    """What the engine persists for one resource and hands back on the next action."""

    resource_id: str | None = None
    #: plugin-private key/value data (Heat's resource_data); strings only.
    data: dict[str, str] = field(default_factory=dict)
    #: the resource's metadata as the API and agents see it (Heat's rsrc_metadata).
    metadata: dict[str, Any] = field(default_factory=dict)
    action: str = "INIT"
    status: str = "COMPLETE"
    status_reason: str = ""
    #: the resolved property values the last completed action was run with; delete,
    #: suspend etc. use them so a resource can be acted on without its template.
    properties_data: dict[str, Any] | None = None
    #: the signals the resource keeps, by signal id in the order they came: shown in
    #: its metadata as Heat shows them, but each stored as a row of its own
    #: (:mod:`kiln.db.signals`), so a signal writes only what it adds
    signals: dict[str, Any] = field(default_factory=dict)
    #: each kept signal's size in bytes (its JSON), to check the bounds cheaply
    signal_sizes: dict[str, int] = field(default_factory=dict)
    #: signal ids kept since the last save, each True when it was not stored before
    unsaved_signals: dict[str, bool] = field(default_factory=dict)

    def shown_metadata(self) -> dict[str, Any]:
        """The metadata as the API shows it: the stored document plus the signals."""
        if not self.signals:
            return dict(self.metadata)
        return {**self.metadata, **self.signals}


class Resource:
    """Base of every resource plugin.

    Subclasses declare ``type_name``, ``properties_schema``, ``attributes_schema`` and
    ``support_status``, and override the lifecycle hooks they need. The defaults make a
    resource that exists only in Kiln's database (like OS::Heat::None).
    """

    type_name: ClassVar[str] = ""
    properties_schema: ClassVar[Mapping[str, Property]] = {}
    attributes_schema: ClassVar[Mapping[str, Attribute]] = {}
    support_status: ClassVar[SupportStatus] = SupportStatus()
    #: shown by ``resource_types?with_description=true``
    description: ClassVar[str] = ""
    #: the OpenStack service the type needs (Heat's ``default_client_name``: nova,
    #: neutron, ...); empty for types that need no cloud. A type whose service is not in
    #: the catalog is left out of the listing and refused, as in Heat
    client_name: ClassVar[str] = ""
    #: False for the types registered only so that a template naming them gets Heat's
    #: "service not available" answer (their service is one Kiln does not drive); they
    #: never replace a type another plugin registered
    implemented: ClassVar[bool] = True
    # -- options the engine reads (declared here so a misspelt one is a type error) ----
    #: on replacement, create the new physical resource before deleting the old one
    #: (Heat's order); a plugin whose old and new cannot coexist sets this False
    replace_create_first: ClassVar[bool] = True
    #: every update replaces the resource before trying any update of it, so the old
    #: resource records no UPDATE (Heat's UpdateWaitConditionHandle, whose _needs_update
    #: raises UpdateReplace before the update's action recorder starts)
    replaced_on_every_update: ClassVar[bool] = False
    #: a FAILED resource is replaced by the next update (Heat's default); False lets the
    #: update run in place on it
    needs_replace_failed: ClassVar[bool] = True
    #: the definition is validated and its properties resolved at create (False for
    #: OS::Heat::None, whose properties are anything at all)
    validates_definition: ClassVar[bool] = True
    #: the resource may make authenticated calls later, with no request of the owner's
    #: behind them (a child stack, a signal's work): Heat's ``requires_deferred_auth``.
    #: With ``deferred_auth_method = password`` a stack holding one needs the caller's
    #: X-Auth-User and X-Auth-Key
    requires_deferred_auth: ClassVar[bool] = False
    #: the resource is a child stack run by this engine: it does not count against the
    #: engine's concurrency limit while it waits for its own resources
    is_nested_stack: ClassVar[bool] = False
    #: the child stack is not counted as a nested level of its parent (OS::Heat::Stack
    #: with a remote ``context``)
    detached_child: ClassVar[bool] = False
    #: attributes read afresh whenever they are asked for (Heat's uncached attributes,
    #: such as a volume's ``status``): an output naming one is re-resolved on each read
    #: of the stack, after :meth:`refresh_live`
    live_attributes: ClassVar[frozenset[str]] = frozenset()
    #: keys of :attr:`data` that are secrets (a generated password): stored encrypted
    #: with ``auth_encryption_key``, as Heat stores redacted resource data
    secret_data: ClassVar[frozenset[str]] = frozenset()
    #: actions during which a signal is refused (Heat's ``no_signal_actions``); a
    #: deployment that runs on DELETE or SUSPEND waits for its signal then
    no_signal_actions: ClassVar[tuple[str, ...]] = ("SUSPEND", "DELETE")
    #: an asynchronous signal (the native API's, the CFN ``/v1/signal``) is answered once
    #: it is accepted and ``handle_signal`` runs afterwards in a task of the engine, as
    #: Heat runs it in a thread (a scaling policy's resize); False: answered when done
    signals_in_background: ClassVar[bool] = False
    #: the ``update_policy`` keys the resource accepts (ResourceGroup's batching)
    update_policy_schema: ClassVar[Mapping[str, Property]] = {}
    #: True when ``handle_*`` touches nothing outside this resource's own row (no cloud
    #: call, no child stack, no other table): the engine may then run it before the
    #: IN_PROGRESS state is committed, since a crash in between only repeats harmless work.
    #: Anything else is started only once its IN_PROGRESS state is durable, so recovery
    #: never starts it twice without knowing.
    side_effect_free: ClassVar[bool] = False
    #: the properties Heat's own ``validate()`` of this type reads, in its order. Inside
    #: a nested stack at create Heat checks names, not values, but such a read still
    #: converts the value to its type, and one that cannot be converted fails the
    #: create with Heat's ``ValueError`` (a group member's RandomString ``length: x``)
    validate_reads: ClassVar[tuple[str, ...]] = ()
    #: Heat's translation rules of the type (deprecated names to their replacements),
    #: applied to the resolved values before validation (kiln.resources.translation)
    translation_rules: ClassVar[tuple[translation.Rule, ...]] = ()

    def __init__(self, name: str, definition: ResourceDefinition, runtime: ResourceRuntime,
                 state: ResourceState | None = None) -> None:
        self.name = name
        self.definition = definition
        self.runtime = runtime
        self.state = state if state is not None else ResourceState()
        self._properties: Properties | None = None

    # -- definition -------------------------------------------------------------------
    @classmethod
    def make_properties(cls, resource_name: str, resolved: Any) -> Properties:
        """Validate resolved property values; errors carry Heat's ``Property error`` text."""
        try:
            return Properties(cls.properties_schema,
                              translation.translate(cls.translation_rules, resolved))
        except StackValidationFailed as exc:
            raise property_error(exc, resource_name) from None

    @property
    def properties(self) -> Properties:
        """The current definition's properties, resolved once then kept."""
        if self._properties is None:
            self._properties = self.make_properties(
                self.name, self.runtime.resolve(self.definition.properties))
        return self._properties

    @properties.setter
    def properties(self, value: Properties) -> None:
        self._properties = value

    def validate(self) -> None:
        """Check the properties (schema first); plugins extend with their own rules and
        call ``super().validate()``. Raises StackValidationFailed."""
        _ = self.properties

    async def validate_external(self, values: Mapping[str, Any],
                                cache: dict[Any, Any]) -> None:
        """Checks that need an outside system (Heat's custom constraints that look an
        object up in the cloud), run at create before the stack is stored. *values* are
        the property values that wait for no resource; *cache* is shared by every
        resource of the request. Raise StackValidationFailed (a 400)."""

    async def validate_external_id(self, external_id: str) -> None:
        """For a resource with ``external_id``, checked at create instead of its
        properties (Heat's validate_external): the object must exist. Raise
        StackValidationFailed (a 400); the default has nothing to look up."""

    @classmethod
    def validate_deletion_policy(cls, policy: str) -> None:
        """Heat's checks: a known policy, and Snapshot only for plugins that implement
        ``handle_snapshot_delete``. The error path is relative to the resource."""
        if policy not in ("Delete", "Retain", "Snapshot"):
            raise StackValidationFailed(f'Invalid deletion policy "{policy}"',
                                        path=("deletion_policy",))
        if policy == "Snapshot" and not cls.supports("snapshot_delete"):
            raise StackValidationFailed(f'"{policy}" deletion policy not supported',
                                        path=("deletion_policy",))

    @classmethod
    def supports(cls, action: str) -> bool:
        """Whether the plugin implements *action* itself (Heat reports CHECK as
        "not supported" for plugins that do not)."""
        handlers = {
            "check": (cls.handle_check, Resource.handle_check),
            "snapshot": (cls.handle_snapshot, Resource.handle_snapshot),
            "restore": (cls.handle_restore, Resource.handle_restore),
            "snapshot_delete": (cls.handle_snapshot_delete, Resource.handle_snapshot_delete),
            "delete_snapshot": (cls.handle_delete_snapshot, Resource.handle_delete_snapshot),
        }
        own, base = handlers.get(action.lower(), (None, None))
        return own is not base

    # -- persisted state ----------------------------------------------------------------
    @property
    def resource_id(self) -> str | None:
        return self.state.resource_id

    @resource_id.setter
    def resource_id(self, value: str | None) -> None:
        self.state.resource_id = value

    @property
    def data(self) -> dict[str, str]:
        return self.state.data

    @property
    def metadata(self) -> dict[str, Any]:
        return self.state.metadata

    @metadata.setter
    def metadata(self, value: dict[str, Any]) -> None:
        self.state.metadata = value

    def physical_resource_name(self) -> str:
        """Heat's naming of physical things: ``<stack>-<resource>-<12 random chars>``."""
        return f"{self.runtime.stack_name}-{self.name}-{short_id()}"

    # -- lifecycle (override what applies) -----------------------------------------------
    async def handle_create(self) -> Token:
        return None

    async def check_create_complete(self, token: Token) -> bool:
        return True

    async def handle_update(self, new_definition: ResourceDefinition,
                            new_properties: Properties, prop_diff: Mapping[str, Any]) -> Token:
        """Apply an in-place update; afterwards the engine adopts the new definition."""
        return None

    async def check_update_complete(self, token: Token) -> bool:
        return True

    async def handle_delete(self) -> Token:
        return None

    async def check_delete_complete(self, token: Token) -> bool:
        return True

    async def handle_suspend(self) -> Token:
        return None

    async def check_suspend_complete(self, token: Token) -> bool:
        return True

    async def handle_resume(self) -> Token:
        return None

    async def check_resume_complete(self, token: Token) -> bool:
        return True

    async def handle_check(self) -> Token:
        return None

    async def check_check_complete(self, token: Token) -> bool:
        return True

    async def handle_snapshot(self) -> Token:
        return None

    async def check_snapshot_complete(self, token: Token) -> bool:
        return True

    async def handle_restore(self, snapshot_data: Mapping[str, Any]) -> Token:
        return None

    async def replaces_when_failed(self) -> bool:
        """Whether the next update replaces this FAILED resource (Heat's
        needs_replace_failed): :attr:`needs_replace_failed`, unless the plugin looks at
        its object (one in an error state, or gone, is replaced; one a failed snapshot
        or update left usable is updated in place)."""
        return self.needs_replace_failed

    async def handle_snapshot_delete(self, state: tuple[str, str]) -> Token:
        """Keep a snapshot before the resource is deleted (``deletion_policy: Snapshot``;
        *state* is the resource's action and status before the delete); the delete's
        ``check_delete_complete`` then polls the token. Only plugins that override it
        accept that policy (:meth:`supports`)."""
        return None

    async def handle_delete_snapshot(self, snapshot: Mapping[str, Any]) -> None:
        """A stack snapshot is deleted: remove what ``handle_snapshot`` made for it
        (*snapshot* is this resource's entry in the snapshot's data)."""

    async def check_restore_complete(self, token: Token) -> bool:
        return True

    async def handle_abandon(self) -> dict[str, Any]:
        """Extra data for the abandon body (Heat's ``resource_data``)."""
        return dict(self.data)

    async def handle_adopt(self, resource_data: Mapping[str, Any]) -> Token:
        """Take over an existing physical resource from an abandoned stack's data."""
        self.resource_id = resource_data.get("resource_id")
        extra = resource_data.get("resource_data") or {}
        self.data.update({str(k): str(v) for k, v in extra.items()})
        return None

    async def check_adopt_complete(self, token: Token) -> bool:
        return True

    async def handle_signal(self, details: Any) -> str | None:
        """Take a signal; the returned text (if any) becomes the event's reason after
        ``"Signal: "``. Raise ResourceFailure/ValueError-derived KilnError to refuse it."""
        raise ResourceActionNotSupported("signal is not supported for resource.")

    def poll_delay(self, token: Token) -> float | None:
        """Seconds the scheduler should wait before the next check, if the plugin knows."""
        return None

    # -- resumable tokens ----------------------------------------------------------------
    #: the token a check handed on and the engine has not yet taken (a 1-tuple: None
    #: is a valid token)
    _checkpoint: tuple[Token] | None = None

    def checkpoint(self, token: Token) -> None:
        """Move the running action on to *token*, from inside ``check_<action>_complete``.

        A multi-step action (resize, then confirm) calls this with a new token each time
        it sends a request; the engine persists the token before the next check and
        hands that check the new one. An engine that resumes the action after a crash
        therefore starts from the last step sent, not from the token ``handle_<action>``
        returned. The token a check was given is never changed in place: the engine
        persisted it as it was, and a change to it would be lost with the process."""
        self._checkpoint = (token,)

    def next_token(self, token: dict[str, Any], **changes: Any) -> dict[str, Any]:
        """*token* with *changes*, handed on (:meth:`checkpoint`) when anything changed;
        *token* itself stays as it is."""
        if all(key in token and token[key] == value for key, value in changes.items()):
            return token
        moved = {**token, **changes}
        self.checkpoint(moved)
        return moved

    def take_checkpoint(self) -> tuple[Token] | None:
        """The token the last check handed on (:meth:`checkpoint`), once; the engine's
        side of the hand-over."""
        moved, self._checkpoint = self._checkpoint, None
        return moved

    async def handle_cancel(self, action: str, token: Token) -> None:
        """Heat's ``handle_<action>_cancel``: the action was interrupted (stack timeout or
        a user's cancel) while its checks were waiting, so whatever the plugin started
        outside Kiln's resource row (a deployment still IN_PROGRESS) can be settled. Only
        called once ``handle_<action>`` has returned ``token``, as in Heat."""
        return None

    # -- update planning ---------------------------------------------------------------
    def diff_properties(self, old: Properties, new: Properties) -> dict[str, Any]:
        """Changed properties (new values), after refusing changes to immutable ones."""
        stored = old.unvalidated()
        changed = (None if stored is None
                   else changed_from_stored(new.schema, stored, new))
        if changed is None:
            changed = {k: new[k] for k in new if old.get(k) != new.get(k)}
        frozen = sorted(k for k in changed if self.properties_schema[k].immutable)
        if frozen:
            raise NotSupported(
                f"Update to properties {', '.join(frozen)} of {self.name} "
                f"({self.type_name}) is not supported.")
        return changed

    def needs_update(self, new_definition: ResourceDefinition,
                     prop_diff: Mapping[str, Any]) -> bool:
        """Whether a stack update must act on this resource at all (Heat: the definition
        changed). OS::Heat::None says never; UpdateWaitConditionHandle says always."""
        return bool(prop_diff) or new_definition.freeze() != self.definition.freeze()

    def updated_metadata(self, template_metadata: dict[str, Any]) -> dict[str, Any]:
        """The metadata to keep after an in-place update whose template gives
        ``template_metadata``: the template's, unless the plugin keeps keys of its own
        (a server keeps its ``deployments`` and agent settings, as in Heat)."""
        return template_metadata

    def needs_replace(self, prop_diff: Mapping[str, Any]) -> bool:
        """Whether applying *prop_diff* needs a new physical resource."""
        return any(not self.properties_schema[k].update_allowed for k in prop_diff)

    # -- dependencies ------------------------------------------------------------------
    def implicit_requirements(self, peers: Peers) -> Iterable[str]:
        """Names of resources of the same stack this one must wait for although none of
        its properties refers to them (Heat's ``add_dependencies``: a port waits for the
        subnets of its network, because Neutron gives it an address from one of them).
        Asked each time the engine builds the stack's graph; a delete then goes the
        other way round."""
        return ()

    async def live_state(self, expected: Mapping[str, Any]) -> LiveState | Unread:
        """Drift detection: the physical object read back (never changed), for the
        *expected* properties (the template's values of those it set), as a
        :class:`~kiln.resources.live_state.LiveState`; ``GONE`` when it no longer
        exists; ``NOT_CHECKED`` (the default) for a type nothing outside Kiln can change
        or that cannot be read back. Raise ResourceFailure when the read fails."""
        return NOT_CHECKED

    async def refresh_live(self) -> None:
        """Re-read the physical resource before its attributes are shown (resource
        show), for plugins whose attributes come from an outside system; Heat reads
        them live there. Failures are the plugin's to swallow: a show never fails."""

    def access_allowed(self, resource_name: str) -> bool:
        """Whether the EC2 keypair issued to this resource may describe *resource_name*
        through the CFN API (Heat's ``access_allowed``): by default only itself; an
        AWS::IAM::AccessKey as its user's access policies say."""
        return resource_name == self.name

    # -- references and attributes ----------------------------------------------------
    def reference_id(self) -> str | None:
        """What get_resource / Ref return (None where Heat's is: a RandomString adopted
        from an external id has no value)."""
        return self.resource_id if self.resource_id is not None else self.name

    @classmethod
    def attribute_names(cls) -> list[str]:
        return [*cls.attributes_schema, "show"]

    def get_attribute(self, name: str, *path: Any) -> Any:
        """An attribute value, walked down *path*; unknown names are template errors."""
        if name == "show":
            value = self.show()
        elif name in self.attributes_schema:
            value = self.resolve_attribute(name)
        else:
            raise InvalidTemplateAttribute(
                f"The Referenced Attribute ({self.name} {name}) is incorrect.")
        return select_path(value, path)

    def all_attributes(self) -> dict[str, Any]:
        """``get_attr: [name]`` with no attribute: every declared attribute but ``show``."""
        return {name: self.resolve_attribute(name) for name in self.attributes_schema}

    def resolve_attribute(self, name: str) -> Any:
        """The plugin's value for declared attribute *name* (None if not yet known)."""
        return None

    def show(self) -> Any:
        """The ``show`` attribute: the physical resource's details, if it has any."""
        return None

    @classmethod
    def full_attributes_schema(cls) -> dict[str, Attribute]:
        return {**cls.attributes_schema, "show": SHOW_ATTRIBUTE}


def short_id() -> str:
    """12 lower-case base32 characters, the shape of Heat's short ids."""
    return base64.b32encode(secrets.token_bytes(8)).decode("ascii")[:12].lower()


def select_path(value: Any, path: Sequence[Any]) -> Any:
    """Walk *path* into nested maps/lists; a missing step gives None, as in Heat."""

    def step(collection: Any, key: Any) -> Any:
        if isinstance(collection, Mapping):
            return collection[key]
        if isinstance(collection, Sequence) and not isinstance(collection, str):
            return collection[int(key)] if isinstance(key, int) else collection[key]
        raise TypeError("Can't traverse attribute path")

    try:
        return functools.reduce(step, path, value)
    except (KeyError, IndexError, TypeError, ValueError):
        return None
