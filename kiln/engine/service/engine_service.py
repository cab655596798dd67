"""EngineService: the one interface the APIs call (docs/contracts.md §5), a thin façade.

The signatures and their documentation are in :mod:`kiln.engine.service.interface`
(:class:`~kiln.engine.service.interface.EngineServiceAPI`, a ``typing.Protocol``). The
façade holds the service's parts as named attributes, one concern each, built here with
the shared :class:`~kiln.engine.service.shared.ServiceCore` and the other parts they
call, and exposes each Protocol method as the bound method of the part that implements
it. No part imports this module or calls back through it (an import-linter contract).
"""

from __future__ import annotations

from typing import Any

from kiln.engine.actions.identity import Identities
from kiln.engine.actions.software import SoftwareConfigs
from kiln.engine.model.delegation import Delegation
from kiln.engine.model.dispatch import Dispatch
from kiln.engine.model.live_stack import PluginLookup
from kiln.engine.model.settings import EngineConf
from kiln.engine.runtime.engine import Engine
from kiln.engine.runtime.plugin_loader import find_plugin
from kiln.engine.service.adopt import AdoptOps
from kiln.engine.service.agent_reads import AgentReads
from kiln.engine.service.catalog import CatalogOps
from kiln.engine.service.changeset_review import ReviewOps
from kiln.engine.service.changesets import ChangeSetOps
from kiln.engine.service.drift import DriftOps
from kiln.engine.service.forwarding import ForwardingOps
from kiln.engine.service.history import HistoryOps
from kiln.engine.service.interface import EngineServiceAPI
from kiln.engine.service.keypairs import KeypairOps
from kiln.engine.service.lifecycle import LifecycleOps
from kiln.engine.service.reads import Reads
from kiln.engine.service.recovery import Recovery, RecoveryOps
from kiln.engine.service.shared import ServiceCore
from kiln.engine.service.signals import SignalOps
from kiln.engine.service.snapshots import SnapshotOps
from kiln.engine.service.software import SoftwareOps
from kiln.engine.service.stack_changes import StackOps
from kiln.engine.service.stack_users import StackUserOps
from kiln.engine.service.tempurls import TempUrlOps
from kiln.engine.service.unheld import UnheldOps
from kiln.engine.store import Database, Store
from kiln.notifications import NULL, Notifier


