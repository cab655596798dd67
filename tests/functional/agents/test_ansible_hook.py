"""heat-agents' ``ansible`` hook through the real chain: a SoftwareConfig of group
``ansible`` is a playbook, run by ``ansible-playbook`` (ansible-core from PyPI) against
``localhost``; its inputs are the playbook's variables and a file written to
``{{ heat_outputs_path }}.NAME`` is the output NAME, as with the script hook.

(heat-agents' ``puppet`` hook is not tested: puppet is not on PyPI.)
"""

from __future__ import annotations

import sys
from typing import Any

from tests.functional.agents.deploying import (
    create,
    outputs,
    server_collector,
    settled,
    wait_deployment,
)
from tests.support.agents import Sandbox, ansible_or_skip

PLAYBOOK = """
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: write the greeting
      copy:
        content: "{{ greeting }} from {{ deploy_server_id }}"
        dest: "{{ heat_outputs_path }}.result"
    - name: fail when asked
      fail:
        msg: "asked to fail"
      when: (should_fail | default('no')) == 'yes'
"""


def _template() -> dict[str, Any]:
    return {
        "heat_template_version": "2018-08-31",
        "parameters": {"greeting": {"type": "string"},
                       "should_fail": {"type": "string", "default": "no"}},
        "resources": {
            "server": {"type": "OS::Heat::DeployedServer",
                       "properties": {"software_config_transport": "POLL_TEMP_URL"}},
            "config": {"type": "OS::Heat::SoftwareConfig", "properties": {
                "group": "ansible", "config": PLAYBOOK,
                "inputs": [{"name": "greeting"}, {"name": "should_fail"}],
                "outputs": [{"name": "result"}]}},
            "deployment": {"type": "OS::Heat::SoftwareDeployment", "properties": {
                "config": {"get_resource": "config"}, "server": {"get_resource": "server"},
                "signal_transport": "TEMP_URL_SIGNAL",
                "input_values": {"greeting": {"get_param": "greeting"},
                                 "should_fail": {"get_param": "should_fail"}}}},
        },
        "outputs": {
            "result": {"value": {"get_attr": ["deployment", "result"]}},
            "stdout": {"value": {"get_attr": ["deployment", "deploy_stdout"]}},
            "status_code": {"value": {"get_attr": ["deployment", "deploy_status_code"]}},
        },
    }


def _with_ansible(box: Sandbox) -> None:
    ansible = ansible_or_skip()
    box.extra_env.update({
        "HEAT_ANSIBLE_CMD": str(ansible / "ansible-playbook"),
        "ANSIBLE_PYTHON_INTERPRETER": sys.executable,
        "ANSIBLE_LOCAL_TEMP": str(box.path / "ansible-tmp"),
        "ANSIBLE_REMOTE_TEMP": str(box.path / "ansible-tmp"),
        "LC_ALL": "C.UTF-8",
    })


def test_a_playbook_deploys_and_its_output_comes_back(hc: Any, box: Sandbox) -> None:
    _with_ansible(box)
    sid = create(hc, "ansible1", _template(), greeting="hallo")
    wait_deployment(hc, sid, "CREATE")
    run = box.run_chain(server_collector(hc, sid))
    assert run.returncode == 0, box.log()
    stack = settled(hc, sid)
    assert stack.stack_status == "CREATE_COMPLETE", (stack.stack_status_reason, box.log())
    server_id = hc.resources.get(sid, "server").physical_resource_id
    out = outputs(hc, sid)
    assert out["result"] == f"hallo from {server_id}"
    assert out["status_code"] == 0
    assert "PLAY RECAP" in out["stdout"]


def test_a_failing_playbook_fails_the_deployment(hc: Any, box: Sandbox) -> None:
    _with_ansible(box)
    sid = create(hc, "ansible-fail", _template(), greeting="x", should_fail="yes")
    wait_deployment(hc, sid, "CREATE")
    assert box.run_chain(server_collector(hc, sid)).returncode == 0, box.log()
    stack = settled(hc, sid)
    assert stack.stack_status == "CREATE_FAILED"
    code = outputs(hc, sid)["status_code"]
    assert code != 0
    assert stack.stack_status_reason.endswith(
        f"Deployment exited with non-zero status code: {code}"), stack.stack_status_reason
    assert "asked to fail" in outputs(hc, sid)["stdout"]
