"""Environments: section rules, registry resolution, hooks, and the merge of several
environment files in the order python-heatclient sends them (checked against Heat 27)."""

from __future__ import annotations

import pytest

from kiln import errors
from kiln.template.environment import (
    Environment,
    EnvironmentFormatError,
    ResourceRegistry,
    build_environment,
    parse_environment,
)
from kiln.template.parameters import parse_parameters_section

SCHEMAS = parse_parameters_section({
    "a": {"type": "string", "default": "d"},
    "b": {"type": "comma_delimited_list", "default": ""},
    "j": {"type": "json", "default": {}},
    "n": {"type": "number", "default": 0},
}, "hot")


class TestParse:
    def test_unknown_section(self) -> None:
        with pytest.raises(EnvironmentFormatError) as exc:
            parse_environment({"foo": {}})
        assert exc.value.message == \
            'Environment not in valid format: environment has wrong section "foo"'
        assert exc.value.error_type == "HTTPBadRequest"

    def test_empty_section(self) -> None:
        with pytest.raises(EnvironmentFormatError,
                           match='environment has empty section "parameters"'):
            parse_environment("parameters:\n")

    def test_not_a_mapping(self) -> None:
        with pytest.raises(EnvironmentFormatError) as exc:
            parse_environment("- a\n- b\n")
        assert exc.value.message == ("Environment not in valid format: The environment is "
                                     "not a valid YAML mapping data type.")

    def test_yaml_error_has_position(self) -> None:
        with pytest.raises(EnvironmentFormatError) as exc:
            parse_environment("parameters: [1")
        assert exc.value.message.startswith(
            "Environment not in valid format: while parsing a flow sequence\n"
            '  in "<unicode string>", line 1, column 13:')

    def test_empty_text(self) -> None:
        assert parse_environment("") == {}

    def test_to_dict_shape(self) -> None:
        env = build_environment(None)
        assert env.to_dict() == {"resource_registry": {"resources": {}}, "parameters": {},
                                 "parameter_defaults": {}, "event_sinks": []}


class TestRegistry:
    def test_alias_chain(self) -> None:
        r = ResourceRegistry({"OS::A": "OS::B", "OS::B": "OS::Heat::None"})
        assert r.resolve("OS::A") == "OS::Heat::None"
        assert r.resolve("OS::Other") == "OS::Other"

    def test_glob_with_suffix_substitution(self) -> None:
        r = ResourceRegistry({"OS::Networking::*": "OS::Neutron::*"})
        assert r.resolve("OS::Networking::Port") == "OS::Neutron::Port"

    def test_glob_many_to_one_does_not_match_its_target(self) -> None:
        r = ResourceRegistry({"OS::*": "OS::Heat::None"})
        assert r.resolve("OS::Nova::Server") == "OS::Heat::None"
        assert r.resolve("OS::Heat::None") == "OS::Heat::None"

    def test_per_resource_beats_all_and_glob_sorts_before_exact(self) -> None:
        # Heat orders same-level entries by name, and "*" sorts before letters, so a glob
        # wins over an exact entry (Heat 27: My::* -> None beat My::Thing -> TestResource).
        # Heat also leaks a per-resource override into later lookups of the same type
        # (a caching side effect that depends on resource order); Kiln does not.
        r = ResourceRegistry({
            "My::*": "OS::Heat::None",
            "My::Thing": "OS::Heat::RandomString",
            "Exact::Thing": "server.yaml",
            "resources": {"special": {"My::Thing": "OS::Heat::TestResource"}},
        })
        assert r.resolve("My::Thing", "plain") == "OS::Heat::None"
        assert r.resolve("My::Thing", "special") == "OS::Heat::TestResource"
        assert r.resolve("My::Other", "plain") == "OS::Heat::None"
        assert r.resolve("Exact::Thing", "plain") == "server.yaml"

    def test_provider_templates(self) -> None:
        r = ResourceRegistry({"My::Thing": "thing.yaml", "other.template": "x"})
        assert r.resolve("My::Thing") == "thing.yaml"
        assert r.is_template(r.resolve("My::Thing"))
        assert r.as_dict()["other.template"] == "other.template"
        assert r.resolve("direct.yaml") == "direct.yaml"
        assert not r.is_template("OS::Heat::None")

    def test_null_removes_on_layering(self) -> None:
        env = Environment({"resource_registry": {"OS::A": "OS::B", "OS::X*": "OS::Y"}})
        env.load({"resource_registry": {"OS::A": None}})
        assert env.registry.resolve("OS::A") == "OS::A"

    def test_loop_is_an_error(self) -> None:
        r = ResourceRegistry({"OS::A": "OS::B", "OS::B": "OS::A"})
        with pytest.raises(errors.StackValidationFailed):
            r.resolve("OS::A")

    def test_hooks_with_globs(self) -> None:
        r = ResourceRegistry({"resources": {
            "web_*": {"hooks": ["pre-create", "post-update"]},
            "web_1": {"hooks": "pre-delete"},
            "*": {"restricted_actions": "replace"},
        }})
        assert r.hooks_for("web_1") == {"pre-create", "post-update", "pre-delete"}
        assert r.hooks_for("db") == frozenset()
        assert r.matches_hook("web_2", "pre-create")
        assert r.restricted_actions_for("db") == {"replace"}

    def test_invalid_hook(self) -> None:
        with pytest.raises(errors.InvalidBreakPointHook) as exc:
            ResourceRegistry({"resources": {"r*": {"hooks": "pre-bogus"}}})
        assert exc.value.message == (
            'Invalid hook type "pre-bogus" for resource breakpoint, acceptable hook types '
            "are: ('pre-create', 'pre-update', 'pre-delete', 'post-create', 'post-update', "
            "'post-delete')")
        with pytest.raises(errors.InvalidBreakPointHook, match=r"\['pre-create', 'x'\]"):
            ResourceRegistry({"resources": {"r": {"hooks": ["pre-create", "x"]}}})

    def test_child_registry_keeps_only_that_resources_entries(self) -> None:
        r = ResourceRegistry({"OS::A": "OS::B", "resources": {
            "group": {"inner": {"hooks": "pre-create"}},
            "other": {"x": {"hooks": "pre-delete"}}}})
        child = r.child("group")
        assert child.hooks_for("inner") == {"pre-create"}
        assert child.hooks_for("x") == frozenset()
        assert child.resolve("OS::A") == "OS::B"


