"""Errors that point and suggest, through a real `kiln serve`: an unknown resource type,
property, parameter or a CloudFormation function in HOT gets Kiln's suggestion in the
fault body's ``error.hint`` (``did you mean ...?``), and Python's words for a number it
could not read get what was expected and what was given, while ``error.message`` stays
Heat's exact text (clients and tests/corpus compare it). ``kiln stack`` prints the hint
under the message.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
from heatclient import exc as heat_exc

from tests.support.clients import heat_client
from tests.support.server import HTTP_TIMEOUT, KilnProcess, clean_env, kiln_command

HOT = "heat_template_version: 2018-08-31\n"

TYPO_TYPE = HOT + """\
resources:
  secret:
    type: OS::Heat::RandomStrin
"""
TYPO_PROPERTY = HOT + """\
resources:
  secret:
    type: OS::Heat::RandomString
    properties: {lenght: 8}
"""
LENGTH = HOT + """\
parameters:
  length: {type: number, default: 8}
resources:
  secret:
    type: OS::Heat::RandomString
    properties: {length: {get_param: length}}
"""
TYPO_GET_PARAM = LENGTH.replace("{get_param: length}", "{get_param: lenght}")
CFN_FUNCTION = HOT + """\
outputs:
  joined: {value: {"Fn::Join": ["-", [a, b]]}}
"""
NOT_A_NUMBER = HOT + """\
resources:
  slow:
    type: OS::Heat::TestResource
    properties: {wait_secs: abc}
"""

RANGED = HOT + """\
parameters:
  count:
    type: number
    default: 2
    constraints: [{range: {min: 1, max: 5}, description: between 1 and 5 members}]
  pin:
    type: string
    hidden: true
    default: "1234"
    constraints: [{length: {max: 4}, description: four digits at most}]
