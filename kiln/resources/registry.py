"""Which class implements each resource type, and where those classes come from.

Three sources, loaded in this order so an operator can override a built-in: Kiln's own
plugins, modules found in ``CONF.plugin_dirs``, and Python entry points in the group
``kiln.resources``. A plugin module either defines ``resource_mapping()`` returning
``{type_name: class}`` (the convention Heat plugins already follow) or simply defines
:class:`~kiln.resources.base.Resource` subclasses with a ``type_name``. An entry point may
name a module or a single class.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import logging
import pkgutil
import re
import sys
from collections.abc import Callable, Iterable
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import Any

from kiln.errors import (
    EntityNotFound,
    InvalidInput,
    NotSupported,
    ResourceTypeNotFound,
    ResourceTypeUnavailable,
    did_you_mean,
)
from kiln.resources import typedocs
from kiln.resources.base import Resource
from kiln.resources.schema import SUPPORT_STATUSES

LOG = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "kiln.resources"

#: packages whose modules hold Kiln's built-in plugins
BUILTIN_PACKAGES = ("kiln.resources.aws", "kiln.resources.heat", "kiln.resources.openstack")

#: Heat lists types in the order its plugin modules load; listings follow that order
#: for the types Heat has, then everything else in registration order.
HEAT_ORDER = (
    "AWS::AutoScaling::AutoScalingGroup", "AWS::AutoScaling::LaunchConfiguration",
    "AWS::AutoScaling::ScalingPolicy", "AWS::CloudFormation::Stack",
    "AWS::CloudFormation::WaitCondition", "AWS::CloudFormation::WaitConditionHandle",
    "AWS::EC2::InternetGateway", "AWS::EC2::SecurityGroup", "AWS::IAM::User",
    "AWS::IAM::AccessKey", "AWS::ElasticLoadBalancing::LoadBalancer",
    "OS::Heat::AccessPolicy", "OS::Heat::AutoScalingGroup", "OS::Heat::CloudConfig",
    "OS::Heat::Delay", "OS::Heat::DeployedServer", "OS::Heat::InstanceGroup",
    "OS::Heat::MultipartMime", "OS::Heat::None", "OS::Heat::RandomString",
    "OS::Heat::Stack", "OS::Heat::ResourceChain", "OS::Heat::ResourceGroup",
    "OS::Heat::ScalingPolicy", "OS::Heat::SoftwareComponent", "OS::Heat::SoftwareConfig",
    "OS::Heat::SoftwareDeployment", "OS::Heat::SoftwareDeploymentGroup",
    "OS::Heat::StructuredConfig", "OS::Heat::StructuredDeployment",
    "OS::Heat::StructuredDeploymentGroup", "OS::Heat::TestResource", "OS::Heat::Value",
    "OS::Heat::WaitCondition", "OS::Heat::WaitConditionHandle",
    "OS::Heat::UpdateWaitConditionHandle",
)
_HEAT_RANK = {name: i for i, name in enumerate(HEAT_ORDER)}


class InvalidFilter(InvalidInput):
    """A listing filter Heat rejects (its ``Invalid`` error)."""

    heat_type = "Invalid"


def plugins_in_module(module: ModuleType) -> dict[str, type[Resource]]:
    """The resource types a plugin module offers."""
    mapping = getattr(module, "resource_mapping", None)
    if callable(mapping):
        found = dict(mapping())
    else:
        found = {
            obj.type_name: obj
            for obj in vars(module).values()
            if inspect.isclass(obj) and issubclass(obj, Resource) and obj is not Resource
            and obj.__module__ == module.__name__ and obj.type_name
        }
    for name, cls in found.items():
        if not (inspect.isclass(cls) and issubclass(cls, Resource)):
            raise TypeError(f"{module.__name__}: {name} is not a Resource subclass")
    return found


class Registry:
    """Type name -> plugin class, plus the ``resource_types`` API bodies."""

    def __init__(self) -> None:
        self._types: dict[str, type[Resource]] = {}

    # -- loading --------------------------------------------------------------------
    def register(self, type_name: str, cls: type[Resource]) -> None:
        """Add or replace a type (a later source overrides an earlier one, except that a
        placeholder for an undriven service never replaces a real plugin)."""
        if not cls.implemented and type_name in self._types:
            return
        self._types[type_name] = cls

    def register_module(self, module: ModuleType) -> None:
        for name, cls in plugins_in_module(module).items():
            self.register(name, cls)

    def load_builtins(self) -> None:
        for package_name in BUILTIN_PACKAGES:
            try:
                package = importlib.import_module(package_name)
            except ModuleNotFoundError as exc:
                if exc.name == package_name:
                    continue
                raise
            for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
                if info.ispkg or info.name.startswith("_"):
                    continue
                self.register_module(importlib.import_module(f"{package_name}.{info.name}"))

    def load_plugin_dirs(self, dirs: Iterable[str]) -> None:
        """Import every ``*.py`` under each directory (sorted, recursively) as a plugin."""
        for directory in dirs:
            root = Path(directory).expanduser()
            if not root.is_dir():
                LOG.warning("plugin_dirs: %s is not a directory", root)
                continue
            for path in sorted(root.rglob("*.py")):
                if path.name.startswith("_"):
                    continue
                self.register_module(_import_path(path, root))

    def load_entry_points(self, group: str = ENTRY_POINT_GROUP) -> None:
        for ep in entry_points(group=group):
            loaded = ep.load()
            if isinstance(loaded, ModuleType):
                self.register_module(loaded)
            elif inspect.isclass(loaded) and issubclass(loaded, Resource):
                self.register(loaded.type_name or ep.name, loaded)
            else:
                raise TypeError(f"entry point {ep.name!r} is neither a module nor a Resource")

    # -- lookup -----------------------------------------------------------------------
    def get(self, type_name: str) -> type[Resource]:
        """The class for a type used in a template (unknown: Heat's 400 error)."""
        try:
            return self._types[type_name]
        except KeyError:
            visible = [name for name, cls in self._types.items()
                       if cls.support_status.status != "HIDDEN"]
            raise ResourceTypeNotFound(
                f"The Resource Type ({type_name}) could not be found.",
                hint=did_you_mean(type_name, visible)) from None

    def __contains__(self, type_name: object) -> bool:
        return type_name in self._types

    def types(self) -> list[str]:
        """Every registered type name, in listing order (hidden ones included)."""
        order = {name: i for i, name in enumerate(self._types)}
        return sorted(self._types,
                      key=lambda n: (_HEAT_RANK.get(n, len(HEAT_ORDER)), order[n]))

    # -- the resource_types API -----------------------------------------------------------
    def list_types(self, *, type_name: str | None = None, version: str | None = None,
                   support_status: str | None = None, with_description: bool = False,
                   available: Callable[[type[Resource]], bool] | None = None
                   ) -> list[Any]:
        """Body list of ``GET /resource_types``: names, or ``{resource_type, description}``.

        ``type_name`` is a regular expression matched at the start of the name (an
        invalid one matches nothing); hidden types are never listed, nor types for which
        *available* says no (their OpenStack service is not in the catalog).
        """
        if support_status is not None and support_status not in SUPPORT_STATUSES:
            raise InvalidFilter(
                "Data supplied was not valid: Invalid support status and should be one of "
                f"{SUPPORT_STATUSES}")
        pattern: re.Pattern[str] | None = None
        if type_name is not None:
            try:
                pattern = re.compile(type_name)
            except re.error:
                return []
        out: list[Any] = []
        for name in self.types():
            cls = self._types[name]
            status = cls.support_status
            if status.status == "HIDDEN":
                continue
            if available is not None and not available(cls):
                continue
            if pattern is not None and not pattern.match(name):
                continue
            if version is not None and status.version != version:
                continue
            if support_status is not None and status.status != support_status:
                continue
            if with_description:
                out.append({"resource_type": name,
                            "description": typedocs.type_description(cls)})
            else:
                out.append(name)
        return out

    def _documented(self, type_name: str) -> type[Resource]:
        cls = self._types.get(type_name)
        if cls is None:
            raise EntityNotFound(f"The Resource Type ({type_name}) could not be found.")
        if cls.support_status.status == "HIDDEN":
            raise NotSupported(f"{type_name} is not supported.")
        return cls

    def schema(self, type_name: str, with_description: bool = False,
               available: Callable[[type[Resource]], bool] | None = None) -> dict[str, Any]:
        """Body of ``GET /resource_types/{type}``; a type whose service is missing
        (*available* says no) is Heat's 400 ResourceTypeUnavailable."""
        cls = self._documented(type_name)
        if available is not None and not available(cls):
            raise ResourceTypeUnavailable(type_name, cls.client_name,
                                          "Service endpoint not in service catalog.")
        return typedocs.schema_body(type_name, cls, with_description=with_description)

    def template(self, type_name: str, template_type: str = "cfn") -> dict[str, Any]:
        """Body of ``GET /resource_types/{type}/template``."""
        return typedocs.template_body(type_name, self._documented(type_name), template_type)


def _import_path(path: Path, root: Path) -> ModuleType:
    """Import a plugin file under a private, unique module name."""
    relative = path.relative_to(root).with_suffix("")
    name = "kiln_plugin_" + re.sub(r"\W", "_", f"{root.resolve()}/{relative}")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load plugin {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def build_registry(plugin_dirs: Iterable[str] = (), *, builtins: bool = True,
                   use_entry_points: bool = True) -> Registry:
    registry = Registry()
    if builtins:
        registry.load_builtins()
    registry.load_plugin_dirs(plugin_dirs)
    if use_entry_points:
        registry.load_entry_points()
    return registry


@functools.cache
def global_registry() -> Registry:
    """The process-wide registry, built once from CONF.plugin_dirs."""
    from kiln.conf import CONF

    return build_registry(CONF.plugin_dirs)