class TestBuild:
    FILES = {
        "e1.yaml": "parameters:\n  a: e1\n  zz: 1\nparameter_defaults:\n  b: x\n"
                   "resource_registry:\n  OS::A: OS::Heat::None\n  resources:\n    r1:\n"
                   "      hooks: pre-create\n",
        "e2.yaml": "parameter_merge_strategies:\n  j: deep_merge\nparameters:\n"
                   "  j: {k: {x: 1}}\nparameter_defaults:\n  b: y\n  q: 2\n"
                   "resource_registry:\n  OS::B: OS::Heat::None\n  resources:\n    r2:\n"
                   "      hooks: pre-delete\n",
    }

    def test_caller_params_over_environment_body(self) -> None:
        env = build_environment({"parameters": {"a": "body", "b": "x"}},
                                user_params={"a": "caller"})
        assert env.parameters == {"a": "caller", "b": "x"}

    def test_environment_files_as_heat_merges_them(self) -> None:
        # Heat 27 answered exactly this for the same request (POST /validate) with an
        # environment body too, which its API (like Kiln's) drops when files are given
        env = build_environment(None,
                                environment_files=["e1.yaml", "e2.yaml"],
                                files=self.FILES, user_params={"a": "caller"},
                                param_schemas=SCHEMAS)
        assert env.to_dict() == {
            "resource_registry": {"resources": {"r2": {"hooks": "pre-delete"}},
                                  "OS::A": "OS::Heat::None", "OS::B": "OS::Heat::None"},
            "parameters": {"a": "e1", "j": {"k": {"x": 1}}},
            "parameter_defaults": {"b": "y"},
            "event_sinks": [],
        }

    def test_files_merge_over_what_the_api_passes(self) -> None:
        env = build_environment({"parameters": {"a": "caller", "n": 1}},
                                environment_files=["e1.yaml"], files=self.FILES,
                                param_schemas=SCHEMAS)
        assert env.parameters == {"a": "e1", "n": 1}

    def test_first_file_keeps_undeclared_names(self) -> None:
        env = build_environment(None, environment_files=["e1.yaml"], files=self.FILES,
                                param_schemas=SCHEMAS)
        assert env.parameters == {"a": "e1", "zz": 1}

    def test_merge_strategies(self) -> None:
        files = {
            "1.yaml": "parameter_merge_strategies:\n  default: merge\n  j: deep_merge\n"
                      "parameters:\n  a: foo\n  b: x,y\n  j: {k: {x: 1}, l: [1]}\n",
            "2.yaml": "parameters:\n  a: bar\n  b: z\n  j: {k: {y: 2}, l: [2]}\n",
        }
        env = build_environment(None, environment_files=["1.yaml", "2.yaml"], files=files,
                                param_schemas=SCHEMAS)
        # Heat 27's answer for the same two files
        assert env.parameters == {"a": "foobar", "b": "x,y,z",
                                  "j": {"k": {"x": 1, "y": 2}, "l": [1, 2]}}

    def test_conflicting_strategy(self) -> None:
        files = {"1.yaml": "parameter_merge_strategies:\n  a: merge\nparameters:\n  a: x\n",
                 "2.yaml": "parameter_merge_strategies:\n  a: overwrite\nparameters:\n"
                           "  a: y\n"}
        with pytest.raises(errors.InvalidMerge) as exc:
            build_environment(None, environment_files=["1.yaml", "2.yaml"], files=files,
                              param_schemas=SCHEMAS)
        assert exc.value.message == ("Conflicting merge strategy 'overwrite' for parameter "
                                     "'a' in file '2.yaml'.")

    def test_bad_file_section(self) -> None:
        with pytest.raises(EnvironmentFormatError, match='wrong section "bogus"'):
            build_environment(None, environment_files=["x.yaml"],
                              files={"x.yaml": "bogus: {}\n"}, param_schemas=SCHEMAS)

    def test_child_environment(self) -> None:
        env = Environment({"parameters": {"a": 1}, "parameter_defaults": {"p": 2},
                           "resource_registry": {"OS::A": "OS::B"}})
        child = env.child({"x": "1"})
        assert child.parameters == {"x": "1"}
        assert child.parameter_defaults == {"p": 2}
        assert child.registry.resolve("OS::A") == "OS::B"

    def test_env_as_dict_adds_encrypted_names(self) -> None:
        env = Environment({"encrypted_param_names": ["pw"]})
        assert env.env_as_dict()["encrypted_param_names"] == ["pw"]
        assert "encrypted_param_names" not in env.to_dict()