"""

#: (template, parameters, Heat's message, Kiln's hint)
CASES: dict[str, tuple[str, dict[str, Any], str, str]] = {
    "type": (TYPO_TYPE, {}, "The Resource Type (OS::Heat::RandomStrin) could not be found.",
             "resources.secret.type: did you mean OS::Heat::RandomString?"),
    "property": (TYPO_PROPERTY, {},
                 "Property error: resources.secret.properties: Unknown Property lenght",
                 "did you mean length?"),
    "parameter": (LENGTH, {"lenght": 3}, "The Parameter (lenght) was not defined in template.",
                  "did you mean length?"),
    "get_param": (TYPO_GET_PARAM, {}, "Property error: resources.secret.properties.length: "
                  "The Parameter (lenght) was not provided.", "did you mean length?"),
    "function": (CFN_FUNCTION, {}, "outputs.joined.value.Fn::Join: The template version is "
                 "invalid: The function Fn::Join is not supported in this version of HOT.",
                 "did you mean list_join? (HOT's function for Fn::Join)"),
    "number parameter": (LENGTH, {"length": "eighty"},
                         "Parameter 'length' is invalid: could not convert string to float: "
                         "'eighty'", "expected a number (such as 8 or 0.5), got 'eighty'"),
    "number property": (NOT_A_NUMBER, {}, "Property error: resources.slow.properties.wait_secs:"
                        " could not convert string to float: 'abc'",
                        "expected a number (such as 8 or 0.5), got 'abc'"),
    # a constraint's description replaces Heat's words, and with them the value given
    "described range": (RANGED, {"count": 9}, "Parameter 'count' is invalid: between 1 and 5 "
                        "members", "the value given was 9"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_create_answers_heats_message_with_kilns_hint(kiln_server: KilnProcess,
                                                       case: str) -> None:
    template, params, message, hint = CASES[case]
    body = {"stack_name": "hinted", "template": template, "parameters": params}
    answer = httpx.post(f"{kiln_server.endpoint('demo')}/stacks", json=body,
                        timeout=HTTP_TIMEOUT)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert (error["message"], error["hint"]) == (message, hint)


def test_python_heatclient_sees_the_hint_beside_heats_message(kiln_server: KilnProcess) -> None:
    heat = heat_client(kiln_server.endpoint("demo"))
    with pytest.raises(heat_exc.HTTPBadRequest) as raised:
        heat.stacks.validate(template=TYPO_PROPERTY)
    assert str(raised.value) == (
        "ERROR: Property error: resources.secret.properties: Unknown Property lenght")
    assert raised.value.error["error"]["hint"] == "did you mean length?"


@pytest.mark.parametrize("params", [{"pin": "123456"}, {"count": 6, "pin": "1"}])
def test_no_hint_shows_a_hidden_value_or_repeats_one(kiln_server: KilnProcess,
                                                     params: dict[str, Any]) -> None:
    answer = httpx.post(f"{kiln_server.endpoint('demo')}/stacks", timeout=HTTP_TIMEOUT,
                        json={"stack_name": "hinted", "template": RANGED.replace(
                            ", description: between 1 and 5 members", ""),
                            "parameters": params})
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["message"] == ("Parameter 'pin' is invalid: four digits at most"
                                if "pin" in params and len(params["pin"]) > 4 else
                                "Parameter 'count' is invalid: 6 is out of range (min: 1, "
                                "max: 5)")
    assert "hint" not in error


def test_no_hint_without_a_close_name(kiln_server: KilnProcess) -> None:
    template = HOT + "resources:\n  r:\n    type: OS::Heat::None\n  s:\n" \
                     "    type: OS::Heat::RandomString\n    properties: {zzzzzz: 1}\n"
    answer = httpx.post(f"{kiln_server.endpoint('demo')}/validate",
                        json={"template": template}, timeout=HTTP_TIMEOUT)
    assert answer.status_code == 400
    assert "hint" not in answer.json()["error"]


@pytest.mark.parametrize(("command", "case"), [
    ("create", "type"), ("validate", "property"), ("create", "number parameter"),
])
def test_kiln_stack_prints_the_hint(kiln_server: KilnProcess, tmp_path: Path,
                                    command: str, case: str) -> None:
    template, params, message, hint = CASES[case]
    (tmp_path / "t.yaml").write_text(template)
    args = [f"--parameter={k}={v}" for k, v in params.items()]
    result = subprocess.run(
        [*kiln_command(), "stack", command, "-t", "t.yaml", *args,
         *(["hinted"] if command == "create" else [])],
        capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False,
        env={**clean_env(), "OS_ENDPOINT": kiln_server.endpoint("demo"), "NO_COLOR": "1"})
    assert result.returncode == 1, result
    assert result.stderr == f"kiln: error: {message}\n  hint: {hint}\n"


#: a newcomer's typos in a template's structure: (template, Heat's message, Kiln's hint)
STRUCTURE: dict[str, tuple[str, str, str]] = {
    "section": (HOT + "resorces:\n  s: {type: OS::Heat::None}\n",
                "The template section is invalid: resorces", "did you mean resources?"),
    "resource keyword": (HOT + "resources:\n  s:\n    type: OS::Heat::RandomString\n"
                         "    propertis: {length: 3}\n",
                         "Invalid keyword(s) inside a resource definition: propertis",
                         "resources.s: did you mean properties?"),
    "parameter key": (HOT + "parameters:\n  p: {type: string, defualt: x}\n",
                      "Invalid key 'defualt' for parameter (p)", "did you mean default?"),
    "get_attr": (HOT + "resources:\n  secret: {type: OS::Heat::None}\n  r:\n"
                 "    type: OS::Heat::Value\n"
                 "    properties: {value: {get_attr: [secert, value]}}\n",
                 'The specified reference "secert" (in r.Properties.value) is incorrect.',
                 "did you mean secret?"),
    "get_attr in an output": (HOT + "resources:\n  secret: {type: OS::Heat::None}\n"
                              "outputs:\n  o: {value: {get_attr: [secert, value]}}\n",
                              "outputs.o.value.get_attr: The specified reference "
                              '"secert" (in unknown) is incorrect.', "did you mean secret?"),
    "condition function": (HOT + "conditions:\n  prod: {equal: [a, b]}\n",
                           'Condition validation error: The definition of condition "prod" '
                           "is invalid: {'equal': ['a', 'b']}", "did you mean equals?"),
    "depends_on": (HOT + "resources:\n  secret: {type: OS::Heat::None}\n"
                   "  r: {type: OS::Heat::None, depends_on: [secert]}\n",
                   'The specified reference "secert" (in r) is incorrect.',
                   "did you mean secret?"),
}


@pytest.mark.parametrize("case", list(STRUCTURE))
def test_structure_typos_are_suggested_at_validate(kiln_server: KilnProcess,
                                                   case: str) -> None:
    template, message, hint = STRUCTURE[case]
    answer = httpx.post(f"{kiln_server.endpoint('demo')}/validate",
                        json={"template": template}, timeout=HTTP_TIMEOUT)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert (error["message"], error["hint"]) == (message, hint)


BROKEN_YAML = HOT + "resources:\n  secret:\n    type: OS::Heat::RandomString\n" \
                    "    properties: {length: 8\n"
#: PyYAML's words for BROKEN_YAML, which Heat's message quotes after its own
PYYAML_SAYS = ("while parsing a flow mapping\n  in \"<unicode string>\", line 5, column 17:\n"
               "        properties: {length: 8\n                    ^\n"
               "expected ',' or '}', but got '<stream end>'\n"
               "  in \"<unicode string>\", line 6, column 1:\n    \n    ^")
YAML_PROBLEM = ("line 6, column 1: expected ',' or '}', but got '<stream end>' "
                "(while parsing a flow mapping at line 5, column 17)")


def test_a_yaml_error_points_at_line_and_column_of_the_template(
        kiln_server: KilnProcess) -> None:
    answer = httpx.post(f"{kiln_server.endpoint('demo')}/validate",
                        json={"template": BROKEN_YAML}, timeout=HTTP_TIMEOUT)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["message"] == ("Template not in valid format: Error parsing template "
                                f"[root stack] {PYYAML_SAYS}")  # Heat 27's exact text
    assert error["hint"] == f"template, {YAML_PROBLEM}"


@pytest.mark.parametrize("path", ["validate", "stacks"])
def test_a_yaml_error_in_a_nested_template_names_its_file(kiln_server: KilnProcess,
                                                          path: str) -> None:
    body = {"stack_name": "nested-yaml", "files": {"child.yaml": BROKEN_YAML},
            "template": HOT + "resources:\n  child: {type: child.yaml}\n"}
    answer = httpx.post(f"{kiln_server.endpoint('demo')}/{path}", json=body,
                        timeout=HTTP_TIMEOUT)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["message"] == f"Error parsing template child.yaml {PYYAML_SAYS}"
    assert error["hint"] == f"child.yaml, {YAML_PROBLEM}"


@pytest.mark.parametrize("broken", ["template", "nested", "environment"])
def test_kiln_stack_names_the_file_a_yaml_error_is_in(kiln_server: KilnProcess,
                                                      tmp_path: Path, broken: str) -> None:
    (tmp_path / "lib").mkdir()
    good_env = "parameter_defaults: {}\n"
    (tmp_path / "t.yaml").write_text(
        BROKEN_YAML if broken == "template"
        else HOT + "resources:\n  child: {type: lib/child.yaml}\n")
    (tmp_path / "lib" / "child.yaml").write_text(BROKEN_YAML if broken == "nested" else HOT)
    (tmp_path / "env.yaml").write_text(
        good_env.replace("{}", "{a: [1,\n") if broken == "environment" else good_env)
    result = subprocess.run(
        [*kiln_command(), "stack", "validate", "-t", "t.yaml", "-e", "env.yaml"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False,
        env={**clean_env(), "OS_ENDPOINT": kiln_server.endpoint("demo"), "NO_COLOR": "1"})
    assert result.returncode == 1, result
    expected = {
        "template": f"t.yaml, {YAML_PROBLEM}",
        "nested": f"lib/child.yaml, {YAML_PROBLEM}",
        "environment": "env.yaml, line 3, column 1: expected the node content, but found "
                       "'<stream end>' (while parsing a flow node at line 3, column 1)",
    }[broken]
    assert result.stderr == f"kiln: error: {expected}\n"


#: three resources with a mistake each, and a misspelt function Heat takes as a map
MISTAKES = HOT + """\
parameters:
  size: {type: number, default: 8}