class EngineService:
    """The engine behind the API: construct, ``await start()``, call, ``await stop()``.

    ``EngineService(conf=None, *, db=None, db_url=None, engine_id=None)``: ``db`` is an
    open :class:`kiln.db.facade.Database`; otherwise one is opened on ``db_url`` (default
    ``[database] connection`` or the SQLite file under ``state_path``).
    """

    def __init__(self, conf: EngineConf | None = None, *, db: Database | None = None,
                 db_url: str | None = None, engine_id: str | None = None,
                 plugins: PluginLookup = find_plugin,
                 delegation: Delegation | None = None,
                 notifier: Notifier = NULL) -> None:
        core = self.core = ServiceCore(conf, db=db, db_url=db_url, engine_id=engine_id,
                                       plugins=plugins, delegation=delegation,
                                       notifier=notifier)
        # -- the parts, each built with what it calls (an order without cycles) ----------
        forwarding = ForwardingOps(core)
        self.history = HistoryOps(core)
        self.stacks = StackOps(core, forwarding, UnheldOps(core, forwarding), self.history)
        self.adopt = AdoptOps(core, forwarding, self.stacks)
        self.changesets = ChangeSetOps(core, self.stacks, self.history)
        self.review = ReviewOps(core, self.changesets, self.history)
        self.lifecycle = LifecycleOps(core)
        self.reads = Reads(core)
        self.keypairs = KeypairOps(core)
        self.agent_reads = AgentReads(core, self.reads, self.keypairs)
        self.snapshots = SnapshotOps(core, forwarding, self.history)
        self.signals = SignalOps(core, self.stacks.unheld)
        self.stack_users = StackUserOps(core)
        self.catalog = CatalogOps(core)
        self.software_configs = SoftwareOps(core)
        self.tempurls = TempUrlOps(core)
        self.engines = RecoveryOps(core)
        self.drift = DriftOps(core, self.engines, forwarding)
        # -- the Protocol's methods: the parts' own, bound ---------------------------------
        self.wait_for_stack = self.stacks.wait_for_stack
        self.identify_stack = self.stacks.identify_stack
        self.preview_stack = self.stacks.preview_stack
        self.update_stack = self.stacks.update_stack
        self.preview_update_stack = self.stacks.preview_update_stack
        self.delete_stack = self.stacks.delete_stack
        self.stack_cancel_update = self.stacks.stack_cancel_update

        self.create_stack = self.adopt.create_stack
        self.abandon_stack = self.adopt.abandon_stack
        self.export_stack = self.adopt.export_stack

        self.list_stacks = self.reads.list_stacks
        self.count_stacks = self.reads.count_stacks
        self.show_stack = self.reads.show_stack
        self.stacks_generation = self.reads.stacks_generation
        self.get_template = self.reads.get_template
        self.get_environment = self.reads.get_environment
        self.get_files = self.reads.get_files
        self.list_outputs = self.reads.list_outputs
        self.show_output = self.reads.show_output
        self.list_stack_resources = self.reads.list_stack_resources
        self.describe_stack_resource = self.reads.describe_stack_resource
        self.describe_stack_resources = self.reads.describe_stack_resources
        self.list_events = self.reads.list_events
        self.show_event = self.reads.show_event

        self.resource_for_agent = self.agent_reads.resource_for_agent

        self.stack_suspend = self.lifecycle.stack_suspend
        self.stack_resume = self.lifecycle.stack_resume
        self.stack_check = self.lifecycle.stack_check
        self.resource_mark_unhealthy = self.lifecycle.resource_mark_unhealthy

        self.stack_snapshot = self.snapshots.stack_snapshot
        self.show_snapshot = self.snapshots.show_snapshot
        self.delete_snapshot = self.snapshots.delete_snapshot
        self.list_snapshots = self.snapshots.list_snapshots
        self.stack_restore = self.snapshots.stack_restore

        self.resource_signal = self.signals.resource_signal
        self.resource_note = self.signals.resource_note

        self.find_ec2_keypair = self.keypairs.find_ec2_keypair
        self.ec2_keypair_revocations = self.keypairs.ec2_keypair_revocations
        self.issue_ec2_keypair = self.keypairs.issue_ec2_keypair
        self.resource_ec2_keypair = self.keypairs.resource_ec2_keypair
        self.delete_ec2_keypair = self.keypairs.delete_ec2_keypair
        self.ec2_access_allowed = self.keypairs.ec2_access_allowed

        self.stack_user_project = self.stack_users.stack_user_project
        self.stack_domain_user = self.stack_users.stack_domain_user
        self.stack_user_keypair = self.stack_users.stack_user_keypair
        self.set_stack_user_enabled = self.stack_users.set_stack_user_enabled
        self.revoke_ec2_keypair = self.stack_users.revoke_ec2_keypair
        self.remove_stack_users = self.stack_users.remove_stack_users

        self.validate_template = self.catalog.validate_template
        self.list_template_versions = self.catalog.list_template_versions
        self.list_template_functions = self.catalog.list_template_functions
        self.list_resource_types = self.catalog.list_resource_types
        self.resource_schema = self.catalog.resource_schema
        self.generate_template = self.catalog.generate_template
        self.find_physical_resource = self.catalog.find_physical_resource

        self.create_software_config = self.software_configs.create_software_config
        self.show_software_config = self.software_configs.show_software_config
        self.list_software_configs = self.software_configs.list_software_configs
        self.delete_software_config = self.software_configs.delete_software_config
        self.create_software_deployment = self.software_configs.create_software_deployment
        self.show_software_deployment = self.software_configs.show_software_deployment
        self.list_software_deployments = self.software_configs.list_software_deployments
        self.update_software_deployment = self.software_configs.update_software_deployment
        self.delete_software_deployment = self.software_configs.delete_software_deployment
        self.get_software_deployment_metadata = (
            self.software_configs.get_software_deployment_metadata)
        self.signal_software_deployment = self.software_configs.signal_software_deployment

        self.temp_url_resource = self.tempurls.temp_url_resource

        self.detect_stack_drift = self.drift.detect_stack_drift
        self.detect_resource_drift = self.drift.detect_resource_drift
        self.drift_detection = self.drift.drift_detection
        self.latest_drift = self.drift.latest_drift
        self.stacks_drift_status = self.drift.stacks_drift_status
        self.resources_drift_status = self.drift.resources_drift_status

        self.list_services = self.engines.list_services

        self.create_change_set = self.changesets.create_change_set
        self.describe_change_set = self.changesets.describe_change_set
        self.list_change_sets = self.changesets.list_change_sets
        self.execute_change_set = self.changesets.execute_change_set
        self.delete_change_set = self.changesets.delete_change_set
        self.review_stack = self.review.review_stack
        self.review_stacks = self.review.review_stacks
        self.delete_review_stack = self.review.delete_review_stack
        self.restore_version_change_set = self.review.restore_version_change_set

        self.list_stack_versions = self.history.list_stack_versions
        self.show_stack_version = self.history.show_stack_version
        self.diff_stack_versions = self.history.diff_stack_versions

    async def start(self) -> None:
        """The core (database, Engine), then this engine's recovery."""
        await self.core.start()
        await self.engines.start()

    async def stop(self) -> None:
        """The reverse of :meth:`start`."""
        await self.engines.stop()
        await self.core.stop()

    # -- the core's state, for the process wiring (kiln.server, kiln.rpc) and tests ------
    @property
    def dispatch(self) -> Dispatch | None:
        """How this process reaches the other engines (kiln.rpc), set before
        :meth:`start` by the process wiring; None: ``kiln serve``'s all-in-one."""
        return self.core.dispatch

    @dispatch.setter
    def dispatch(self, value: Dispatch | None) -> None:
        self.core.dispatch = value

    @property
    def conf(self) -> EngineConf:
        return self.core.conf

    @property
    def engine(self) -> Engine:
        return self.core.engine

    @property
    def store(self) -> Store:
        return self.core.store

    @property
    def identities(self) -> Identities:
        return self.core.identities

    @property
    def software(self) -> SoftwareConfigs:
        return self.core.software

    @property
    def stack_user_admin(self) -> Any:
        return self.core.stack_user_admin

    @property
    def recovery(self) -> Recovery | None:
        """This engine's :class:`Recovery` while started (kiln.rpc takes stacks with it)."""
        return self.engines.recovery


def _implements(service: EngineService) -> EngineServiceAPI:
    """mypy's check that the façade offers every method of the Protocol, each with the
    Protocol's signature (no code runs this)."""
    return service
