"""What `kiln stack` reads from disk and sends as the request's files."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from kiln.client import templates


def test_parameters_repeat_or_join_with_semicolons() -> None:
    assert templates.parameters(("a=1", "b=x=y", "c=1;d=2", "e=v1;v2")) == {
        "a": "1", "b": "x=y", "c": "1", "d": "2", "e": "v1;v2"}


def test_a_parameter_without_equals_is_refused() -> None:
    with pytest.raises(click.BadParameter, match="'oops' is not KEY=VALUE"):
        templates.parameters(("oops",))


def test_referenced_files_are_collected_by_the_name_they_are_referred_to(
        tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "child.yaml").write_text(
        "heat_template_version: 2018-08-31\nresources:\n"
        "  c: {type: OS::Heat::Value, properties: {value: {get_file: data.txt}}}\n")
    (tmp_path / "lib" / "data.txt").write_text("child data")
    (tmp_path / "top.txt").write_text("top data")
    (tmp_path / "provider.yaml").write_text("heat_template_version: 2018-08-31\n")
    (tmp_path / "env.yaml").write_text("resource_registry:\n  My::T: provider.yaml\n"
                                       "  resources:\n    r: {hooks: pre-create}\n")
    (tmp_path / "main.yaml").write_text(
        "heat_template_version: 2018-08-31\nresources:\n"
        "  a: {type: OS::Heat::Value, properties: {value: {get_file: top.txt}}}\n"
        "  b: {type: lib/child.yaml}\n")
    bundle = templates.load(str(tmp_path / "main.yaml"), (str(tmp_path / "env.yaml"),))
    env_url = (tmp_path / "env.yaml").as_uri()
    assert bundle.environment_files == [env_url]
    assert set(bundle.files) == {env_url, "provider.yaml", "top.txt", "lib/child.yaml",
                                 "data.txt"}
    assert bundle.files["data.txt"] == "child data"  # read beside the child that names it
    assert bundle.template == (tmp_path / "main.yaml").read_text()


def test_two_different_files_under_one_name_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.txt").write_text("one")
    (tmp_path / "x.txt").write_text("two")
    (tmp_path / "a" / "child.yaml").write_text(
        "heat_template_version: 2018-08-31\nresources:\n"
        "  c: {type: OS::Heat::Value, properties: {value: {get_file: x.txt}}}\n")
    (tmp_path / "main.yaml").write_text(
        "heat_template_version: 2018-08-31\nresources:\n"
        "  t: {type: OS::Heat::Value, properties: {value: {get_file: x.txt}}}\n"
        "  c: {type: a/child.yaml}\n")
    with pytest.raises(templates.TemplateError, match=r"two different files .* 'x\.txt'"):
        templates.load(str(tmp_path / "main.yaml"))


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "main.yaml").write_text(
        "heat_template_version: 2018-08-31\nresources:\n"
        "  t: {type: OS::Heat::Value, properties: {value: {get_file: gone.txt}}}\n")
    with pytest.raises(templates.TemplateError, match=r"cannot read .*gone\.txt"):
        templates.load(str(tmp_path / "main.yaml"))


def test_a_template_that_does_not_parse_is_refused_naming_the_file(tmp_path: Path) -> None:
    """The server would only know it as ``[root stack]``; the client knows its name."""
    (tmp_path / "bad.yaml").write_text("resources: [unclosed\n")
    with pytest.raises(templates.TemplateError) as refused:
        templates.load(str(tmp_path / "bad.yaml"))
    assert refused.value.message == (
        f"{tmp_path / 'bad.yaml'}, line 2, column 1: expected ',' or ']', but got "
        "'<stream end>' (while parsing a flow sequence at line 1, column 12)")


def test_a_json_template_is_read_as_json(tmp_path: Path) -> None:
    (tmp_path / "t.json").write_text('{"heat_template_version":\t"2018-08-31"}')
    bundle = templates.load(str(tmp_path / "t.json"))
    assert bundle.parsed == {"heat_template_version": "2018-08-31"}