resources:
  a:
    type: OS::Heat::RandomStrin
  b:
    type: OS::Heat::RandomString
    properties: {lenght: 8}
  c:
    type: OS::Heat::RandomString
    properties:
      length: {get_parm: size}
  d:
    type: OS::Heat::Value
    properties: {value: {get_attr: [a, value]}, tpye: string}
outputs:
  o: {value: {get_resource: a}}
"""
TYPO_FUNCTION = ('resources.c.properties.length: {get_parm: "size"} is a map, not a '
                 "function: did you mean get_param?")
EVERY_ERROR = [
    {"type": "HTTPBadRequest",
     "message": "The Resource Type (OS::Heat::RandomStrin) could not be found.",
     "hint": "resources.a.type: did you mean OS::Heat::RandomString?"},
    {"type": "HTTPBadRequest",
     "message": "Property error: resources.b.properties: Unknown Property lenght",
     "hint": "did you mean length?"},
    {"type": "HTTPBadRequest",
     "message": "Property error: resources.d.properties: Unknown Property tpye",
     "hint": "did you mean type?"},
]


def test_validate_answers_heats_one_error_unless_asked_for_all(
        kiln_server: KilnProcess) -> None:
    url = f"{kiln_server.endpoint('demo')}/validate"
    heats = httpx.post(url, json={"template": MISTAKES}, timeout=HTTP_TIMEOUT)
    assert heats.status_code == 400
    assert heats.json()["error"] == {"type": "HTTPBadRequest", "traceback": None,
                                     **EVERY_ERROR[0]}
    every = httpx.post(url, params={"all_errors": "true"}, json={"template": MISTAKES},
                       timeout=HTTP_TIMEOUT)
    assert every.status_code == 400
    error = every.json()["error"]
    assert error["message"] == EVERY_ERROR[0]["message"]  # still Heat's first
    assert error["errors"] == EVERY_ERROR
    assert error["warnings"] == [TYPO_FUNCTION]


def test_validate_warns_of_a_misspelt_function_heat_accepts(kiln_server: KilnProcess) -> None:
    fixed = MISTAKES.replace("RandomStrin\n", "RandomString\n").replace(
        "lenght", "length").replace("tpye", "type")
    url = f"{kiln_server.endpoint('demo')}/validate"
    heats = httpx.post(url, json={"template": fixed}, timeout=HTTP_TIMEOUT)
    assert heats.status_code == 200
    assert "Warnings" not in heats.json()  # Heat's answer, as Heat's clients expect it
    kilns = httpx.post(url, params={"all_errors": "true"}, json={"template": fixed},
                       timeout=HTTP_TIMEOUT)
    assert kilns.status_code == 200
    assert kilns.json() == {**heats.json(), "Warnings": [TYPO_FUNCTION]}


def test_kiln_stack_validate_lists_every_error_and_warning(kiln_server: KilnProcess,
                                                          tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(MISTAKES)
    run = {"capture_output": True, "text": True, "cwd": tmp_path, "timeout": 120,
           "check": False, "env": {**clean_env(), "NO_COLOR": "1",
                                   "OS_ENDPOINT": kiln_server.endpoint("demo")}}
    result = subprocess.run([*kiln_command(), "stack", "validate", "-t", "t.yaml"], **run)
    assert result.returncode == 1, result
    assert result.stdout == ""
    assert result.stderr == (
        f"kiln: warning: {TYPO_FUNCTION}\n"
        f"kiln: error: {EVERY_ERROR[0]['message']}\n  hint: {EVERY_ERROR[0]['hint']}\n"
        f"kiln: error: {EVERY_ERROR[1]['message']}\n  hint: {EVERY_ERROR[1]['hint']}\n"
        f"kiln: error: {EVERY_ERROR[2]['message']}\n  hint: {EVERY_ERROR[2]['hint']}\n")
    (tmp_path / "t.yaml").write_text(MISTAKES.replace("RandomStrin\n", "RandomString\n")
                                     .replace("lenght", "length").replace("tpye", "type"))
    result = subprocess.run([*kiln_command(), "stack", "validate", "-t", "t.yaml"], **run)
    assert result.returncode == 0, result
    assert result.stderr == f"kiln: warning: {TYPO_FUNCTION}\n"
    assert result.stdout.startswith("Description: No description\nParameters:\n  size:\n")
    assert "Warnings" not in result.stdout


def test_kiln_stack_validate_warns_of_a_get_param_the_template_does_not_declare(
        kiln_server: KilnProcess, tmp_path: Path) -> None:
    """Heat's validate does not resolve values, so a misspelt ``get_param`` passes it and
    fails the create; ``kiln stack validate`` (all_errors) says so beforehand, while the
    API's plain answer stays Heat's."""
    template = HOT + """\