def test_shown_masks_hidden_parameters() -> None:
    # Heat 27's GET .../environment for the same stack
    env = build_environment({"parameter_defaults": {"pw": "pd", "x": "xd"},
                             "resource_registry": {"My::T": "OS::Heat::None"}},
                            user_params={"pw": "secret"})
    assert env.shown(hidden={"pw"}) == {
        "resource_registry": {"resources": {}, "My::T": "OS::Heat::None"},
        "parameters": {"pw": "******"}, "parameter_defaults": {"pw": "******", "x": "xd"},
        "event_sinks": [], "encrypted_param_names": []}
    assert env.parameters["pw"] == "secret"


def test_heat_stock_global_aliases() -> None:
    r = ResourceRegistry()
    assert r.resolve("OS::Quantum::Net") == "OS::Neutron::Net"
    assert r.resolve("OS::Ceilometer::Alarm") == "OS::Aodh::Alarm"
    # a user mapping wins over the stock alias
    r = ResourceRegistry({"OS::Ceilometer::Alarm": "OS::Heat::None"})
    assert r.resolve("OS::Ceilometer::Alarm") == "OS::Heat::None"
    assert "OS::Ceilometer::Alarm" not in ResourceRegistry().as_dict()


def test_template_type_used_directly_is_recorded() -> None:
    # Heat 27's /validate Environment after a resource of type nested.yaml
    env = build_environment({"resource_registry": {"My::Nest": "inner.yaml"}})
    assert env.registry.resolve("nested.yaml", "n") == "nested.yaml"
    assert env.registry.resolve("My::Nest", "m") == "inner.yaml"
    assert env.to_dict()["resource_registry"] == {
        "resources": {}, "My::Nest": "inner.yaml", "nested.yaml": "nested.yaml"}


class TestChildRegistry:
    REG = {"OS::Nova::Server": "server.yaml", "My::A": "My::B", "My::B": "b.yaml",
           "resources": {"special": {"OS::Nova::Server": "special.yaml"}}}

    def test_provider_mapping_is_removed_in_its_own_nested_stack(self) -> None:
        env = Environment({"resource_registry": self.REG})
        child = env.child({"p": 1}, resource_name="web", resource_type="OS::Nova::Server")
        assert child.registry.resolve("OS::Nova::Server") == "OS::Nova::Server"
        assert child.registry.resolve("My::A") == "b.yaml"

    def test_only_the_last_entry_of_a_chain_is_removed(self) -> None:
        env = Environment({"resource_registry": self.REG})
        child = env.child({}, resource_name="x", resource_type="My::A")
        assert child.registry.resolve("My::A") == "My::B"
        assert child.registry.resolve("OS::Nova::Server") == "server.yaml"

    def test_per_resource_entry(self) -> None:
        env = Environment({"resource_registry": self.REG})
        assert env.registry.template_entry("OS::Nova::Server", "special") == \
            ("resources", "special", "OS::Nova::Server")
        assert env.registry.template_entry("OS::Heat::None", "x") is None
        assert env.registry.template_entry("direct.yaml", "x") == ("direct.yaml",)
