"""Property tests: any environment text or mapping gives an Environment or a Kiln error."""

from __future__ import annotations

import contextlib
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kiln import errors
from kiln.template.environment import build_environment

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=6))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.one_of(st.text(max_size=6), st.sampled_from(
        ["hooks", "resources", "restricted_actions", "OS::*", "x.yaml"])), inner,
        max_size=3)), max_leaves=8)
sections = st.dictionaries(st.sampled_from(
    ["parameters", "resource_registry", "parameter_defaults", "event_sinks",
     "encrypted_param_names", "parameter_merge_strategies", "bogus"]), values, max_size=4)


@settings(max_examples=100, deadline=None)
@given(env=st.one_of(sections, st.text(max_size=40)), name=st.text(max_size=6))
def test_build_environment_never_leaks(env: Any, name: str) -> None:
    try:
        built = build_environment(env)
        built.to_dict()
        built.registry.resolve("OS::" + name, name)
        built.registry.hooks_for(name)
    except errors.KilnError:
        pass


@settings(max_examples=60, deadline=None)
@given(files=st.lists(sections, min_size=1, max_size=3))
def test_environment_files_never_leak(files: list[dict[str, Any]]) -> None:
    import yaml

    from kiln.template.parameters import parse_parameters_section

    schemas = parse_parameters_section({"a": {"type": "string"}, "j": {"type": "json"},
                                        "l": {"type": "comma_delimited_list"},
                                        "n": {"type": "number"},
                                        "b": {"type": "boolean"}}, "hot")
    contents = {f"{i}.yaml": yaml.safe_dump(f) for i, f in enumerate(files)}
    with contextlib.suppress(errors.KilnError):
        build_environment(None, environment_files=list(contents), files=contents,
                          param_schemas=schemas, user_params={"a": "x"})
