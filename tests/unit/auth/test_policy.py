"""Heat's policy rules through oslo.policy: defaults, overrides, scope, and the reference."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from oslo_config import cfg

from kiln import conf_identity as options
from kiln.auth.caller import Caller
from kiln.conf_loader import ConfigError
from kiln.policy.enforcer import Policy
from kiln.policy.reference import render
from kiln.policy.rules import heat_rules

PROJECT = {"project_id": "p1"}


def make_conf(tmp_path: Path, **policy_opts: object) -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    options.register(conf)
    conf([], project="kiln-test", default_config_files=[])
    conf.set_override("policy_file", str(tmp_path / "absent.yaml"), group="oslo_policy")
    for name, value in policy_opts.items():
        conf.set_override(name, value, group="oslo_policy")
    return conf


def caller(*roles: str, project: str | None = "p1", **extra: object) -> Caller:
    return Caller(user_id="u1", project_id=project, roles=roles, **extra)  # type: ignore[arg-type]


@pytest.mark.parametrize(("roles", "allowed"), [
    (("reader",), {"stacks:index", "stacks:show", "resource:metadata"}),
    (("member", "reader"), {"stacks:index", "stacks:show", "stacks:create", "stacks:delete",
                            "resource:metadata", "actions:suspend"}),
    (("heat_stack_user",), {"resource:metadata", "resource:signal", "stacks:lookup"}),
])
def test_roles_allow_what_heat_27_allows(tmp_path: Path, roles: tuple[str, ...],
                                         allowed: set[str]) -> None:
    policy = Policy(make_conf(tmp_path))
    checked = {"stacks:index", "stacks:show", "stacks:create", "stacks:delete",
               "resource:metadata", "resource:signal", "actions:suspend", "stacks:lookup",
               "service:index", "stacks:global_index"}
    got = {rule for rule in checked if policy.allows(rule, caller(*roles), PROJECT)}
    # readers may also signal and look up, as in Heat; only the rows above are asserted
    assert allowed <= got
    if roles == ("heat_stack_user",):
        assert got == {"resource:metadata", "resource:signal", "stacks:lookup"}
    assert "stacks:global_index" not in got and "service:index" not in got


def test_a_project_rule_refuses_another_project(tmp_path: Path) -> None:
    policy = Policy(make_conf(tmp_path))
    assert not policy.allows("stacks:index", caller("member", "reader"), {"project_id": "p2"})


def test_admin_is_context_admin(tmp_path: Path) -> None:
    policy = Policy(make_conf(tmp_path))
    assert policy.is_admin(caller("admin", "member", "reader"))
    assert not policy.is_admin(caller("member", "reader"))
    assert not policy.is_admin(caller("admin", is_admin_project=False))


def test_enforce_new_defaults_false_honours_the_old_rules(tmp_path: Path) -> None:
    new = Policy(make_conf(tmp_path))
    old = Policy(make_conf(tmp_path, enforce_new_defaults=False))
    # the pre-Wallaby rule: anybody but a stack user
    assert not new.allows("stacks:create", caller("reader"), PROJECT)
    assert old.allows("stacks:create", caller("reader"), PROJECT)
    assert not old.allows("stacks:create", caller("heat_stack_user"), PROJECT)


def test_enforce_scope_refuses_a_domain_scoped_token_unless_turned_off(
        tmp_path: Path) -> None:
    scoped = caller("reader", domain_id="d1")
    assert not Policy(make_conf(tmp_path)).allows("stacks:index", scoped, PROJECT)
    assert Policy(make_conf(tmp_path, enforce_scope=False)).allows(
        "stacks:index", scoped, PROJECT)


def test_a_policy_file_overrides_a_rule(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text('"stacks:index": "role:admin"\n')
    conf = make_conf(tmp_path)
    conf.set_override("policy_file", str(path), group="oslo_policy")
    policy = Policy(conf)
    assert not policy.allows("stacks:index", caller("member", "reader"), PROJECT)
    assert policy.allows("stacks:show", caller("member", "reader"), PROJECT)


def test_a_policy_file_that_does_not_parse_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text('"stacks:index": "role:admin"\n"stacks:show": [unclosed\n')
    conf = make_conf(tmp_path)
    conf.set_override("policy_file", str(path), group="oslo_policy")
    with pytest.raises(ConfigError) as err:
        Policy(conf)
    message = str(err.value)
    assert message.startswith(f"{path}: cannot parse the policy file")
    assert "line 3" in message or "line 2" in message


def test_the_reference_lists_every_rule_as_a_commented_default() -> None:
    text = render()
    uncommented = "\n".join(line[1:] for line in text.splitlines()
                            if line.startswith('#"'))
    parsed = yaml.safe_load(uncommented)
    assert parsed == {r["name"]: r["check_str"] for r in heat_rules()}
    assert parsed["stacks:create"] == "role:member and project_id:%(project_id)s"
    assert parsed["stacks:global_index"] == "rule:deny_everybody"


def test_the_rule_data_has_heats_rule_families() -> None:
    names = {r["name"] for r in heat_rules()}
    for family in ("stacks:", "software_configs:", "software_deployments:",
                   "resource_types:", "actions:", "events:", "resource:",
                   "cloudformation:", "build_info:", "service:"):
        assert any(n.startswith(family) for n in names), family
    assert json.dumps(sorted(names))  # plain strings


def test_every_v1_handler_names_one_of_heats_rules() -> None:
    from kiln.api.openstack_v1.policy_names import RULES

    names = {r["name"] for r in heat_rules()}
    assert {rule for rule in RULES.values() if rule is not None} <= names
    assert [h.__name__ for h, rule in RULES.items() if rule is None] == ["action"]


def test_kiln_policy_reference_prints_it() -> None:
    from click.testing import CliRunner

    from kiln.cli import main

    result = CliRunner().invoke(main, ["policy-reference"])
    assert result.exit_code == 0
    assert result.output == render()
