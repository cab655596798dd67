"""The one place API calls are checked against the policy rules.

Built once at startup: the defaults (rules.py) plus the operator's ``[oslo_policy]
policy_file``, which is read here so that a file that does not parse stops Kiln with
its name and line instead of failing the first request. A denial is Heat's 403:
``You are not authorized to use <rule>.`` with error type ``Forbidden``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from oslo_config import cfg
from oslo_policy import policy

from kiln.auth.caller import Caller
from kiln.policy import rules

LOG = logging.getLogger("kiln.policy")
#: remembered decisions before the memory is emptied (callers x rules in use)
DECISIONS = 20000


class PolicyDenied(Exception):
    """A rule refused the call; ``rule`` is its name."""

    def __init__(self, rule: str) -> None:
        super().__init__(f"You are not authorized to use {rule}.")
        self.rule = rule


class Policy:
    def __init__(self, conf: cfg.ConfigOpts) -> None:
        from kiln.conf_loader import ConfigError

        self._enforcer = policy.Enforcer(conf)
        # the deprecated rules are Heat's own fallback, not an operator's mistake
        self._enforcer.suppress_deprecation_warnings = True
        self._enforcer.suppress_default_change_warnings = True
        self._enforcer.register_defaults(
            rules.defaults(enforce_scope=bool(conf.oslo_policy.enforce_scope)))
        try:
            self._enforcer.load_rules()
        except ValueError as exc:
            path = self._enforcer.policy_path or conf.oslo_policy.policy_file
            raise ConfigError(f"{path}: cannot parse the policy file: "
                              f"{_one_line(str(exc))}") from None
        except cfg.ConfigFilesNotFoundError:
            raise ConfigError(f"[oslo_policy] policy_file not found: "
                              f"{conf.oslo_policy.policy_file}") from None
        self._decisions: dict[tuple[Any, ...], bool] = {}
        if self._enforcer.policy_path:
            LOG.info("policy file %s loaded", self._enforcer.policy_path)

    def allows(self, rule: str, caller: Caller, target: Mapping[str, Any]) -> bool:
        """The decision, remembered per (rule, caller's credentials, target): each call
        into oslo.policy re-checks the policy file and directories on disk, which tripled
        a cached stack show's time (bench/keystone_bench.py). The rules are read at
        startup; a changed policy file takes effect at the next start."""
        key = (rule, caller.user_id, caller.project_id, caller.roles, caller.domain_id,
               caller.system_scope, caller.is_admin_project, caller.service_roles,
               tuple(sorted(target.items())))
        found = self._decisions.get(key)
        if found is None:
            try:
                found = bool(self._enforcer.enforce(rule, dict(target),
                                                    caller.policy_credentials()))
            except policy.InvalidScope:
                found = False
            if len(self._decisions) >= DECISIONS:
                self._decisions.clear()
            self._decisions[key] = found
        return found

    def enforce(self, rule: str, caller: Caller, target: Mapping[str, Any]) -> None:
        if not self.allows(rule, caller, target):
            raise PolicyDenied(rule)

    def is_admin(self, caller: Caller) -> bool:
        """Heat's ``context_is_admin``: every project's stacks, no quotas."""
        return self.allows("context_is_admin", caller, {})


def _one_line(text: str) -> str:
    return " ".join(text.split())