parameters:
  length: {type: number, default: 8}
resources:
  s:
    type: OS::Heat::RandomString
    properties: {length: {get_param: lenght}}
"""
    (tmp_path / "t.yaml").write_text(template)
    run = {"capture_output": True, "text": True, "cwd": tmp_path, "timeout": 120,
           "check": False, "env": {**clean_env(), "NO_COLOR": "1",
                                   "OS_ENDPOINT": kiln_server.endpoint("demo")}}
    result = subprocess.run([*kiln_command(), "stack", "validate", "-t", "t.yaml"], **run)
    assert result.returncode == 0, result
    assert result.stderr == ('kiln: warning: resources.s.properties.length.get_param: '
                             '"lenght" is not a parameter of the template: did you mean '
                             "length?\n")
    heats = httpx.post(f"{kiln_server.endpoint('demo')}/validate", json={"template": template},
                       timeout=HTTP_TIMEOUT)
    assert heats.status_code == 200 and "Warnings" not in heats.json()
    created = subprocess.run([*kiln_command(), "stack", "create", "-t", "t.yaml", "s1"], **run)
    assert created.returncode == 1, created
    assert "The Parameter (lenght) was not provided." in created.stderr


def test_kiln_stack_create_lists_every_error_a_create_meets(kiln_server: KilnProcess,
                                                             tmp_path: Path) -> None:
    """The API's create answers Heat's one error; ``kiln stack create`` prints it first,
    then every other one (values included, as the create checks them), and the warnings."""
    (tmp_path / "t.yaml").write_text(HOT + """\
resources:
  a:
    type: OS::Heat::RandomString
    properties: {length: eighty}
  b:
    type: OS::Heat::ResourceGroup
    properties: {count: two, resource_def: {type: OS::Heat::None}}
  c:
    type: OS::Heat::Value
    properties: {value: {get_parm: x}}
""")
    run = {"capture_output": True, "text": True, "cwd": tmp_path, "timeout": 120,
           "check": False, "env": {**clean_env(), "NO_COLOR": "1",
                                   "OS_ENDPOINT": kiln_server.endpoint("demo")}}
    result = subprocess.run([*kiln_command(), "stack", "create", "-t", "t.yaml", "e1"], **run)
    assert result.returncode == 1, result
    assert result.stderr == (
        'kiln: warning: resources.c.properties.value: {get_parm: "x"} is a map, not a '
        "function: did you mean get_param?\n"
        "kiln: error: Property error: resources.a.properties.length: Value 'eighty' is not "
        "an integer\n"
        "kiln: error: Property error: resources.b.properties.count: Value 'two' is not an "
        "integer\n")
    listed = subprocess.run([*kiln_command(), "stack", "list", "-f", "value", "-c",
                             "stack_name"], **run)
    assert "e1" not in listed.stdout.split()
